"""A claim line measured round after round under this host's noise, judged by the sequential rule's own functions.

Used by ``test_sequential.py`` (seeded, seconds); the figures of the sequential rule in
docs/measurements-log.md came from it at a larger number of trials. Each variant's per-round SD is drawn as
measured here (11% at the median, 22% at the 90th percentile: lognormal across
variants); a window-mate line pairs its two sides round by round (their
process's state cancels). The looks go through ``inference.contrast``,
``moderation.with_noise_model`` (a noise history of earlier runs: each side's
variance estimated on ``d0`` degrees of freedom), ``ratio_ci``/``RatioCI.at``,
``claims.verdict`` and ``stopping.state_of``: the functions a real look uses.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from host_noise import sds

from tfmatrix.analysis.claims.answers import verdict
from tfmatrix.analysis.statistics.inference import Side, contrast, ratio_ci
from tfmatrix.analysis.statistics.moderation import Prior, with_noise_model
from tfmatrix.analysis.stopping import LOOK_ALPHA, LOOK_AT, MAX_ROUNDS, OPEN, first_look, state_of

sigmas = sds       # per-variant SDs of one round's log time: this host's (``host_noise.HOST``)


@dataclass(frozen=True)
class Stop:
    rounds: int
    verdict: str
    state: str


@dataclass(frozen=True)
class Shipped:
    """A fresh machine's first look on the shipped prior (``analysis.runs.prior``): the table measured each SD on
    ``d_table`` degrees of freedom on its own host; this host's SDs are ``mismatch`` times those; the prior is lent
    ``scale`` times wider on ``d`` degrees of freedom."""

    scale: float
    d: float
    mismatch: float = 1.0
    d_table: float = 12.0


def run_line(rng: np.random.Generator, effect: float, sd_a: float, sd_b: float, *, warm: bool, d0: float = 12.0,
             alpha: float = LOOK_ALPHA, cap: int = MAX_ROUNDS, looks: tuple[int, ...] = LOOK_AT,
             expect: str = "a", shipped: Shipped | None = None) -> Stop:
    """One line (time a / time b = ``effect``) measured until it is not open at a look, or the cap. ``sd_a``,
    ``sd_b``: the SDs of the host that measured the history (or the shipped table: then the data's SDs are
    ``shipped.mismatch`` times them)."""
    k = shipped.mismatch if shipped is not None else 1.0
    if shipped is not None:
        dt = shipped.d_table
        history: tuple[Prior | None, Prior | None] = tuple(    # type: ignore[assignment]
            Prior(shipped.scale * sd ** 2 * rng.chisquare(dt) / dt, shipped.d) for sd in (sd_a, sd_b))
        warm = True
    elif warm:
        history = (Prior(sd_a ** 2 * rng.chisquare(d0) / d0, d0), Prior(sd_b ** 2 * rng.chisquare(d0) / d0, d0))
    else:
        history = (None, None)
    a: list[float] = []
    b: list[float] = []
    for r in range(1, cap + 1):
        a.append(math.log(effect) + k * sd_a * rng.standard_normal())
        b.append(k * sd_b * rng.standard_normal())
        if r < first_look(warm) or (r not in looks and r < cap):
            continue
        keys = tuple(str(i) for i in range(r))
        c = contrast(Side(keys, tuple(a)), Side(keys, tuple(b)))
        assert c is not None
        if shipped is None or r == 1:      # the shipped prior is a last resort: from round 2 a line has its own
            c = with_noise_model(c, *history)
        ci = ratio_ci(c).at(1 - alpha)
        said = verdict(ci, expect)
        state = state_of(said, expect, ci, alpha)
        if state != OPEN or r == cap:
            return Stop(r, said, state)
    raise AssertionError("unreachable")
