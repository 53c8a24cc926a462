"""``tfmatrix compare`` as it is shown: the terminal table's rows, ``--csv`` and ``--html``.

The numbers are ``analysis.compare.sets``'s (``CompareResult``); this module only
formats them.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from html import escape as esc

from ..analysis.compare.result import CompareResult
from .tables import fmt_interval

CSV_COLUMNS = ["cell_a", "cell_b", "id", "benchmark", "time_a", "time_b", "ratio", "ci_low", "ci_high",
               "deviation", "noise", "verdict", "pooled_p10_a", "pooled_p10_b"]


def compare_csv(result: CompareResult) -> str:
    """``compare --csv``: one row per variant measured on both sides.

    ``time_a``/``time_b``: the geometric mean of the per-round 10th
    percentiles, the numbers the ratio is made of; ``pooled_p10_*``: the 10th
    percentile of all samples pooled, labelled as such.
    """
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for v in result.variants:
        w.writerow([v.cell_a, v.cell_b, v.id, v.benchmark, f"{v.time_a:.9g}", f"{v.time_b:.9g}",
                    f"{v.ci.ratio:.6g}", f"{v.ci.low:.6g}", f"{v.ci.high:.6g}", f"{v.deviation:.6g}",
                    f"{v.noise:.6g}", v.verdict, f"{v.pooled[0]:.9g}", f"{v.pooled[1]:.9g}"])
    return out.getvalue()


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

    rev = [[c.finding, c.group, c.config, f"{c.ratio_a:.3g}", f"{c.ratio_b:.3g}"] for c in result.reversed]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>tfmatrix compare</title><style>",
        "body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style></head><body>",
        "<h1>tfmatrix compare</h1><ul>" + "".join(f"<li>{esc(x)}</li>" for x in result.summary_lines()) + "</ul>",
        "<h2>Comparisons reversed between the two sides</h2>"
        + (table(["finding", "cell", "configuration", "ratio A", "ratio B"], rev) if rev else "<p>None.</p>"),
        "<h2>Every variant, largest change first</h2>",
        table(["cell", "variant", "A", "B", "B/A", "95% CI", "verdict"], table_rows(result)),
        "</body></html>\n",
    ]
    return "".join(parts)
