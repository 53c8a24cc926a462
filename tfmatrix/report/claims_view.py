"""The claims as the page shows them, and as ``claims.csv`` / ``claims.json`` rows (the same rows).

Pure functions from ``ClaimResult`` records to dicts: the template renders
the views, ``rows`` feeds both files. Every number comes from the claim's
``Comparison`` (its ratio and interval); nothing is recomputed here. A question
(``Claim.is_question``) shows each cell's count of lines per verdict and
their median ratio, its lines folded beneath.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping
from statistics import median
from typing import Any

from markupsafe import Markup

from ..analysis.break_even import break_even
from ..analysis.claims.answers import (
    A_FASTER,
    B_FASTER,
    CANNOT,
    HOLDS,
    NOT_MEASURED,
    REVERSED,
    VERDICTS,
    ClaimCell,
    ClaimLine,
    ClaimResult,
)
from ..analysis.claims.records import SEEDS, web_link
from ..analysis.statistics.words import THIN, UNCLEAR
from ..analysis.stopping import LOOKS, MAX_ROUNDS
from ..results.csv_files import csv_text
from .charts import SparkPoint, sparkline
from .tables import fmt_interval, fmt_seconds, row_anchor

CLAIMS_SCHEMA, CLAIMS_SCHEMA_VERSION = "tfmatrix.claims", 1
VERDICT_CLASS = {HOLDS: "holds", REVERSED: "reversed", A_FASTER: "a-faster", B_FASTER: "b-faster", UNCLEAR: "unclear",
                 THIN: "unclear", CANNOT: "cannot", NOT_MEASURED: "unmeasured"}
ROW_COLUMNS = ("claim", "seed", "claim_text", "seed_figure", "seed_setup", "seed_size", "seed_device", "rule",
               "target", "cell", "ref_cell", "seed_cell", "configuration", "a", "b", "a_id", "b_id", "size",
               "standin", "time_a_s", "time_b_s", "ratio", "ci_low", "ci_high", "verdict", "reason", "unstable",
               "rounds", "stopped")


def _config_dict(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split(", ") if "=" in part)


def varying_keys(result: ClaimResult) -> list[str]:
    """Shared parameters whose values differ between the claim's lines (the rest is the same everywhere)."""
    configs = [_config_dict(line.comparison.config) for c in result.cells for line in c.lines]
    keys: list[str] = []
    for cfg in configs:
        keys += [k for k in cfg if k not in keys]
    return [k for k in keys if len({cfg.get(k) for cfg in configs}) > 1]


def line_label(line: ClaimLine, varying: list[str]) -> str:
    cfg = _config_dict(line.comparison.config)
    parts = [f"{k}={cfg[k]}" for k in varying if k in cfg]
    parts += [p for p in (line.comparison.a_detail, line.comparison.b_detail) if p]
    return ", ".join(parts)


def ratio_words(line: ClaimLine, a: str) -> str:
    ci = line.comparison.ci
    if ci.ratio < 1:
        return f"{a} {1 / ci.ratio:.3g}× faster"
    return f"{a} {ci.ratio:.3g}× slower"


def _pairs(text: str) -> dict[str, str]:
    """``"model=small, batch_shape=32x400x16"`` -> its key=value pairs (words without ``=`` dropped)."""
    return dict(p.strip().split("=", 1) for p in text.split(",") if "=" in p)


def below_seed_size(measured: str, seed: str) -> bool:
    """The measured size differs from the seed's in a size both name, or runs a narrowed model (width < 1).

    The default preset runs a few claims below the seed's size (``tests/test_seed_preset.py: REDUCED``);
    the Claims row marks those lines so that a reader does not take them for the seed's setup.
    """
    mine, theirs = _pairs(measured), _pairs(seed)
    if any(mine[k] != theirs[k] for k in mine.keys() & theirs.keys()):
        return True
    try:
        return float(mine.get("width", "1")) < 1.0
    except ValueError:
        return False


def overhead_words(result: ClaimResult, line: ClaimLine) -> str:
    """A per-call cost claim's line in time: "predict() costs 1.71 ms more per call than model(x)" ("" for others)."""
    if not result.claim.overhead:
        return ""
    c = line.comparison
    more = c.time_a - c.time_b
    side, other = (result.claim.a, result.claim.b) if more >= 0 else (result.claim.b, result.claim.a)
    return f"{side} costs {fmt_seconds(abs(more))} more per call than {other}"


