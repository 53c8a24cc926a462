"""The "Over time" section and ``series`` command's lines: each cell's kept runs, its steps and changed verdicts.

One view for both (the page and the terminal say the same sentences):
``cell_lines`` is what a cell's series says, ``page_view`` the section's
context, ``series_csv`` one row per step found.
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import Any

from ..analysis.series.answers import WHOLE, CellSeries, GateHit, change_text, step_text
from ..analysis.series.steps import MIN_POINTS

MIN_RUNS = 2        # a cell with fewer kept runs has no series to show


def shown(series: Sequence[CellSeries]) -> list[CellSeries]:
    """The series with two kept runs or more."""
    return [s for s in series if len(s.runs) >= MIN_RUNS]


def name_of(s: CellSeries, variant: str) -> str:
    return f"the cell as a whole ({s.normalised})" if variant == WHOLE else variant


FEW_ROUNDS = 1.2       # past a 20% step at the median variant, the cell's line says where more rounds are explained


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


def step_lines(s: CellSeries) -> list[str]:
    """Each step of the series (the whole cell first), then each claim line whose verdict changed."""
    return ([step_text(name_of(s, v.variant), st, s.measured_same(st)) for v in s.stepped for st in v.answer.steps]
            + ["claim line " + change_text(c) for c in s.changes])


def cell_lines(s: CellSeries) -> list[str]:
    """What one cell's series says: its head, each step, each changed claim line."""
    lines = [head_line(s)]
    if not s.stepped and s.whole.answer.status != "insufficient data":
        lines.append("  no step in any variant")
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
        tb["cells"].append({
            "cell": s.cell, "head": head_line(s),
            "steps": [{"text": step_text(name_of(s, v.variant), st, s.measured_same(st)), "kind": st.kind}
                      for v in s.stepped for st in v.answer.steps],
            "changes": [change_text(c) for c in s.changes],
            "points": [{"run": p.run, "when": p.when[:16], "move": f"{math.exp(p.log_mean - centre):.3f}",
                        "ref": _ref_ms(s, p.run)} for p in s.whole.points for centre in [_centre(s)]],
        })
    return {"testbeds": list(testbeds.values())}


def _ref_ms(s: CellSeries, run: str) -> str:
    """The host's reference workload in that run, as the page prints it ("": not timed)."""
    ref = next((r.host_reference_s for r in s.runs if r.run == run), None)
    return f"{ref * 1e3:.1f} ms" if ref else ""


def _centre(s: CellSeries) -> float:
    """The whole cell's median level: its moves are shown against it (1.000: a typical run)."""
    values = sorted(p.log_mean for p in s.whole.points)
    return values[len(values) // 2] if values else 0.0


def series_csv(series: Sequence[CellSeries]) -> str:
    """One row per step found: testbed, cell, variant, kind, run, date, ratio and its interval, runs after it."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["testbed", "cell", "variant", "kind", "run", "when", "ratio", "low", "high", "runs_after"])
    for s in shown(series):
        for v in s.stepped:
            for st in v.answer.steps:
                w.writerow([s.testbed.key, s.cell, v.variant, st.kind, st.run, st.when, f"{st.ratio:.4f}",
                            f"{st.low:.4f}", f"{st.high:.4f}", st.after])
    return out.getvalue()
