"""The one estimator, its unit and its test: every verdict tfmatrix prints comes from here.

Why one module: the review of the statistics (docs/measurement.md, "Verdicts") found
three interval rules that centred on one number and took their width from
another, a "beyond the noise" rule that made more rounds find less, and a
rank rule for one-process runs that flagged ~3% of variants whatever the data.
Now there is one answer to each question, used by ``compare``,
the Claims, the upgrade view, bisect/timeline and the gate:

* **The unit** is a round (an interleaved run's fresh process; the processes
  of one round averaged, so ``--processes N`` counts rounds, not processes).
  Its value is the log of its 10th percentile (``stats.estimate``).
* **The estimate** of a ratio is ``exp`` of the mean per-unit log ratio when
  both sides share units (same rounds of one run, or window-mates of one
  process), else of the difference of the sides' mean logs. Its interval
  comes from the same numbers: Student's t on the unit-level variance.
* **The process effect** shared by the variants sampled in one process (one
  window) is taken out before that (``remove_process_effects``), and each
  variant's variance is **moderated** across the variants of its benchmark
  (empirical Bayes, as limma does: Smyth 2004), so three rounds do not mean
  a t with two degrees of freedom.
* **No verdict without replication**: one unit a side and no prior (from the
  other variants of the comparison, or a stored noise model of a replicated
  run of the same cells) is "not enough replication".
* **Lists** of changed variants are controlled for the false-discovery rate
  (Benjamini-Hochberg), **the gate** family-wise (Holm), a "does not help"
  claim by an explicit margin (equivalence), and every unclear answer says
  the smallest change it could have seen (its minimum detectable effect).

Pure functions over numbers; the frames' rows come in through ``side_of``.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from .stats import estimate
from .words import THIN, UNCLEAR, A, B, direction

ALPHA = 0.05            # two-sided 95% intervals; each variant's own test
POWER = 0.80            # the power a minimum detectable effect is stated at
MIN_SD = 0.005          # no process measures a variant better than 0.5%: a floor under a variance of 0 (a
#                         quantised timer), so identical process times do not make every difference "clear"


@dataclass(frozen=True)
class Side:
    """One variant's measurements on one side: per unit (round), the mean log of its processes' 10th percentiles.

    ``keys`` pair units across sides: a round tag (``<run>#<round>``) pairs
    two cells of one interleaved run, a window key pairs window-mates of one
    process; ``processes`` name the process each unit's first process ran in
    (for ``remove_process_effects``; "" where unknown).
    """

    keys: tuple[str, ...]
    logs: tuple[float, ...]
    processes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return len(self.logs)

    @property
    def mean(self) -> float:
        return float(np.mean(self.logs)) if self.logs else math.nan


def side_of(per_process: Sequence[Sequence[float]], keys: Sequence[str] = (),
            processes: Sequence[str] = (), label: str = "") -> Side:
    """A ``Side`` from a record's per-process samples; processes with the same key are one unit (averaged).

    ``keys``: per process, what pairs it with the other side (a round tag,
    or a window key); "" or missing: the process is its own unit, named
    after ``label`` (give each side its own: such units never pair).
    """
    units: dict[str, list[float]] = {}
    first: dict[str, str] = {}
    for i, samples in enumerate(per_process):
        values = [float(x) for x in samples if x is not None and math.isfinite(float(x))]
        if not values:
            continue
        t = estimate(values)
        if t <= 0:
            continue
        key = keys[i] if i < len(keys) and keys[i] else f"{label}#process{i}"
        units.setdefault(key, []).append(math.log(t))
        first.setdefault(key, processes[i] if i < len(processes) and processes[i] else "")
    order = list(units)
    return Side(tuple(order), tuple(float(np.mean(units[k])) for k in order), tuple(first[k] for k in order))


@dataclass(frozen=True)
class Contrast:
    """log(first / second) of one comparison, with what its uncertainty rests on.

    ``s2`` is the variance of one unit (of a unit's log ratio when paired, of
    a unit's log time when not: pooled over both sides), ``d`` its degrees of
    freedom (0: not replicated), ``c`` the factor that makes it the estimate's
    variance (1/n paired, 1/n_a + 1/n_b not), ``extra`` a variance added on
    top (what its processes' shared effects, or a normalisation's own
    estimate, add) on ``extra_d`` degrees of freedom. ``prior``: where the
    moderated variance came from ("" unmoderated).
    """

    log_ratio: float
    s2: float
    d: float
    c: float
    n_a: int
    n_b: int
    paired: bool
    extra: float = 0.0
    extra_d: float = math.inf
    prior: str = ""

    @property
    def ratio(self) -> float:
        return math.exp(self.log_ratio)

    @property
    def replicated(self) -> bool:
        """There is a variance to test against (own units, a moderation prior, or a noise model)."""
        return self.d > 0 and math.isfinite(self.s2)

    @property
    def se(self) -> float:
        return math.sqrt(max(self.s2, MIN_SD ** 2) * self.c + self.extra) if self.replicated else math.nan

    @property
    def df(self) -> float:
        """Degrees of freedom of ``se`` (Welch-Satterthwaite when an estimated extra variance joins it)."""
        if not self.replicated or self.extra <= 0 or math.isinf(self.extra_d):
            return self.d
        own = max(self.s2, MIN_SD ** 2) * self.c
        return (own + self.extra) ** 2 / (own ** 2 / self.d + self.extra ** 2 / self.extra_d)

    @property
    def units(self) -> int:
        """What the estimate rests on: paired units, or the smaller side's units."""
        return self.n_a if self.paired else min(self.n_a, self.n_b)

    def t(self, q: float) -> float:
        return float(special.stdtrit(self.df, q)) if self.replicated else math.nan

    def interval(self, confidence: float = 1 - ALPHA) -> tuple[float, float]:
        """The ratio's two-sided interval (nan, nan when not replicated)."""
        if not self.replicated:
            return math.nan, math.nan
        half = self.t(0.5 + confidence / 2) * self.se
        return math.exp(self.log_ratio - half), math.exp(self.log_ratio + half)

    def p(self) -> float:
        """Two-sided p-value of "the ratio is 1"."""
        if not self.replicated:
            return math.nan
        return float(2 * special.stdtr(self.df, -abs(self.log_ratio) / self.se))

    def p_above(self, log_margin: float = 0.0) -> float:
        """One-sided p-value of "the ratio is at most exp(log_margin)" (small: clearly above it)."""
        if not self.replicated:
            return math.nan
        return float(special.stdtr(self.df, -(self.log_ratio - log_margin) / self.se))

    def mde(self, alpha: float = ALPHA, power: float = POWER) -> float:
        """The smallest change (0.1 = 10%) this comparison finds with ``power`` at a two-sided ``alpha``."""
        if not self.replicated:
            return math.nan
        return math.expm1((self.t(1 - alpha / 2) + self.t(power)) * self.se)


@dataclass(frozen=True)
class RatioCI:
    """A time ratio first/second as every view shows it: the estimate, its 95% interval, what it rests on.

    Made from a ``Contrast`` (``ratio_ci``), so the ratio and its interval
    come from the same numbers. ``noise``: what one unit's ratio wanders by
    (its SD, relative; shown, not a rule). ``mde``: the smallest change the
    comparison finds with 80% power. ``replicated`` False: one unit a side
    and no variance from elsewhere; the interval is nan and the verdict
    ``THIN`` ("not enough replication").
    """

    ratio: float
    low: float
    high: float
    n_a: int
    n_b: int
    confidence: float = 1 - ALPHA
    paired: bool = False
    noise: float = 0.0
    rerun: float | None = None          # the same ratio in the previous run, when there is one (shown)
    rounds: int = 0                     # paired units it rests on (rounds of one run, or processes of a window)
    df: float = 0.0
    mde: float = math.nan
    p: float = math.nan
    replicated: bool = True
    prior: str = ""

    @property
    def clear(self) -> bool:
        """The test says the ratio is not 1 (its interval excludes 1)."""
        return self.replicated and (self.high < 1.0 or self.low > 1.0)

    @property
    def verdict(self) -> str:
        """``words.direction`` of the interval: "a" (the first side is faster), "b" (the second is),
        "no clear difference" or "not enough replication"."""
        return direction(self.replicated, self.low, self.high)

    @property
    def log_se(self) -> float:
        """The standard error of the log ratio its interval was made from (its half-width in logs over the t quantile
        of its confidence on its degrees of freedom): a series of runs weighs each run's ratio by it. NaN: not
        replicated."""
        if not (self.replicated and self.df > 0 and 0 < self.low < self.high < math.inf):
            return math.nan
        half = (math.log(self.high) - math.log(self.low)) / 2
        return half / float(special.stdtrit(self.df, 0.5 + self.confidence / 2))

    def at(self, confidence: float) -> RatioCI:
        """The same estimate with its interval at another level (a sequential run's looks test at alpha / looks):
        the half-width in logs scaled by the ratio of Student's t quantiles on the same degrees of freedom."""
        if not self.replicated or confidence == self.confidence:
            return dataclasses.replace(self, confidence=confidence)
        scale = float(special.stdtrit(self.df, 0.5 + confidence / 2)
                      / special.stdtrit(self.df, 0.5 + self.confidence / 2))
        centre, half = math.log(self.ratio), (math.log(self.high) - math.log(self.low)) / 2 * scale
        return dataclasses.replace(self, low=math.exp(centre - half), high=math.exp(centre + half),
                                   confidence=confidence)

    @property
    def why_unclear(self) -> str:
        """Why an unclear ratio is unclear, in words, with what the comparison could have seen."""
        if not self.replicated:
            return "not enough replication (one process a side: run --rounds 2 or more)"
        mde = f"; it could resolve changes of {self.mde:.0%} or more" if math.isfinite(self.mde) else ""
        return f"the interval spans 1{mde}"


def ratio_ci(c: Contrast, rerun: float | None = None) -> RatioCI:
    """The view of a contrast: ratio, interval, and what it rests on."""
    low, high = c.interval()
    sd = math.sqrt(max(c.s2, MIN_SD ** 2)) if c.replicated else 0.0
    return RatioCI(c.ratio, low, high, c.n_a, c.n_b, 1 - ALPHA, c.paired, math.expm1(sd), rerun,
                   c.n_a if c.paired else 0, c.df if c.replicated else 0.0, c.mde(), c.p(), c.replicated, c.prior)


def time_interval(per_process: Sequence[Sequence[float]]) -> tuple[float, float, float] | None:
    """One variant's time and its 95% interval: the geometric mean of its processes' 10th percentiles, t over them.

    One process: its time, and the interval nan (nothing replicates it).
    """
    s = side_of(per_process)
    if not s.n:
        return None
    mean = s.mean
    if s.n < 2:
        return math.exp(mean), math.nan, math.nan
    se = max(float(np.std(s.logs, ddof=1)), MIN_SD) / math.sqrt(s.n)
    half = float(special.stdtrit(s.n - 1, 1 - ALPHA / 2)) * se
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


# --------------------------------------------------------------------------- one comparison


def contrast(a: Side, b: Side) -> Contrast | None:
    """log(a/b): paired on the units both sides share when they share any, else the two sides' means.

    Paired: the mean of the per-unit log ratios, their variance on n-1
    degrees of freedom (the host's state during a round, or a process's,
    cancels). Unpaired: the difference of the means, the variance pooled
    over both sides' units on n_a + n_b - 2. None when a side has no unit.
    """
    if not a.n or not b.n:
        return None
    b_by_key = dict(zip(b.keys, b.logs, strict=True))
    diffs = [ya - b_by_key[k] for k, ya in zip(a.keys, a.logs, strict=True) if k in b_by_key]
    if diffs:
        n = len(diffs)
        s2 = float(np.var(diffs, ddof=1)) if n >= 2 else math.nan
        return Contrast(float(np.mean(diffs)), s2, n - 1, 1.0 / n, n, n, True)
    d = a.n + b.n - 2
    ss = float(np.sum((np.asarray(a.logs) - a.mean) ** 2) + np.sum((np.asarray(b.logs) - b.mean) ** 2))
    s2 = ss / d if d > 0 else math.nan
    return Contrast(a.mean - b.mean, s2, d, 1.0 / a.n + 1.0 / b.n, a.n, b.n, False)


# --------------------------------------------------------------------------- verdicts


def verdict(c: Contrast | None, alpha: float = ALPHA) -> str:
    """A contrast's test at ``alpha`` in the words of ``words``: ``A`` (first side faster), ``B``, ``UNCLEAR`` or
    ``THIN`` (one unit a side)."""
    if c is None or not c.replicated:
        return THIN
    if c.p() >= alpha:
        return UNCLEAR
    return A if c.log_ratio < 0 else B

