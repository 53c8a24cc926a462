"""The report's Upgrade section and ``upgrade.csv``: the upgrade view (``analysis.compare.upgrade``) as rows and texts.

Paired variants first (largest slowdown first), then those measured ok on
one side only, each with its verdict in words ("broken by the upgrade").
"""
from __future__ import annotations

from typing import Any

from ..analysis.compare.upgrade import VERDICTS, UpgradeView
from ..results.csv_files import csv_text
from .tables import fmt_change, fmt_seconds


def to_rows(view: UpgradeView) -> list[dict[str, Any]]:
    """Rows for the page and ``upgrade.csv``: paired variants first (sorted), then the unpaired ones."""
    out = []
    for c in view.rows:
        out.append({"benchmark": c.benchmark, "id": c.id, "baseline_s": c.time_a, "candidate_s": c.time_b,
                    "ratio": c.ci.ratio, "ci_low": c.ci.low, "ci_high": c.ci.high, "noise": c.noise,
                    "rounds": c.ci.rounds or None, "verdict": VERDICTS[c.verdict], "baseline_status": "ok",
                    "candidate_status": "ok", "reason": ""})
    for u in view.unpaired:
        why = "; ".join(f"{cell}: {status}" + (f" ({reason})" if reason else "")
                        for cell, status, reason in ((view.baseline, u.baseline, u.baseline_reason),
                                                     (view.candidate, u.candidate, u.candidate_reason))
                        if status != "ok")
        out.append({"benchmark": u.benchmark, "id": u.id, "baseline_s": None, "candidate_s": None, "ratio": None,
                    "ci_low": None, "ci_high": None, "noise": None, "rounds": None,
                    "verdict": "broken by the upgrade" if u.baseline == "ok" else
                    ("new in the candidate" if u.candidate == "ok" else "not measured in either"),
                    "baseline_status": u.baseline, "candidate_status": u.candidate, "reason": why})
    return out


CSV_COLUMNS = ["benchmark", "id", "baseline_s", "candidate_s", "ratio", "ci_low", "ci_high", "noise", "rounds",
               "verdict", "baseline_status", "candidate_status", "reason"]


def upgrade_csv(view: UpgradeView) -> str:
    """``upgrade.csv``: one row per variant, as the page lists them."""
    return csv_text(["baseline", "candidate", *CSV_COLUMNS],
                    ([view.baseline, view.candidate] + [f"{row[k]:.6g}" if isinstance(row[k], float) else row[k]
                                                        for k in CSV_COLUMNS] for row in to_rows(view)))


def page_view(view: UpgradeView) -> dict[str, Any]:
    """What the page's Upgrade section shows (texts formatted, classes for the verdict colours)."""
    rows = []
    for row in to_rows(view):
        measured = row["ratio"] is not None
        rows.append({**row, "cls": {"slower after the upgrade": "worse", "faster after the upgrade": "better",
                                    "broken by the upgrade": "worse"}.get(row["verdict"], ""),
                     "baseline_text": fmt_seconds(row["baseline_s"]) if measured else row["baseline_status"],
                     "candidate_text": fmt_seconds(row["candidate_s"]) if measured else row["candidate_status"],
                     "ratio_text": f"{row['ratio']:.3f}" if measured else "",
                     "ci_text": f"{row['ci_low']:.3f} – {row['ci_high']:.3f}" if measured else "",
                     "pct_text": fmt_change(row["ratio"]) if measured else ""})
    return {"baseline": view.baseline, "candidate": view.candidate, "line": view.line(), "rows": rows}

