"""The run level: how far a whole cell moves between runs of the same code, from runs the user kept.

Between two runs of the same cells a whole cell can move by more than its
rounds' spread says (a cell 14.8% slower in every slice of one run while the
others moved under 4%): one run a side cannot tell that from a change of
every variant, so ``compare`` takes each cell's common move out and shows it
(``normalise="cell"``). With three or more runs kept, the run level is
measured instead of assumed away: per cell, each kept run's effect (the
median over the cell's variants of how far each one's time sits from its
own median over the kept runs) and their variance on K - 1 degrees of
freedom. A new comparison's cell move is then judged against it: the move
of a difference of two runs has twice that variance.

Pure functions over the kept runs' variant means (``kept.run_means``);
``compare --kept DIR`` reads the runs.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st

from ..statistics.steps import Point, common_move

Key = tuple[str, str]   # (cell, variant id)

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


def cell_moves(runs: Sequence[Mapping[Key, tuple[float, float]]], keys: Sequence[Key]) -> dict[int, float]:
    """Per run (its index) with any of ``keys`` (one cell's variants): the cell's move in it, the median over its
    variants of each one's offset from its own median run (``statistics.steps.common_move``, the one computation
    of a whole cell's move that the series read too)."""
    series = {k: [Point(str(i), f"{i:09d}", run[k][0]) for i, run in enumerate(runs) if k in run] for k in keys}
    return {int(p.run): p.log_mean for p in common_move(series)}


def run_levels(runs: Sequence[Mapping[Key, tuple[float, float]]]) -> dict[str, RunLevel]:
    """Per cell present in every run with enough shared variants, its run level (``runs``: each kept run's
    variant means, ``kept.run_means``, its control left out): each run's effect is the cell's move in it
    (``cell_moves``), over the variants every run measured."""
    by_cell: dict[str, list[set[Key]]] = defaultdict(list)
    for run in runs:
        cells: dict[str, set[Key]] = defaultdict(set)
        for key in run:
            cells[key[0]].add(key)
        for name, keys in cells.items():
            by_cell[name].append(keys)
    out = {}
    for name, per_run in by_cell.items():
        if len(per_run) < MIN_RUNS or len(per_run) != len(runs):
            continue
        shared = sorted(set.intersection(per_run[0], *per_run[1:]))
        if len(shared) < MIN_VARIANTS:
            continue
        moves = cell_moves(runs, shared)
        out[name] = RunLevel(name, tuple(moves[i] for i in range(len(runs))))
    return out
