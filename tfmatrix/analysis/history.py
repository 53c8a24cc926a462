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
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from ..results.noise_history import NoiseModel
from .cells import CellResult
from .frame import build_frame, row_side
from .noise_model import prior
from .statistics.moderation import Prior, remove_process_effects

SOURCE = "kept runs"


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
