"""The report's upgrade view: "what gets slower if I move from cell A to cell B?"

For a chosen pair of cells (``--baseline``/``--candidate`` on ``report``, or
``[report] compare`` in matrix.toml), every variant measured ok in both gets
the time ratio candidate/baseline with its 95% interval and a verdict: the
same numbers ``tfmatrix compare`` gives for two cell files
(``sets.variant_changes``, on ``moderation.judge``; no second
implementation here). Rows are sorted by signed effect size, the largest
slowdown first and the largest speed-up last; variants that ran on one side
only, or failed or were n/a on either, are listed with each side's status and
reason, so an upgrade that breaks a benchmark is as visible as one that slows
it. The Hardware section (``hardware_view``) asks the same question of one
cell on two kinds of hardware, with ``upgrade_view`` per pair. The page's
rows and ``upgrade.csv`` are views (``report.upgrade_view``).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...errors import UserError
from ..cells import CellResult
from ..statistics.words import FASTER, SLOWER, THIN, UNCLEAR

VERDICTS = {SLOWER: "slower after the upgrade", FASTER: "faster after the upgrade", UNCLEAR: UNCLEAR, THIN: THIN}


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
    rows: list[Any]                       # result.VariantChange, largest slowdown first
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
    from .sets import variant_changes

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