def traces_text(extra: Mapping[str, Any]) -> str:
    """A tracing variant's count (``graphs.tracing``: ``extra.traces`` in ``extra.calls``), the direct answer to
    "does a new Python value retrace?" where a compile per call swamps the time: "23 traces in 23 calls (one per
    call)" ("" without counts)."""
    traces, calls = extra.get("traces"), extra.get("calls")
    if not isinstance(traces, int) or not isinstance(calls, int) or not calls:
        return ""
    each = " (one per call)" if traces == calls and calls > 1 else ""
    return f"{traces:,} trace{'s' if traces != 1 else ''} in {calls:,} calls{each}"


def figures_words(line: ClaimLine) -> str:
    """What each side measured beside its samples (``Variant.figures``: a fresh process's compile time, a training
    loop's drift, with units; a tracing variant's count of traces): "A: drift_pct_per_100_steps 0.4 %/100 steps,
    rss_growth_mib 1.2 MiB" ("" for none)."""
    c = line.comparison
    parts = []
    for side, cell, vid in (("A", c.cell_a, c.a_id), ("B", c.cell_b, c.b_id)):
        found = cell.variant(vid)
        if found is None:
            continue
        said = [f"{name} {fig.text()}" for name, fig in found.figures.items()] + [traces_text(found.extra)]
        if any(said):
            parts.append(f"{side}: " + ", ".join(p for p in said if p))
    return "; ".join(parts)


def pays_words(result: ClaimResult, line: ClaimLine) -> str:
    """Where the side decided faster per call has the dearer first call (a compile, a first GPU call): after how
    many calls it pays (``analysis.break_even``); "" elsewhere."""
    if line.verdict not in (HOLDS, REVERSED, A_FASTER, B_FASTER):
        return ""
    c = line.comparison
    a, b = c.cell_a.variant(c.a_id), c.cell_b.variant(c.b_id)
    if a is None or b is None:
        return ""
    a_faster = c.time_a < c.time_b
    fast, slow = (a, b) if a_faster else (b, a)
    found = break_even(fast, slow, min(c.time_a, c.time_b), max(c.time_a, c.time_b))
    return found.text("A" if a_faster else "B") if found else ""


def line_view(result: ClaimResult, line: ClaimLine, varying: list[str], why: str = "") -> dict[str, Any]:
    c, ci = line.comparison, line.comparison.ci
    return {
        "why_href": "#" + why if why else "",
        "label": line_label(line, varying),
        "size": line.size,
        "below_seed_size": below_seed_size(line.size, result.claim.seed_size),
        "ratio": f"{ci.ratio:.3g}",
        "ci": fmt_interval(ci),
        "rounds": "; ".join(p for p in (f"paired over {ci.rounds} rounds" if ci.rounds else "", line.stopped,
                                        f"previous run: {ci.rerun:.3g}" if ci.rerun is not None else "") if p),
        "words": ratio_words(line, result.claim.a),
        "overhead": overhead_words(result, line),
        "figures": "; ".join(p for p in (figures_words(line), pays_words(result, line)) if p),
        "times": f"{fmt_seconds(c.time_a)} vs {fmt_seconds(c.time_b)}",
        "verdict": line.verdict,
        "verdict_class": VERDICT_CLASS[line.verdict],
        "a_href": "#" + row_anchor(c.a_id),
        "b_href": "#" + row_anchor(c.b_id),
        "standin": line.standin,
        "unstable": c.unstable,
    }


def sequential_note(results: list[ClaimResult]) -> str:
    """What a sequential run's Claims rest on, in one sentence ("" for a run of fixed rounds)."""
    lines = [line for r in results for c in r.cells for line in c.lines]
    if not any(line.stopped for line in lines):
        return ""
    level = lines[0].comparison.ci.confidence
    return (f"Sequential rounds (rounds = \"auto\"): after each look every line was decided, shown within 10% of 1, or "
            f"run again, up to {MAX_ROUNDS} rounds; a line is looked at up to {LOOKS} times, so each look (and "
            f"the verdict here) tests at {(1 - level) * 100:.2g}%, the 5% divided by the looks, and the intervals "
            f"are {level * 100:.3g}% intervals. Each line says how many rounds it rests on and why it stopped.")


def why_anchor(claim: str, cell: str, line: int) -> str:
    """The id of a claim line's "why" panel (``why_view``), when its two sides were profiled."""
    return f"why-{claim}-{cell}-{line}"


