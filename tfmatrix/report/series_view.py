"""The "Over time" section and ``series`` command's lines: each cell's kept runs, its steps and changed verdicts.

One view for both (the page and the terminal say the same sentences):
``cell_lines`` is what a cell's series says, ``page_view`` the section's
context, ``series_csv`` one row per step found, ``values_csv`` one row per
series and run (every variant's time, the cell's move, each claim line's
ratio, with their intervals).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from scipy import special

from ..analysis.series.answers import HOST_STEADY, WHOLE, CellSeries, GateHit, change_text, step_text
from ..analysis.statistics.steps import MIN_POINTS, Point
from ..results.csv_files import csv_text

MIN_RUNS = 2        # a cell with fewer kept runs has no series to show
SHOWN = 4           # the page's table shows this many stepped variants' and changed claim lines' values a run
FEW_ROUNDS = 1.2    # past a 20% step at the median variant, the cell's line says where more rounds are explained


def shown(series: Sequence[CellSeries]) -> list[CellSeries]:
    """The series with two kept runs or more."""
    return [s for s in series if len(s.runs) >= MIN_RUNS]


def name_of(s: CellSeries, variant: str) -> str:
    return f"the cell as a whole ({s.normalised})" if variant == WHOLE else variant


def head_line(s: CellSeries) -> str:
    """ "tf2.15-cpu: 9 kept runs (2026-11-20 .. 2026-11-28), host reference 9.8-14.1 ms; resolves 12%" """
    refs = [r.host_reference_s for r in s.runs if r.host_reference_s]
    ref = f", host reference {min(refs) * 1e3:.1f}-{max(refs) * 1e3:.1f} ms" if refs else ""
    resolves = s.resolves()
    status = s.whole.answer.status
    if status == "insufficient data" or resolves is None:
        what = f"{status}: a step is named from {MIN_POINTS} runs on"
    else:
        what = f"a step of {resolves - 1:.0%} or more stands out at the median variant"
        if resolves > FEW_ROUNDS:
            what += " (more rounds a run resolve smaller steps: --rounds N, docs/series.md)"
    n = len(s.runs)
    dates = f"{s.runs[0].finished[:10]} .. {s.runs[-1].finished[:10]}"
    return f"{s.cell}: {n} kept run{'s' if n != 1 else ''} ({dates}){ref}; {what}"


def _steps(s: CellSeries) -> list[tuple[str, str]]:
    """(text, kind) of each step of the series: the whole cell first, then the variants, then the claim lines'
    ratios."""
    return ([(step_text(name_of(s, v.variant), st, s.measured_same(st)), st.kind)
             for v in s.stepped for st in v.answer.steps]
            + [("claim line " + step_text(v.variant, st, s.measured_same(st), line=True), st.kind)
               for v in s.stepped_lines for st in v.answer.steps])


def step_lines(s: CellSeries) -> list[str]:
    """Each step of the series (the whole cell first), then each claim line whose verdict changed."""
    return [text for text, _ in _steps(s)] + ["claim line " + change_text(c) for c in s.changes]


def cannot_tell_text(s: CellSeries) -> str:
    """ "the cell as a whole: cannot tell: the host moved 54% between these runs ..." ("" where it can tell)."""
    move = s.cannot_tell()
    if move is None:
        return ""
    return (f"the cell as a whole: cannot tell: the host moved {move - 1:.0%} between these runs (a steady day's "
            f"runs here: under {HOST_STEADY - 1:.0%}; without the host's steady-day wander this series resolves a "
            f"whole-cell step of {s.whole.answer.resolves - 1:.0%}): a step of every variant alike is not told apart "
            "from the host's day")


def cell_lines(s: CellSeries) -> list[str]:
    """What one cell's series says: its head, each step, each changed claim line; where the host moved beyond a
    steady day's and no whole-cell step was named, that it cannot tell (never "no step")."""
    lines = [head_line(s)]
    unsure = cannot_tell_text(s)
    if not s.stepped and s.whole.answer.status != "insufficient data":
        lines.append("  " + (unsure + "; no step in any single variant" if unsure else "no step in any variant"))
    elif unsure:
        lines.append("  " + unsure)
    return lines + ["  " + line for line in step_lines(s)]


def gate_lines(offenders: Sequence[GateHit], suspects: Sequence[GateHit]) -> list[str]:
    """The series gate's hits, offenders first ("offender: CELL: <step>"), as ``series`` and ``compare`` print them."""
    return [f"{word}: {h.series.cell}: {step_text(name_of(h.series, h.variant), h.step)}"
            for word, hits in (("offender", offenders), ("suspect", suspects)) for h in hits]


def page_view(series: Sequence[CellSeries]) -> dict[str, Any] | None:
    """The section's context: per testbed, its cells' series (None: no cell has two kept runs)."""
    cells = shown(series)
    if not cells:
        return None
    testbeds: dict[str, dict[str, Any]] = {}
    for s in cells:
        tb = testbeds.setdefault(s.testbed.key, {"key": s.testbed.key, "text": s.testbed.text(), "cells": []})
        variants = [v for v in s.stepped if v.variant != WHOLE][:SHOWN]
        lines = list(dict.fromkeys([*(v.variant for v in s.stepped_lines), *(c.line for c in s.changes)]))[:SHOWN]
        centre = _centre(s)
        tb["cells"].append({
            "cell": s.cell, "head": head_line(s),
            "steps": [{"text": text, "kind": kind} for text, kind in _steps(s)]
            + [{"text": text, "kind": "cannot-tell"} for text in [cannot_tell_text(s)] if text],
            "changes": [change_text(c) for c in s.changes],
            "points": [{"run": p.run, "when": p.when[:16], "move": f"{math.exp(p.log_mean - centre):.3f}",
                        "ref": _ref_ms(s, p.run),
                        "values": [_variant_at(v.points, p.run) for v in variants]
                        + [_line_at(s, line, p.run) for line in lines]}
                       for p in s.whole.points],
            "heads": [v.variant for v in variants] + ["claim line " + line for line in lines],
        })
    return {"testbeds": list(testbeds.values())}


