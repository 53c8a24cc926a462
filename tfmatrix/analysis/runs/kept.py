"""Each variant's own noise from runs the user kept: a per-variant prior for a new comparison's variances.

Three rounds a side give a variant's variance two degrees of freedom of its
own. Moderating it across its family (``moderation.moderate``) helps little
on a host whose variants differ in noise (per-round SDs 11% at the median,
22% at the 90th percentile): the family's prior is weak. The variant's own
rounds in earlier runs of the same cells are a prior that fits it: per
(cell, variant), the pooled variance of one round's log time over the kept
runs (each run's processes' shared effects taken out first), on the sum of
their degrees of freedom. ``compare --kept DIR`` (DIR: earlier runs, not A
or B) gives it to every comparison it covers, through the same path as a
stored noise model (``moderation.with_noise_model``).

The rounds of one run cannot see how far the run as a whole puts a variant
off: on this host some variants move between runs by more than their rounds
wander (real back-to-back pairs: 5-9% of unchanged variants called different
at the 5% test, the same variants again and again). ``run_spread`` measures
that wander per variant over the kept runs (each run's common move per cell
taken out first, its rounds' own share subtracted), and ``compare`` adds it
to every run-against-run contrast it covers.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..cells import CellResult
from ..frame import build_frame, row_side
from ..statistics.inference import Side
from ..statistics.moderation import Prior, fit_prior, remove_process_effects, robust_d0, summed
from .control import reference_side
from .noise_model import CONTROL, NoiseHistory, NoiseModel, prior, run_mean
from .run_level import cell_moves

SOURCE = "kept runs"
MIN_SPREAD_RUNS = 2     # kept runs needed for a variant's run-to-run wander (one degree of freedom)

Key = tuple[str, str]   # (cell, variant id)


@dataclass(frozen=True)
class RunSpread:
    """Per (cell, variant id): the variance of the variant's run mean (log time) between runs beyond what its
    rounds explain (``tau2``), on ``d`` degrees of freedom; from ``runs`` kept runs (``source`` says which)."""

    variances: Mapping[Key, tuple[float, float]]
    runs: int
    source: str = SOURCE
    # per cell: how far its run move strays from its control's (the containers' reference workload), (var, d)
    levels: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def of_pair(self, key_a: Key, key_b: Key) -> tuple[float, float] | None:
        """What two runs' wanders add to a contrast of their means (variance, d), when both are known."""
        a, b = self.variances.get(key_a), self.variances.get(key_b)
        return summed([a, b]) if a is not None and b is not None else None

    def level_of_pair(self, cell_a: str, cell_b: str) -> tuple[float, float] | None:
        """What two runs' cell moves beyond their controls add to a control-normalised contrast (var, d)."""
        a, b = self.levels.get(cell_a), self.levels.get(cell_b)
        return summed([a, b]) if a is not None and b is not None else None


def history_model(runs: Sequence[Sequence[CellResult]]) -> NoiseModel | None:
    """Per (cell, variant id) measured in two rounds or more of some kept run: (pooled unit variance, its d)."""
    ss: dict[tuple[str, str], float] = defaultdict(float)
    dfs: dict[tuple[str, str], int] = defaultdict(int)
    for k, cells in enumerate(runs):
        df = build_frame(list(cells))
        if not len(df):
            continue
        rows = df[df["status"] == "ok"]
        keys, sides = [], []
        for _, row in rows.iterrows():
            side = row_side(row, f"kept{k}|{row['cell']}")
            if side.n >= 2:
                keys.append((str(row["cell"]), str(row["id"])))
                sides.append(side)
        for key, s in zip(keys, remove_process_effects(sides), strict=True):
            ss[key] += float(np.sum((np.asarray(s.logs) - s.mean) ** 2))
            dfs[key] += s.n - 1
    found = {key: (ss[key] / d, float(d)) for key, d in dfs.items() if d > 0 and math.isfinite(ss[key])}
    return NoiseModel(found, f"of {len(runs)} {SOURCE}") if found else None


def pair_priors(name_a: str, name_b: str, vid: str, unreplicated: bool, noise: NoiseModel | None,
            history: NoiseModel | None) -> tuple[Prior | None, Prior | None]:
    """A variant's unit variances from elsewhere: its kept history, else (one process a side) a noise model."""
    for model in (history, noise if unreplicated else None):
        if model is not None:
            found = prior(model, (name_b, vid)), prior(model, (name_a, vid))
            if found[0] is not None and found[1] is not None:
                return found
    return None, None


def run_sides(cells: Sequence[CellResult], frame: pd.DataFrame | None = None) -> dict[Key, Side]:
    """Per (cell, variant id) measured ok: its rounds' log times (a ``Side``); each cell's containers' reference
    workload as the variant ``CONTROL``. ``frame``: the rows to take (a frame of ``cells`` already built, or part of
    one), else all of theirs."""
    out: dict[Key, Side] = {}
    for cell in cells:
        control = reference_side(cell, cell.name)
        if control is not None and control.n:
            out[(cell.name, CONTROL)] = control
    df = build_frame(list(cells)) if frame is None else frame
    if not len(df):
        return out
    for _, row in df[df["status"] == "ok"].iterrows():
        side = row_side(row, str(row["cell"]))
        if side.n:
            out[(str(row["cell"]), str(row["id"]))] = side
    return out


