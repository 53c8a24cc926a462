"""The run level: how far a whole cell moves between runs of the same code, from runs the user kept.

Between two runs of the same cells a whole cell can move by more than its
rounds' spread says (a cell 14.8% slower in every slice of one run while the
others moved under 4%): one run a side cannot tell that from a change of
every variant, so ``compare`` takes each cell's common move out and shows it
(``normalise="cell"``). With three or more runs kept, the run level is
measured instead of assumed away: per cell, each kept run's effect (the
median over the cell's variants of how far each one's time sits from its
own mean over the kept runs) and their variance on K - 1 degrees of
freedom. A new comparison's cell move is then judged against it: the move
of a difference of two runs has twice that variance.

Pure functions over loaded cells; ``compare --kept DIR`` reads the runs.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st

from ..cells import CellResult
from ..statistics.stats import estimate

MIN_RUNS = 3            # kept runs needed to estimate a run level (2 degrees of freedom)
MIN_VARIANTS = 10       # variants a cell needs in every kept run for its effect to be a median of something


@dataclass(frozen=True)
class RunLevel:
    """One cell's run-to-run spread: each kept run's effect (log), and what they say about a new move."""

    cell: str
    effects: tuple[float, ...]

    @property
    def runs(self) -> int:
        return len(self.effects)

    @property
    def sd(self) -> float:
        """The SD of a run's effect (log): how far one run of this cell sits from another's mean."""
        return float(np.std(self.effects, ddof=1)) if self.runs >= 2 else math.nan

    def beyond(self, move: float, alpha: float = 0.05) -> bool:
        """Is a move of ``move`` (B/A of two runs) more than this cell's runs wander (a two-sided test)?"""
        if not (self.runs >= MIN_RUNS and self.sd > 0 and move > 0):
            return False
        t = abs(math.log(move)) / (self.sd * math.sqrt(2.0))
        return bool(t > st.t.ppf(1 - alpha / 2, self.runs - 1))

    def text(self, move: float) -> str:
        verdict = "beyond it" if self.beyond(move) else "within it"
        return f"run-to-run SD of a run {self.sd:.1%} over {self.runs} kept runs: {verdict}"


def _times(cell: CellResult) -> dict[str, float]:
    out = {}
    for v in cell.variants:
        if v.ok and v.samples and v.id:
            t = estimate([float(x) for x in v.samples])
            if t > 0:
                out[str(v.id)] = math.log(t)
    return out


def run_levels(runs: Sequence[Sequence[CellResult]]) -> dict[str, RunLevel]:
    """Per cell present in every run with enough shared variants, its run level (``runs``: each kept run's cells)."""
    by_cell: dict[str, list[dict[str, float]]] = defaultdict(list)
    for cells in runs:
        for cell in cells:
            by_cell[cell.name].append(_times(cell))
    out = {}
    for name, times in by_cell.items():
        if len(times) < MIN_RUNS or len(times) != len(runs):
            continue
        shared = set.intersection(*(set(t) for t in times))
        if len(shared) < MIN_VARIANTS:
            continue
        means = {vid: float(np.mean([t[vid] for t in times])) for vid in shared}
        effects = tuple(float(np.median([t[vid] - means[vid] for vid in shared])) for t in times)
        out[name] = RunLevel(name, effects)
    return out
