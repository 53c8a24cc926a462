"""Steps in a series of kept runs: "when did this get slower, and by how much?", robust to this host's noise.

One point per run: a variant's mean log time in that run and the mean's
variance within the run (NaN: one process, unknown). As asv's
``step_detect``, the series is fitted piecewise constant, each point
weighted by its own uncertainty: 1 / (var + wander), since a run's whole
level moves between runs on this host by more than its rounds say
(``wander``). The levels are Huber M-estimates: a one-process run here
strays like a Student t with ~3 degrees of freedom (``noise_tails.toml``),
and one process 30% slow must not move a level by 30% / n.

Steps are added one at a time, the largest z (step over its SE) first,
while one passes the bar: a quantile at ``ALPHA`` shared over the places a
step could be (a t's on the degrees of freedom the noise was fitted on,
the normal's when it is given), calibrated on seeded simulations of this
host (``tests/test_steps.py``: under 1 false confirmed step per 100
unchanged series). A step must be at least ``min_step``; a level between
two steps needs two runs (one run alone in the middle is a stray run);
only the newest run may stand alone, and a step to it is "suspicious". As
in PyTorch's dashboard, a step is a regression (or an improvement) only
when two runs after it lie beyond the midpoint of its levels (and two
before it on their side): they agree, it is not one outlier.

Pure: points in, an answer out (the caller reads its run archive).
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from scipy import special

Key = TypeVar("Key", bound=Hashable)     # a series' name: a variant id, a (cell, variant) pair

MIN_POINTS = 4          # fewer runs than this: "insufficient data" (2 runs a side of the first confirmable step)
MIN_LEVEL = 2           # runs a level between two steps needs (the newest run alone: "suspicious")
ALPHA = 0.008           # two-sided level of a series, shared over its n - 3 places for a step (Bonferroni)
HUBER_K = 1.5           # Huber's clip, in each point's SD: a stray run counts as 1.5 SD from its level
VAR_FLOOR = 0.5         # no run's variance is taken below this share of the series' median (1-2 df)
TAIL_DF = 4.0           # the Student t whose likelihood fits the noise (heavy tails: a stray run barely counts)


@dataclass(frozen=True)
class Point:
    """One run of one series: its mean log time (natural log of seconds) and that mean's variance within the
    run (NaN: measured in one process, its own noise unknown)."""

    run: str
    when: str
    log_mean: float
    var: float = math.nan


@dataclass(frozen=True)
class Wander:
    """A run-to-run variance of a run's level (log) beyond what its rounds say, and the degrees of freedom it was
    measured on (``source``: where)."""

    var: float
    d: float
    source: str = ""


@dataclass(frozen=True)
class Step:
    """A change of level at point ``index`` (the first run after it): ``ratio`` = exp(level after - before) in
    [``low``, ``high``] (95%); ``after`` runs at the new level, to the next step or the newest run; ``kind``:
    "regression"/"improvement" (two runs or more after it), "suspicious" (the newest run alone)."""

    index: int
    run: str
    when: str
    ratio: float
    low: float
    high: float
    after: int
    kind: str


@dataclass(frozen=True)
class SeriesAnswer:
    """A series' ``steps`` and ``status`` ("insufficient data", "steady", "step", "suspicious"); the smallest
    step it ``resolves`` (a ratio, 1.12: 12%, that three runs after it would just confirm at its noise); the
    run-to-run variance (log) it used, ``wander``."""

    steps: tuple[Step, ...]
    status: str
    resolves: float
    wander: float


def find_steps(points: Sequence[Point], wander: float | None = None, min_step: float = 0.05,
               one_process: float | None = None, prior: Wander | None = None) -> SeriesAnswer:
    """The steps of one series of runs, oldest first.

    ``wander``: the run-to-run variance of a run's level beyond its rounds;
    ``one_process``: the variance of one process's log time (for the points
    whose ``var`` is NaN). What is not given is fitted to this series, on
    its few degrees of freedom: a step must then pass a t's quantile, and a
    series of 8 runs names only large steps. Give what was measured on more
    runs (``pooled_wander`` over many series, ``kept.run_spread``, a noise
    history), never a wander fitted to this series alone (too small as often
    as too large, it would pass the normal's bar unearned). ``prior``: where
    no such wander is known (one series, a user's one cell), what is known of
    it elsewhere (the host's, other series'): the series' own wander is then
    fitted per segmentation with that prior beside its few differences (a
    scaled inverse chi-square), and a step passes a t's bar on their degrees
    of freedom added.
    """
    y = np.asarray([p.log_mean for p in points], dtype=float)
    if not np.all(np.isfinite(y)):
        raise ValueError("a point's log_mean must be finite")
    n = len(y)
    if n < MIN_POINTS:
        return SeriesAnswer((), "insufficient data", math.nan, math.nan if wander is None else wander)
    noise = _Noise(y, np.asarray([p.var for p in points], dtype=float), wander, one_process, prior)
    small = math.log1p(min_step)
    cuts, row, df = _prune(y, noise, _forward(y, noise, small), small)
    v = noise.rows[row]
    q = float(special.stdtrit(df, 0.975)) if math.isfinite(df) else float(special.ndtri(0.975))
    steps = []
    bounds = [0, *cuts, n]
    for j, c in enumerate(cuts):
        before, level, se = _contrast(y, v, bounds[j], c, bounds[j + 2])
        d, after = level - before, bounds[j + 2] - c
        kind = "suspicious" if after == 1 else ("regression" if d > 0 else "improvement")
        steps.append(Step(c, points[c].run, points[c].when, math.exp(d), math.exp(d - q * se),
                          math.exp(d + q * se), after, kind))
    status = "step" if any(s.kind != "suspicious" for s in steps) else ("suspicious" if steps else "steady")
    # a step from the next run on that just passes the bar once three runs see it (about half are named by then)
    se3 = math.sqrt(float(np.median(v)) * (1 / n + 1 / 3))
    resolves = math.exp(max(_bar(df + 3, n + 3) * se3, small))
    return SeriesAnswer(tuple(steps), status, resolves, float(noise.ws[row]))


def common_move(series: Mapping[Key, Sequence[Point]]) -> list[Point]:
    """A whole cell's (or file's) series: per run, the median over its variants of each one's offset from its
    own median over the runs; its variance, that of a median of those offsets.

    A change that slows every variant by 20% is one step of this series,
    measured on many variants, where each variant's own series could not
    tell it from its noise; a variant's own step barely moves the median.
    Runs are ordered by ``when``, then by where they first appear.
    """
    offsets: dict[str, list[float]] = defaultdict(list)
    order: dict[str, tuple[str, int]] = {}
    for pts in series.values():
        if not pts:
            continue
        mid = float(np.median([p.log_mean for p in pts]))
        for p in pts:
            order.setdefault(p.run, (p.when, len(order)))
            offsets[p.run].append(p.log_mean - mid)
    out = []
    for run in sorted(order, key=order.__getitem__):
        x = np.asarray(offsets[run])
        med = float(np.median(x))
        var = math.pi / 2 * (1.4826 * float(np.median(np.abs(x - med)))) ** 2 / len(x)    # of a median
        out.append(Point(run, order[run][0], med, var if len(x) >= 3 else math.nan))
    return out


def pooled_wander(series: Sequence[Sequence[Point]]) -> Wander:
    """The run-to-run variance beyond the points' own variances, fitted to the successive differences of several
    series at once: for ``find_steps``'s ``wander``.

    Cells on one host wander alike: fitted to every cell's common move (or
    every variant's series of one cell), the wander is known on many runs
    and a step must pass the normal's bar, not a t's on one series' few
    degrees of freedom. A difference that touches a point of unknown
    variance (one process) is left out; NaN on 0 degrees of freedom when none is left.
    """
    d, known = [], []
    for pts in series:
        y = np.asarray([p.log_mean for p in pts], dtype=float)
        var = np.asarray([p.var for p in pts], dtype=float)
        both = np.isfinite(var[:-1]) & np.isfinite(var[1:])
        d.append(np.diff(y)[both])
        known.append((var[:-1] + var[1:])[both])
    e, k = np.concatenate([np.zeros(0), *d]), np.concatenate([np.zeros(0), *known])
    if not len(e):
        return Wander(math.nan, 0.0)
    grid = max(float(np.median(e ** 2)) / 0.4549 / 2, 1e-12) * 2.0 ** np.arange(-12.0, 4.1, 0.25)
    s = np.maximum(2 * grid[:, None] + k[None, :], 1e-300)
    return Wander(float(grid[int(np.argmax(_loglik(e[None, :], s).sum(axis=1)))]), float(len(e)))


class _Noise:
    """The points' candidate variances (rows: var + wander, or one process + wander) over a grid of what is not
    given; ``fit`` picks a row by a Student t(``TAIL_DF``) likelihood, whose tails let a stray run be.

    Neither given, their ratio comes from the successive differences, then
    one scale per segmentation. A series measured in one process throughout
    cannot tell its rounds' noise from its runs' wander: all of it is then
    wander. A mean of 2-3 rounds has a variance on 1-2 degrees of freedom,
    100 times too small now and then: none is taken below half their median
    or a third of one process's, or one lucky run would outweigh the rest.
    With a ``prior`` for the wander (its points' own variances known), the
    grid reaches it and each row's fit adds its log prior density.
    """

    def __init__(self, y: np.ndarray, var: np.ndarray, wander: float | None, one_process: float | None,
                 prior: Wander | None = None) -> None:
        known = np.isfinite(var)
        if known.any():
            var = np.where(known, np.maximum(var, VAR_FLOOR * float(np.median(var[known]))), np.nan)
        own = np.nan_to_num(var)
        base = max(float(np.median(np.diff(y) ** 2)) / 0.4549 / 2, 1e-12)
        grid = base * 2.0 ** np.arange(-10.0, 4.5, 0.5)
        self.d0, log_prior = 0.0, None
        if one_process is not None or known.all():         # the wander over a grid
            u = 0.0 if one_process is None else float(one_process)
            if wander is not None:
                self.ws = np.array([wander], dtype=float)
            elif prior is not None and prior.d > 0 and math.isfinite(prior.var):
                # a scaled inverse chi-square(d0, s0) over a grid that reaches the prior's own scale
                s0, self.d0 = prior.var, prior.d
                self.ws = np.geomspace(min(grid[0], s0 / 64), max(grid[-1], s0 * 64), len(grid) + 16)
                log_prior = -(self.d0 / 2 + 1) * np.log(self.ws) - self.d0 * s0 / (2 * self.ws)
            else:
                self.ws = grid
            self.rows = self.ws[:, None] + np.where(known, np.maximum(own, u / 3), u)
        elif wander is not None:                            # one process over a grid
            self.ws = np.full(len(grid), float(wander))
            self.rows = wander + np.where(known, np.maximum(own, grid[:, None] / 3), grid[:, None])
        else:       # both: their ratio from the successive differences, then one scale over a grid
            wg, ug = np.repeat([0.0, *grid], len(grid))[:, None], np.tile(grid, len(grid) + 1)[:, None]
            pilot = wg + np.where(known, np.maximum(own, ug / 3), ug)
            best = int(np.argmax(_loglik(np.diff(y), pilot[:, :-1] + pilot[:, 1:]).sum(axis=1)))
            scale = 2.0 ** np.arange(-6.0, 6.5, 0.5)
            self.ws = (wg[best, 0] if known.any() else pilot[best, 0]) * scale
            self.rows = scale[:, None] * pilot[best][None, :]
        self.rows = np.maximum(self.rows, 1e-300)
        self.fixed = len(self.ws) == 1
        self.log_prior = np.zeros(len(self.ws)) if log_prior is None else log_prior

    def fit(self, y: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Per segmentation (``labels``: m x n segment numbers), the row its successive differences within
        segments make likeliest (its index): a step not yet among them is one large difference, not noise."""
        if self.fixed:
            return np.zeros(len(labels), dtype=int)
        within = (labels[:, 1:] == labels[:, :-1]).astype(float)
        fits = _loglik(np.diff(y), self.rows[:, :-1] + self.rows[:, 1:]) @ within.T + self.log_prior[:, None]
        return np.argmax(fits, axis=0)

    def df(self, n: int, segments: int) -> float:
        return math.inf if self.fixed else float(self.d0 + max(n - segments - 1, 1))


def _loglik(e: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Student t(``TAIL_DF``) log likelihood (less constants) of residuals ``e`` of variances ``s``."""
    return -0.5 * np.log(s) - (TAIL_DF + 1) / 2 * np.log1p(e ** 2 / ((TAIL_DF - 2) * s))


def _bar(df: float, n: int) -> float:
    """The |z| a step in a series of ``n`` runs must pass, its noise known on ``df`` degrees of freedom: a
    Student t's two-sided quantile at ``ALPHA`` over the places a confirmed step could be (calibrated on
    simulations of this host's noise: tests/test_steps.py, "false steps")."""
    tail = ALPHA / 2 / max(n - 3, 1)
    return float(-special.stdtrit(df, tail)) if math.isfinite(df) else float(-special.ndtri(tail))


def _levels(y: np.ndarray, v: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``masks`` (which points) and ``v`` (their variances): the points' Huber level, each point
    weighted by 1/v and clipped at ``HUBER_K`` of its SD, and its SE (a clipped point tells less: its weight)."""
    wt = masks.astype(float) / v
    sd = np.sqrt(v)
    c = np.einsum("mn,n->m", wt, y) / wt.sum(axis=1)
    for _ in range(10):
        h = wt * np.minimum(1.0, HUBER_K * sd / np.maximum(np.abs(y - c[:, None]), 1e-300))
        c = np.einsum("mn,n->m", h, y) / h.sum(axis=1)
    return c, np.sqrt(1.0 / h.sum(axis=1))


def _huber(y: np.ndarray, v: np.ndarray, masks: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Per row: the Huber loss (``HUBER_K``) of the points of ``masks`` about their row's ``level``, each in its own
    SD (``v``): how badly one level fits them."""
    r = np.abs(y[None, :] - level) / np.sqrt(v)
    rho = np.where(r <= HUBER_K, r ** 2 / 2, HUBER_K * r - HUBER_K ** 2 / 2)
    return (rho * masks).sum(axis=1)


def _contrast(y: np.ndarray, v: np.ndarray, lo: int, cut: int, hi: int) -> tuple[float, float, float]:
    """The levels of [lo, cut) and [cut, hi) (log) and the SE of their difference."""
    idx = np.arange(len(y))
    c, se = _levels(y, np.vstack([v, v]), np.vstack([(idx >= lo) & (idx < cut), (idx >= cut) & (idx < hi)]))
    return float(c[0]), float(c[1]), float(math.hypot(se[0], se[1]))


def _labels(n: int, cuts: Sequence[int]) -> np.ndarray:
    return np.searchsorted(np.asarray(sorted(cuts), dtype=int), np.arange(n), side="right")


def _forward(y: np.ndarray, noise: _Noise, small: float) -> list[int]:
    """Steps added one at a time, the largest |z| first, while one passes: a level between two steps needs
    ``MIN_LEVEL`` runs, the newest run may stand alone."""
    n = len(y)
    cuts: list[int] = []
    idx = np.arange(n)
    while True:
        bounds = [0, *cuts, n]
        cands = [(t, a, b) for a, b in zip(bounds, bounds[1:], strict=False)
                 for t in range(a + MIN_LEVEL, b) if b - t >= MIN_LEVEL or (b == n and t == n - 1)]
        if not cands:
            return cuts
        t, a, b = (np.array(x)[:, None] for x in zip(*cands, strict=True))
        v = noise.rows[noise.fit(y, np.vstack([_labels(n, [*cuts, int(c)]) for c in t[:, 0]]))]
        c, se = _levels(y, np.vstack([v, v]), np.vstack([(idx >= a) & (idx < t), (idx >= t) & (idx < b)]))
        d = c[len(t):] - c[:len(t)]
        z = np.abs(d) / np.hypot(se[:len(t)], se[len(t):])
        ok = (z >= _bar(noise.df(n, len(cuts) + 2), n)) & (np.abs(d) >= small)
        if not ok.any():
            return cuts
        # where: the cut that fits its segment best (a short level's small SE must not pull a step off its run)
        whole = (idx >= a) & (idx < b)
        one, _ = _levels(y, v, whole)
        gain = (_huber(y, v, whole, one[:, None])
                - _huber(y, v, (idx >= a) & (idx < t), c[:len(t), None])
                - _huber(y, v, (idx >= t) & (idx < b), c[len(t):, None]))
        cuts = sorted([*cuts, int(t[ok][np.argmax(gain[ok]), 0])])


def _prune(y: np.ndarray, noise: _Noise, cuts: list[int], small: float) -> tuple[list[int], int, float]:
    """Refit the noise and levels about the steps found and drop the weakest step that no longer holds, until
    all do: its z passes the bar, it is at least ``small`` (log) and, with two runs or more after it, two runs
    each side lie on their side of the midpoint of its levels."""
    n = len(y)
    while True:
        row = int(noise.fit(y, _labels(n, cuts)[None, :])[0])
        df = noise.df(n, len(cuts) + 1)
        bounds = [0, *cuts, n]
        weakest, weakest_z = -1, math.inf
        for j, c in enumerate(cuts):
            before, after, se = _contrast(y, noise.rows[row], bounds[j], c, bounds[j + 2])
            d = after - before
            side = np.sign(d) * (y[bounds[j]:bounds[j + 2]] - (before + after) / 2) > 0
            agree = min(int(np.sum(~side[:c - bounds[j]])), int(np.sum(side[c - bounds[j]:])))
            holds = abs(d) / se >= _bar(df, n) and abs(d) >= small and (bounds[j + 2] - c == 1 or agree >= 2)
            if not holds and abs(d) / se < weakest_z:
                weakest, weakest_z = j, abs(d) / se
        if weakest < 0:
            return cuts, row, df
        cuts = cuts[:weakest] + cuts[weakest + 1:]