def run_means(cells: Sequence[CellResult]) -> dict[Key, tuple[float, float]]:
    """Per (cell, variant id) measured ok (``run_sides``): its run mean of per-round log times, and that mean's
    variance as its rounds estimate it (their variance / n; NaN with one round)."""
    return {key: run_mean(side) for key, side in run_sides(cells).items()}


def run_spread(runs: Sequence[Mapping[Key, tuple[float, float]]], source: str = SOURCE) -> RunSpread | None:
    """Each variant's run-to-run wander over ``runs`` (``run_means`` of each), None with fewer than two.

    Per cell, each run's common move (the median over its variants of their
    offsets from their own median run) is taken out, as ``compare`` takes a
    cell's move out; the variance of what is left over the runs, less the
    part the variant's rounds explain, is the wander (``_wanders``). Where
    the runs timed the cell's control, the cell's ``level``: the variance of
    its run move beyond the control's, what ``--normalise control`` leaves in.
    """
    if len(runs) < MIN_SPREAD_RUNS:
        return None
    by_cell: dict[str, list[Key]] = defaultdict(list)
    for key in {k for run in runs for k in run}:
        if key[1] != CONTROL and sum(key in run for run in runs) >= MIN_SPREAD_RUNS:
            by_cell[key[0]].append(key)
    found: dict[Key, tuple[float, float]] = {}
    levels: dict[str, tuple[float, float]] = {}
    for cell, keys in by_cell.items():
        centre = {k: float(np.median([run[k][0] for run in runs if k in run])) for k in keys}
        moves = cell_moves(runs, keys)
        left: dict[Key, list[tuple[float, float]]] = defaultdict(list)
        beyond: list[float] = []
        control = (cell, CONTROL)
        control_centre = float(np.median([run[control][0] for run in runs if control in run] or [math.nan]))
        for i, run in enumerate(runs):
            if i not in moves:
                continue
            for k in keys:
                if k in run:
                    left[k].append((run[k][0] - centre[k] - moves[i], run[k][1]))
            if control in run:
                beyond.append(moves[i] - (run[control][0] - control_centre))
        ks = [k for k, xs in left.items() if len(xs) >= MIN_SPREAD_RUNS]
        for k, (tau2, d) in zip(ks, _wanders([[x for x, _ in left[k]] for k in ks],
                                             [[w for _, w in left[k] if math.isfinite(w)] for k in ks]), strict=True):
            found[k] = (tau2, d)
        if len(beyond) >= MIN_SPREAD_RUNS:
            levels[cell] = (float(np.var(beyond, ddof=1)), float(len(beyond) - 1))
    return RunSpread(found, len(runs), f"{len(runs)} {source}", levels) if found else None


def _wanders(points: Sequence[Sequence[float]], withins: Sequence[Sequence[float]]) -> list[tuple[float, float]]:
    """Per variant of one cell, from its runs' offsets and their within-run variances: (wander, d).

    What is moderated across the cell's variants is each one's between-run
    variance as a multiple of what its rounds explain (1 where they explain
    it all, whatever the variant's own noise), so that with no wander the
    prior is strong and leaves every variant near 0, and a variant that
    wanders keeps its own excess (``robust_d0``). A variant with one round
    in every run has nothing to subtract: its whole between-run variance.
    """
    s2 = [float(np.var(p, ddof=1)) for p in points]
    d = [float(len(p) - 1) for p in points]
    base = [float(np.mean(w)) if w else math.nan for w in withins]
    idx = [i for i, b in enumerate(base) if b > 0]
    ratios = [s2[i] / base[i] for i in idx]
    prior = fit_prior(ratios, [d[i] for i in idx], "run spread")
    out = [(s2[i], d[i]) for i in range(len(points))]
    for i, r in zip(idx, ratios, strict=True):
        d0 = robust_d0(prior, r, d[i]) if prior is not None else 0.0
        shrunk = (d0 * prior.s0 + d[i] * r) / (d0 + d[i]) if prior is not None else r
        out[i] = (max(0.0, shrunk - 1.0) * base[i], d0 + d[i])
    return out


HISTORY_SOURCE = "runs of the noise history"


def history_means(history: NoiseHistory, without: Sequence[str] = ()) -> list[dict[Key, tuple[float, float]]]:
    """Each run a noise history keeps the means of, but ``without`` (the runs compared): its variant means, as
    ``run_means`` gives them of loaded cells (what ``run_spread`` and ``run_level.run_levels`` read)."""
    skip = set(without)
    return [dict(m.means) for r, m in history.runs if r not in skip and m.means]


def spread_of(history: NoiseHistory, without: Sequence[str] = ()) -> RunSpread | None:
    """``run_spread`` over the runs a noise history keeps the means of, but ``without`` (the runs compared)."""
    return run_spread(history_means(history, without), HISTORY_SOURCE)
