"""A sequential run's question for the variants no claim names: has each one changed since its kept runs?

A run of a user's own benchmark file (no claims) used to stop after round 1:
no claim line was open. Each of its runs was then one process a case, and a
series of such runs could not tell a 20% step from the host's day (issue 63).
Here each such variant is a line of the looks, as a claim's line is:

* with two kept runs of it or more (the archive's means, ``history_means``):
  this run's mean log time against the kept runs' level, the cell's common
  move taken out (a host slower all over moves every variant alike: the
  series judges that move on its own), its variance this run's mean's, the
  level's and the variant's run-to-run wander (``kept.run_spread``). DECIDED
  when its interval excludes 1, SAME when it is shown within ``SAME_MARGIN``,
  else OPEN: another round, up to the run's cap and budget;
* with fewer: the first runs of its series. They take ``FIRST_ROUNDS``
  rounds (``FIRST``), what a later run needs to be compared with them.

Pure: the live cells' sides and the kept means in, ``LineState`` rows out.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence

import numpy as np

from ..runs.kept import Key, run_spread
from ..runs.noise_model import CONTROL, run_mean
from ..statistics.inference import Contrast, Side, ratio_ci
from ..stopping import FIRST, OPEN, LineState, case_state

SERIES = "series"           # the claim key of a series line (in the looks, the console and the cell file)
FIRST_ROUNDS = 3            # the rounds the first runs of a series take: a later run is compared with them
SAME_MARGIN = 0.10          # a variant shown within 10% of its kept level is the same: more rounds change nothing
KEEP_LEVEL = 3              # the newest kept runs whose means make a variant's level
FIRST_WORDS = "first runs of its series"


def series_states(sides: Mapping[Key, Side], kept: Sequence[Mapping[Key, tuple[float, float]]],
                  claimed: Collection[Key], lent: Mapping[Key, tuple[float, float]], alpha: float) -> list[LineState]:
    """A line per measured variant not in ``claimed`` (cell, variant id): its change since its ``kept`` runs
    (oldest first, ``runs.kept.history_means``), judged at ``alpha``; ``lent``: a variant's unit variance (s2, d)
    where this run has one round of it (the noise history's)."""
    spread = run_spread(kept)
    by_cell: dict[str, list[Key]] = defaultdict(list)
    for key in sorted(sides):
        if key[1] != CONTROL and key not in claimed:
            by_cell[key[0]].append(key)
    out: list[LineState] = []
    for cell, keys in by_cell.items():
        judged: dict[Key, tuple[float, float, float]] = {}      # key -> (log change, its variance, d)
        for key in keys:
            side = sides[key]
            mean, var = run_mean(side)
            d = side.n - 1.0
            if not math.isfinite(var) and key in lent:
                var, d = lent[key][0] / side.n, lent[key][1]
            points = [run[key] for run in kept if key in run][-KEEP_LEVEL:]
            wander = spread.variances.get(key) if spread is not None else None
            if wander is None or len(points) < 2 or not math.isfinite(var) or d <= 0:
                state = FIRST if side.n >= FIRST_ROUNDS else OPEN
                out.append(LineState(SERIES, cell, key, key, FIRST_WORDS, state, math.nan))
                continue
            within = [v for _, v in points if math.isfinite(v)]
            level = float(np.mean([m for m, _ in points]))
            level_var = (wander[0] + (float(np.mean(within)) if within else 0.0)) / len(points)
            judged[key] = (mean - level, var + wander[0] + level_var, min(d, wander[1]))
        move = float(np.median([x for x, _, _ in judged.values()])) if len(judged) >= 3 else 0.0
        for key, (change, var, d) in judged.items():
            n = sides[key].n
            ci = ratio_ci(Contrast(change - move, var, d, 1.0, n, n, False)).at(1 - alpha)
            state = case_state(ci, alpha, SAME_MARGIN)
            out.append(LineState(SERIES, cell, key, key, ci.verdict, state, ci.ratio))
    return out