def question_summary(result: ClaimResult, cell: ClaimCell) -> str:
    """A question's answer in one cell, over its configurations: "graph faster in 3, eager faster in 5, no clear
    difference in 4 (of 12); median time ratio A/B 0.91 (range 0.52-1.8)".

    Where the sides differ in what the question is about (``stage=compiled``
    and ``stage=train_built``, ``model(x)`` and ``model(x, training=False)``,
    or its compares' benchmarks), each gets its own median: one median over
    both would hide either.
    """
    counts = Counter(line.verdict for line in cell.lines)
    ratios = sorted(line.comparison.ci.ratio for line in cell.lines)
    a, b = result.claim.a, result.claim.b
    clear = counts[A_FASTER] + counts[B_FASTER]
    head = (f"{a} faster in {counts[A_FASTER]}, {b} faster in {counts[B_FASTER]}, no clear difference in "
            f"{len(ratios) - clear} (of {len(ratios)}); ")
    multi = len(result.claim.setups) > 1

    def side(line: ClaimLine) -> str:
        c = line.comparison
        return ", ".join(([c.benchmark] if multi else []) + [p for p in (c.a_detail, c.b_detail) if p])
    sides = list(dict.fromkeys(side(line) for line in cell.lines))
    if len(sides) <= 1:
        text = head + f"median time ratio A/B {median(ratios):.3g} (range {ratios[0]:.3g}–{ratios[-1]:.3g})"
    else:
        text = head + "median time ratio A/B per side: " + "; ".join(
            f"[{k}] {median([ln.comparison.ci.ratio for ln in cell.lines if side(ln) == k]):.3g} "
            f"({sum(1 for ln in cell.lines if side(ln) == k)})" for k in sides)
    return text + (f"; {cell.unpaired}" if cell.unpaired else "")


def cell_view(result: ClaimResult, cell: ClaimCell, varying: list[str], whys: Collection[str] = ()) -> dict[str, Any]:
    anchors = [why_anchor(result.claim.key, cell.name, n) for n in range(len(cell.lines))]
    return {
        "name": cell.name,
        "target": cell.target,
        "seed_cell": cell.seed_cell,
        "summary": question_summary(result, cell) if result.claim.is_question and cell.lines else "",
        "lines": [line_view(result, line, varying, a if a in whys else "")
                  for line, a in zip(cell.lines, anchors, strict=True)],
        "reason": cell.reason,
    }


def trend_svgs(result: ClaimResult, varying: list[str]) -> list[dict[str, Any]]:
    """One sparkline per target: each configuration's ratio across the cells, in TF order."""
    out = []
    for target in result.measured_targets:
        here = [c for c in result.cells if c.target == target]
        xs = [c.cell.name for c in here]
        series: dict[str, list[SparkPoint]] = {}
        for i, c in enumerate(here):
            for line in c.lines:
                ci = line.comparison.ci
                label = line_label(line, varying)
                tip = (f"{c.name}{': ' + label if label else ''}: time ratio {ci.ratio:.3g} "
                       f"({ci.confidence * 100:.3g}% CI {fmt_interval(ci)}), {line.verdict}")
                series.setdefault(label + line.standin, []).append(SparkPoint(i, ci.ratio, line.verdict, tip))
        title = f"{result.claim.key} {target.upper()}"
        out.append({"target": target, "svg": Markup(sparkline(title, xs, list(series.values())))})
    return out


def tally(result: ClaimResult) -> str:
    """"holds 3, reversed 1, no clear difference 2, cannot exist here 4": lines and cells, never a median."""
    counts = Counter(line.verdict for c in result.cells for line in c.lines)
    counts.update(c.empty_verdict for c in result.cells if not c.lines)
    return ", ".join(f"{v} {counts[v]}" for v in VERDICTS if counts[v])


def folded(result: ClaimResult) -> list[dict[str, Any]]:
    """The cells without a line, one line per kind ("cannot exist in 7 cells: ..."), the reasons most common first.

    Listing each such cell on its own line made every claim a screen tall; the per-cell reasons stay on hover.
    """
    out = []
    for kind in (CANNOT, NOT_MEASURED):
        mine = [c for c in result.headline() if not c.lines and c.empty_verdict == kind]
        if not mine:
            continue
        reasons = Counter(c.reason for c in mine)
        text = "; ".join(r if len(reasons) == 1 else f"{r} ({n})" for r, n in reasons.most_common(2))
        if len(reasons) > 2:
            text += f"; and {len(reasons) - 2} more reasons"
        out.append({"verdict": kind, "verdict_class": VERDICT_CLASS[kind], "n": len(mine),
                    "cells": ", ".join(c.name for c in mine), "text": text,
                    "title": "\n".join(f"{c.name}: {c.reason}" for c in mine)})
    return out