def _variant_at(points: Sequence[Point], run: str) -> str:
    """A variant's time in ``run`` against its cell's move, as a ratio to its median run ("": not measured)."""
    centre = sorted(p.log_mean for p in points)[len(points) // 2] if points else 0.0
    p = next((p for p in points if p.run == run), None)
    return "" if p is None else f"{math.exp(p.log_mean - centre):.3f}"


def _line_at(s: CellSeries, line: str, run: str) -> str:
    """A claim line's ratio and interval in ``run`` ("": no value kept), with its verdict."""
    r = next((r for r in s.runs if r.run == run), None)
    if r is None or line not in r.values:
        return ""
    ratio, low, high, _ = r.values[line]
    ci = f" [{low:.3f}, {high:.3f}]" if math.isfinite(low) and math.isfinite(high) else ""
    return f"{ratio:.3f}{ci} {r.lines.get(line, '')}".strip()


def _ref_ms(s: CellSeries, run: str) -> str:
    """The host's reference workload in that run, as the page prints it ("": not timed)."""
    ref = next((r.host_reference_s for r in s.runs if r.run == run), None)
    return f"{ref * 1e3:.1f} ms" if ref else ""


def _centre(s: CellSeries) -> float:
    """The whole cell's median level: its moves are shown against it (1.000: a typical run)."""
    values = sorted(p.log_mean for p in s.whole.points)
    return values[len(values) // 2] if values else 0.0


def series_csv(series: Sequence[CellSeries]) -> str:
    """One row per step found: testbed, cell, variant (or "claim line K": its ratio stepped), kind, run, date, ratio
    and its interval, runs after it."""
    def rows() -> Iterator[list[Any]]:
        for s in shown(series):
            named = [(v.variant, v) for v in s.stepped] + [("claim line " + v.variant, v) for v in s.stepped_lines]
            for name, v in named:
                for st in v.answer.steps:
                    yield [s.testbed.key, s.cell, name, st.kind, st.run, st.when, f"{st.ratio:.4f}",
                           f"{st.low:.4f}", f"{st.high:.4f}", st.after]

    return csv_text(["testbed", "cell", "variant", "kind", "run", "when", "ratio", "low", "high", "runs_after"],
                    rows())


def values_csv(series: Sequence[CellSeries]) -> str:
    """One row per series and run: each variant's run mean (seconds) with its 95% interval from its rounds (blank:
    one process) and its time against the cell's move (a ratio to its median run), the cell's move against its
    reference, each claim line's ratio with its interval and verdict."""
    def rows() -> Iterator[list[Any]]:
        for s in shown(series):
            offsets = {v.variant: v.points for v in s.variants}
            centre = _centre(s)
            for p in s.whole.points:
                low, high = _interval(p.log_mean - centre, p.var, math.inf)
                yield [s.testbed.key, s.cell, "cell", WHOLE, p.run, p.when, f"{math.exp(p.log_mean - centre):.4f}",
                       low, high, "relative", "", "", _ref_ms(s, p.run).removesuffix(" ms")]
            for r in s.runs:
                ref = _ref_ms(s, r.run).removesuffix(" ms")
                for vid, (mean, var) in sorted(r.means.items()):
                    if vid not in offsets or not math.isfinite(mean):
                        continue
                    low, high = _interval(mean, var, r.rounds.get(vid, 0) - 1)
                    yield [s.testbed.key, s.cell, "variant", vid, r.run, r.finished, f"{math.exp(mean):.6g}", low,
                           high, "s", _variant_at(offsets[vid], r.run), "", ref]
                for line, (ratio, lo, hi, _) in sorted(r.values.items()):
                    yield [s.testbed.key, s.cell, "claim line", line, r.run, r.finished, f"{ratio:.4f}",
                           f"{lo:.4f}" if math.isfinite(lo) else "", f"{hi:.4f}" if math.isfinite(hi) else "",
                           "ratio", "", r.lines.get(line, ""), ref]

    return csv_text(["testbed", "cell", "kind", "series", "run", "when", "value", "low", "high", "unit",
                     "against_move", "verdict", "host_reference_ms"], rows())


def _interval(log_value: float, var: float, df: float) -> tuple[str, str]:
    """A log mean's 95% interval (a t on ``df`` degrees of freedom: a run's rounds less one; inf, a median over many
    variants) as two numbers ("", "": its variance unknown: one process, or a file kept before rounds were)."""
    if not math.isfinite(var) or df < 1:
        return "", ""
    half = float(special.stdtrit(df, 0.975)) * math.sqrt(var)
    return f"{math.exp(log_value - half):.6g}", f"{math.exp(log_value + half):.6g}"
