"""How far an unchanged contrast strays, as this host measured it: the gate's null for one-process variants.

The t test of ``inference`` assumes a round's log time is normal around its
variant's mean. On this host it is not: now and then one process is 25-35%
slow for one variant (where its objects landed, a neighbour, a core), and
the next is not. A variant measured in several rounds a side sees such a
process in its own variance; a variant measured in one process a side (the
default run decides most Claims lines in round 1) cannot, and its contrast
rests on a variance borrowed from elsewhere. Over seven back-to-back pairs
of unchanged default runs (scripts/bench_real_pairs.py --tails) the normal
scores of those contrasts were narrower than N(0, 1) in the middle (the
borrowed variance is mostly too wide) and far wider in the tails (|z| > 4:
0.2% against the normal's 0.006%), and one pair of seven failed the gate on
two such variants (z = 5.2 and 3.8). Holm over ~200 variants asks for
z > 3.5: exactly where the normal's tail is wrong.

So the gate judges a one-process contrast against the tail measured
(``Null``: a Student t with ``df`` degrees of freedom and ``scale``, fitted
by maximum likelihood to those normal scores), kept in
``tfmatrix/data/noise_tails.toml`` with where it came from. A variant
measured in rounds keeps the t test of its own rounds. Pure but for
``one_process``, which reads the table (once).
"""
from __future__ import annotations

import functools
import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import special, stats

from .inference import Contrast
from .steps import Wander

TABLE_PATH = Path(__file__).resolve().parent.parent.parent / "data" / "noise_tails.toml"   # package data


@dataclass(frozen=True)
class Null:
    """What a contrast's normal score (``score``) is distributed as when nothing changed: scale * Student t(df)."""

    df: float
    scale: float
    source: str = ""

    def sf(self, z: float) -> float:
        """P(score > z) under no change."""
        return float(special.stdtr(self.df, -z / self.scale))

    def ppf(self, q: float) -> float:
        """The score below which a share ``q`` of unchanged contrasts fall."""
        return float(self.scale * special.stdtrit(self.df, q))


def score(c: Contrast, log_margin: float = 0.0) -> float:
    """The contrast's normal score: its one-sided t test of "no slower than exp(log_margin)", as a N(0, 1) quantile.

    The same number whatever the contrast's degrees of freedom, so contrasts
    of many variants can be pooled into one null (and fitted). Each side is
    read from its own tail, which keeps its precision down to 1e-300: read
    from the far one, every score past ~8.2 was 8.2.
    """
    if not c.replicated:
        return math.nan
    t = (c.log_ratio - log_margin) / c.se
    tail = max(float(special.stdtr(c.df, -abs(t))), 1e-300)
    return float(-special.ndtri(tail)) if t > 0 else float(special.ndtri(tail))


def fit_null(scores: Sequence[float], source: str = "") -> Null | None:
    """Student t (location 0) fitted by maximum likelihood to unchanged contrasts' normal scores; None below 50."""
    z = np.asarray([s for s in scores if math.isfinite(s)], dtype=float)
    if len(z) < 50:
        return None
    df, _, scale = stats.t.fit(z, floc=0.0)
    return Null(float(df), float(scale), source)


@functools.cache
def one_process(path: Path = TABLE_PATH) -> Null:
    """The gate's null for a contrast with one process on a side, as measured (``noise_tails.toml``)."""
    table = tomllib.loads(path.read_text())["one_process"]
    return Null(float(table["df"]), float(table["scale"]), str(table["measured"]))


@functools.cache
def whole_cell(path: Path = TABLE_PATH) -> Wander:
    """How far a cell's common move against its reference workload wanders between runs of unchanged code here
    (``noise_tails.toml``): what a series of one cell's few runs borrows (``steps.find_steps``'s ``prior``)."""
    table = tomllib.loads(path.read_text())["whole_cell"]
    return Wander(float(table["sd"]) ** 2, float(table["d"]), str(table["measured"]))
