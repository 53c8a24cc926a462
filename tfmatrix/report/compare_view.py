"""``tfmatrix compare`` as it is shown: the terminal table's rows, ``--csv`` and ``--html``; ``ab``'s ``--csv`` and
``--json`` (``ab_rows``: compare's columns and each case's order test).

The numbers are ``analysis.compare.sets``'s (``CompareResult``); this module only
formats them.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from html import escape as esc
from typing import Any

from ..analysis.compare.result import CompareResult, VariantChange
from ..analysis.statistics.words import THIN, UNCLEAR
from ..results.csv_files import csv_text
from .tables import fmt_interval

CSV_COLUMNS = ["cell_a", "cell_b", "id", "benchmark", "time_a", "time_b", "ratio", "ci_low", "ci_high",
               "deviation", "noise", "verdict", "pooled_p10_a", "pooled_p10_b"]


def compare_csv(result: CompareResult) -> str:
    """``compare --csv``: one row per variant measured on both sides.

    ``time_a``/``time_b``: the geometric mean of the per-round 10th
    percentiles, the numbers the ratio is made of; ``pooled_p10_*``: the 10th
    percentile of all samples pooled, labelled as such.
    """
    return csv_text(CSV_COLUMNS, ([v.cell_a, v.cell_b, v.id, v.benchmark, f"{v.time_a:.9g}", f"{v.time_b:.9g}",
                                   f"{v.ci.ratio:.6g}", f"{v.ci.low:.6g}", f"{v.ci.high:.6g}", f"{v.deviation:.6g}",
                                   f"{v.noise:.6g}", v.verdict, f"{v.pooled[0]:.9g}", f"{v.pooled[1]:.9g}"]
                                  for v in result.variants))


def table_rows(result: CompareResult, limit: int | None = None) -> list[list[str]]:
    """Terminal rows, largest change first: what a reader wants to see first."""
    rows = sorted(result.variants, key=lambda v: -v.deviation)
    out = []
    for v in rows[:limit] if limit else rows:
        cell = v.cell_a if v.cell_a == v.cell_b else f"{v.cell_a} -> {v.cell_b}"
        out.append([cell, v.id, _fmt_s(v.time_a), _fmt_s(v.time_b), f"{v.ci.ratio:.3f}",
                    fmt_interval(v.ci, "-", ".3f"), v.verdict])
    return out


def _fmt_s(s: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def compare_html(result: CompareResult) -> str:
    """``compare --html``: a self-contained page (no network): the summary lines, reversed comparisons, then every
    variant."""
    def table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
        body = "".join("<tr>" + "".join(f"<td>{esc(x)}</td>" for x in r) + "</tr>" for r in rows)
        return ("<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>"
                + body + "</tbody></table>")

    rev = [[c.question, c.group, c.config, f"{c.ratio_a:.3g}", f"{c.ratio_b:.3g}"] for c in result.reversed]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>tfmatrix compare</title><style>",
        "body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style></head><body>",
        "<h1>tfmatrix compare</h1><ul>" + "".join(f"<li>{esc(x)}</li>" for x in result.summary_lines()) + "</ul>",
        "<h2>Comparisons reversed between the two sides</h2>"
        + (table(["question", "cell", "configuration", "ratio A", "ratio B"], rev) if rev else "<p>None.</p>"),
        "<h2>Every variant, largest change first</h2>",
        table(["cell", "variant", "A", "B", "B/A", "95% CI", "verdict"], table_rows(result)),
        "</body></html>\n",
    ]
    return "".join(parts)


AB_COLUMNS = [*CSV_COLUMNS, "rounds", "base_first", "head_first", "ratio_base_first", "ratio_head_first", "order_p",
              "why"]


def ab_rows(result: CompareResult) -> list[dict[str, Any]]:
    """``ab``'s rows: compare's columns, then the case's rounds, how many had each side first and its ratio in them,
    the order test's p (None: not testable) and why its verdict is what it is (an order-dependent or unclear case;
    "" for a clear one)."""
    def number(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    def why(v: VariantChange) -> str:
        if v.order_dependent and v.order is not None:
            return v.order.why
        return v.ci.why_unclear if v.verdict in (UNCLEAR, THIN) else ""

    rows = []
    for v in result.variants:
        test = v.order
        firsts = test.firsts if test is not None else (None, None)
        means = test.means if test is not None else (math.nan, math.nan)
        values = [v.cell_a, v.cell_b, v.id, v.benchmark, number(v.time_a), number(v.time_b), number(v.ci.ratio),
                  number(v.ci.low), number(v.ci.high), number(v.deviation), number(v.noise), v.verdict,
                  number(v.pooled[0]), number(v.pooled[1]),
                  v.ci.rounds, *firsts, *(number(math.exp(m)) for m in means),
                  number(test.p) if test is not None else None, why(v)]
        rows.append(dict(zip(AB_COLUMNS, values, strict=True)))
    return rows


def ab_csv(result: CompareResult) -> str:
    """``ab --csv``: one row per case (``ab_rows``; an empty cell where a number is unknown)."""
    return csv_text(AB_COLUMNS, ([f"{x:.9g}" if isinstance(x, float) else x for x in row.values()]
                                 for row in ab_rows(result)))


def ab_json(result: CompareResult, summary: Sequence[str]) -> str:
    """``ab --json``: the two sides, the level each case was judged at, the ``summary`` lines and every case's row
    (``ab_rows``; null where a number is unknown)."""
    from ..analysis.compare.order import ORDER_ALPHA

    doc = {"base": result.label_a, "head": result.label_b, "alpha": result.alpha, "order_alpha": ORDER_ALPHA,
           "summary": list(summary), "variants": ab_rows(result)}
    return json.dumps(doc, indent=1) + "\n"
