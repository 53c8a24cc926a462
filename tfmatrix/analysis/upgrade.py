"""The report's upgrade view: "what gets slower if I move from cell A to cell B?"

For a chosen pair of cells (``--baseline``/``--candidate`` on ``report``, or
``[report] compare`` in matrix.toml), every variant measured ok in both gets
the time ratio candidate/baseline with its 95% interval and a verdict: the
same numbers ``tfmatrix compare`` gives for two cell files
(``compare.variant_changes``, on ``analysis.stats.ratio_ci``; no second
implementation here). Rows are sorted by signed effect size, the largest
slowdown first and the largest speed-up last; variants that ran on one side
only, or failed or were n/a on either, are listed with each side's status and
reason, so an upgrade that breaks a benchmark is as visible as one that slows
it. The Hardware section (``hardware_view``) asks the same question of one
cell on two kinds of hardware, with ``upgrade_view`` per pair.
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..errors import UserError
from .cells import CellResult

VERDICTS = {"slower": "slower after the upgrade", "faster": "faster after the upgrade",
            "no clear difference": "no clear difference"}


@dataclass(frozen=True)
class Unpaired:
    """A variant not measured ok in both cells: each side's status ("missing" when it did not run) and reason."""

    id: str
    benchmark: str
    baseline: str
    candidate: str
    baseline_reason: str
    candidate_reason: str


@dataclass
class UpgradeView:
    baseline: str
    candidate: str
    rows: list[Any]                       # compare.VariantChange, largest slowdown first
    unpaired: list[Unpaired] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for r in self.rows:
            out[r.verdict] += 1
        return out

    def line(self) -> str:
        c = self.counts()
        broken = sum(1 for u in self.unpaired if u.baseline == "ok" and u.candidate != "ok")
        return (f"upgrade {self.baseline} -> {self.candidate}: {len(self.rows)} variants in both, {c['slower']} "
                f"slower, {c['faster']} faster, {c['no clear difference']} no clear difference; "
                f"{broken} ok before and not after")


def check_pair(cells: Sequence[CellResult], baseline: str, candidate: str, source: str) -> None:
    """Both cells have results; otherwise a one-line UserError naming ``source`` and the cells that do."""
    have = [c.name for c in cells if c.has_records]
    for role, name in (("baseline", baseline), ("candidate", candidate)):
        if name not in have:
            raise UserError(f"{source}: {role} {name!r} has no results; cells with results: "
                            + (", ".join(have) or "none") + " (run it first, or name another)")
    if baseline == candidate:
        raise UserError(f"{source}: baseline and candidate are both {baseline!r}; name two different cells")


def _effect(change: Any) -> float:
    return math.log(change.ci.ratio) if change.ci.ratio > 0 else 0.0


def _first_line(text: Any) -> str:
    lines = [ln for ln in str(text or "").splitlines() if ln.strip()]
    return lines[0][:300] if lines else ""


def upgrade_view(df: pd.DataFrame, baseline: str, candidate: str) -> UpgradeView:
    """The upgrade view from the report's frame (one row per cell x variant)."""
    from .compare import variant_changes

    changes, _, _ = variant_changes(df, df, [(baseline, candidate)])
    rows = sorted(changes, key=lambda c: (-_effect(c), c.id))
    paired = {c.id for c in changes}
    sides: dict[str, dict[str, Any]] = {}
    for cell in (baseline, candidate):
        for _, r in df[df["cell"] == cell].iterrows() if len(df) else ():
            sides.setdefault(str(r["id"]), {"benchmark": str(r["benchmark"])})[cell] = r
    unpaired = []
    for vid, side in sorted(sides.items()):
        if vid in paired:
            continue
        a, b = side.get(baseline), side.get(candidate)
        unpaired.append(Unpaired(vid, side["benchmark"],
                                 str(a["status"]) if a is not None else "missing",
                                 str(b["status"]) if b is not None else "missing",
                                 _first_line(a["reason"]) if a is not None else "did not run in this cell",
                                 _first_line(b["reason"]) if b is not None else "did not run in this cell"))
    # what broke first (ok before, not after), then what only the candidate can do
    unpaired.sort(key=lambda u: (u.baseline != "ok", u.candidate == "ok", u.benchmark, u.id))
    return UpgradeView(baseline, candidate, rows, unpaired)


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


def to_csv(view: UpgradeView) -> str:
    """``upgrade.csv``: one row per variant, as the page lists them."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["baseline", "candidate", *CSV_COLUMNS])
    for row in to_rows(view):
        w.writerow([view.baseline, view.candidate] + ["" if row[k] is None else
                                                      (f"{row[k]:.6g}" if isinstance(row[k], float) else row[k])
                                                      for k in CSV_COLUMNS])
    return buf.getvalue()


def page_view(view: UpgradeView) -> dict[str, Any]:
    """What the page's Upgrade section shows (texts formatted, classes for the verdict colours)."""
    from ..report.tables import fmt_seconds

    rows = []
    for row in to_rows(view):
        measured = row["ratio"] is not None
        rows.append({**row, "cls": {"slower after the upgrade": "worse", "faster after the upgrade": "better",
                                    "broken by the upgrade": "worse"}.get(row["verdict"], ""),
                     "baseline_text": fmt_seconds(row["baseline_s"]) if measured else row["baseline_status"],
                     "candidate_text": fmt_seconds(row["candidate_s"]) if measured else row["candidate_status"],
                     "ratio_text": f"{row['ratio']:.3f}" if measured else "",
                     "ci_text": f"{row['ci_low']:.3f} – {row['ci_high']:.3f}" if measured else "",
                     "pct_text": _pct(row["ratio"]) if measured else ""})
    return {"baseline": view.baseline, "candidate": view.candidate, "line": view.line(), "rows": rows}


def _pct(ratio: float) -> str:
    """+12% (slower) / −8% (faster): the candidate's time against the baseline's."""
    return f"{(ratio - 1.0) * 100:+.0f}%".replace("-", "−")