def claim_view(result: ClaimResult, whys: Collection[str] = (), family_head: str = "") -> dict[str, Any]:
    """One claim as the page shows it; ``whys``: the ids of the why panels the page has (a line links to its own);
    ``family_head``: the heading of the family it opens (``grid.family_heads``)."""
    claim = result.claim
    varying = varying_keys(result)
    return {
        "key": claim.key,
        "anchor": "claim-" + claim.key,
        "seed": claim.seed,
        "origin": claim.origin,
        "url": claim.source_url if web_link(claim.source_url) else "",     # only a web page is ever a link
        "whose": "seed" if claim.family == SEEDS else "source",
        "family_head": family_head,
        "claim": claim.claim,
        "a": claim.a,
        "b": claim.b,
        "seed_figure": claim.seed_figure,
        "seed_setup": claim.seed_setup,
        "seed_size": claim.seed_size,
        "rule": claim.rule(),
        "question": claim.question,
        "is_question": claim.is_question,
        "cells": [cell_view(result, c, varying, whys) for c in result.headline() if c.lines],
        "folded": folded(result),
        "trends": [] if claim.is_question else trend_svgs(result, varying),
        "tally": tally(result),
        "notes": result.notes,
    }


def rows(results: list[ClaimResult]) -> list[dict[str, Any]]:
    """``claims.csv`` / ``claims.json``: one row per claim x cell x configuration, or per cell without one."""
    out: list[dict[str, Any]] = []
    for result in results:
        claim = result.claim
        base = {"claim": claim.key, "seed": claim.seed, "claim_text": claim.claim, "seed_figure": claim.seed_figure,
                "seed_setup": claim.seed_setup, "seed_size": claim.seed_size, "seed_device": claim.seed_device,
                "rule": claim.rule(), "a": claim.a, "b": claim.b}
        if not result.cells:            # not one cell could hold it (no reference cell, no cell ran)
            out.append(_row(dict(base, verdict=CANNOT, reason=" ".join(result.notes) or "no cell ran")))
        for cell in result.headline():
            where = dict(base, target=cell.target, cell=cell.cell.name, ref_cell=cell.ref.name if cell.ref else "",
                         seed_cell=cell.seed_cell)
            if not cell.lines:
                out.append(_row(dict(where, verdict=cell.empty_verdict, reason=cell.reason)))
            for line in cell.lines:
                c, ci = line.comparison, line.comparison.ci
                out.append(_row(dict(where, configuration=c.config, a=_side(claim.a, c.a_detail),
                                     b=_side(claim.b, c.b_detail), a_id=c.a_id, b_id=c.b_id, size=line.size,
                                     standin=line.standin, time_a_s=c.time_a, time_b_s=c.time_b,
                                     ratio=ci.ratio, ci_low=ci.low if ci.replicated else None,
                                     ci_high=ci.high if ci.replicated else None, verdict=line.verdict,
                                     unstable=c.unstable, rounds=ci.rounds or "", stopped=line.stopped)))
    return out


def _side(label: str, detail: str) -> str:
    return f"{label} [{detail}]" if detail else label


def _row(values: dict[str, Any]) -> dict[str, Any]:
    return {k: values.get(k, "") for k in ROW_COLUMNS}


def claims_csv(table: list[dict[str, Any]]) -> str:
    """``claims.csv``: ``rows`` (every row has every column, ``_row``), a float with nine digits."""
    return csv_text(ROW_COLUMNS, ([f"{row[k]:.9g}" if isinstance(row[k], float) else row[k] for k in ROW_COLUMNS]
                                  for row in table))


def claims_json(table: list[dict[str, Any]]) -> str:
    doc = {"schema": CLAIMS_SCHEMA, "schema_version": CLAIMS_SCHEMA_VERSION, "columns": list(ROW_COLUMNS),
           "rows": [{k: (None if v == "" else v) for k, v in row.items()} for row in table]}
    return json.dumps(doc, indent=1) + "\n"
