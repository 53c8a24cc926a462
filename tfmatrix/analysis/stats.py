"""Statistics the report computes from raw samples: quantiles, ratios, bootstrap CIs, "% faster".

Every number shown comes from a record's raw per-iteration samples, never
from its mean: medians and quartiles use linear interpolation (numpy's
default, the same as ``suite.stats``), and confidence intervals resample the
samples themselves.
"""
from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240515
CONFIDENCE = 0.95

# What "the time" of a variant is, everywhere in the report: a low quantile of its per-repeat times.
# Interference on a shared host only ever adds time, and it comes and goes; samples spread over a
# cell's run (interleaved) catch the quiet moments, and their low quantile reproduces from run to
# run where the median, which tracks how busy the host was, does not (docs/measurement.md: "How it measures").
# The median stays beside it in every table, as what a call typically cost under that load.
ESTIMATOR_Q = 0.10
ESTIMATOR = "p10"


def estimate(values: Sequence[float]) -> float:
    """The report's time for a set of samples: their 10th percentile (linear interpolation)."""
    return float(np.quantile(np.asarray(values, dtype=float), ESTIMATOR_Q))


@dataclass(frozen=True)
class Spread:
    """Median and quartiles of raw samples."""

    n: int
    median: float
    q1: float
    q3: float
    minimum: float
    maximum: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


def spread(samples: Sequence[float]) -> Spread | None:
    """Median and quartiles of ``samples`` (None when there are none)."""
    values = np.asarray([float(s) for s in samples if s is not None and math.isfinite(float(s))], dtype=float)
    if values.size == 0:
        return None
    q1, med, q3 = np.percentile(values, [25.0, 50.0, 75.0])
    return Spread(int(values.size), float(med), float(q1), float(q3), float(values.min()), float(values.max()))


@dataclass(frozen=True)
class RatioCI:
    """Ratio a/b with a bootstrap confidence interval, and the noise it must beat to be a finding.

    ``paired``: the ratio is the median of per-round ratios of two variants
    sampled in the same rounds of one process (a host slowdown hits both
    sides of a pair alike and cancels); otherwise the ratio of the two
    medians. ``noise`` is the measured between-process (or run-to-run)
    spread of the two sides, relative (0.1 = 10%): a difference inside it is
    never called clear, however narrow the interval.
    """

    ratio: float
    low: float
    high: float
    n_a: int
    n_b: int
    resamples: int
    confidence: float = CONFIDENCE
    paired: bool = False
    noise: float = 0.0
    rerun: float | None = None          # the same ratio in the previous run, when there is one
    rounds: int = 0                     # paired by round of an interleaved run: how many rounds it rests on

    @property
    def within_noise(self) -> bool:
        """The ratio is closer to 1 than the measured noise: not a finding, whatever the interval."""
        return 1.0 / (1.0 + self.noise) <= self.ratio <= 1.0 + self.noise

    @property
    def clear(self) -> bool:
        """The interval excludes 1 and the difference exceeds the measured noise."""
        return (self.high < 1.0 or self.low > 1.0) and not self.within_noise

    @property
    def verdict(self) -> str:
        """"a" (a is faster), "b" (b is faster) or "unclear"."""
        if not self.clear:
            return "unclear"
        return "a" if self.high < 1.0 else "b"


def deviation(x: float, y: float) -> float:
    """How far apart two positive times (or ratios) are, symmetric in x and y: max/min - 1 (0.05 = 5%)."""
    lo, hi = min(x, y), max(x, y)
    if lo <= 0 or not math.isfinite(hi):
        return math.inf
    return hi / lo - 1.0


def noise_of(*per_process_sets: Sequence[Sequence[float]]) -> float:
    """The largest between-process spread (``deviation`` of the processes' times) over the sides; 0 with one."""
    worst = 0.0
    for per_process in per_process_sets:
        times = [estimate(p) for p in per_process if len(p)]
        if len(times) >= 2 and min(times) > 0:
            worst = max(worst, deviation(min(times), max(times)))
    return worst


def _rng(key: str) -> np.random.Generator:
    """A generator seeded from a fixed seed and ``key``: same data, same interval, in any order."""
    return np.random.Generator(np.random.PCG64([BOOTSTRAP_SEED, zlib.crc32(key.encode("utf-8"))]))


def _resampled_estimates(groups: Sequence[Sequence[float]], resamples: int, rng: np.random.Generator,
                       q: float = 0.5) -> np.ndarray:
    """Medians of ``resamples`` bootstrap resamples.

    With several processes of equal length the resampling is two-level
    (processes, then samples within each chosen process), so the spread
    between fresh processes widens the interval as it should; otherwise the
    samples are resampled as one pool.
    """
    groups = [list(g) for g in groups if len(g)]
    lengths = {len(g) for g in groups}
    if len(groups) >= 2 and len(lengths) == 1:
        arr = np.asarray(groups, dtype=float)                     # (P, m)
        p, m = arr.shape
        pick_p = rng.integers(0, p, size=(resamples, p))          # which processes
        pick_s = rng.integers(0, m, size=(resamples, p, m))       # which samples in each
        values = arr[pick_p[:, :, None], pick_s].reshape(resamples, p * m)
        return np.quantile(values, q, axis=1)
    pooled = np.asarray([v for g in groups for v in g], dtype=float)
    pick = rng.integers(0, pooled.size, size=(resamples, pooled.size))
    return np.quantile(pooled[pick], q, axis=1)


def ratio_ci(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], key: str = "",
             resamples: int = BOOTSTRAP_RESAMPLES, confidence: float = CONFIDENCE,
             noise: float | None = None) -> RatioCI | None:
    """estimate(a) / estimate(b) (the report's time: the 10th percentile) with a percentile bootstrap interval.

    ``a`` and ``b`` are per-process sample lists (a record's ``per_process``;
    a single list of samples is one process). Each side is resampled with
    replacement on its own; the interval is the central ``confidence`` of
    the resampled ratios. ``key`` seeds the generator, so a report is
    reproducible. ``noise`` defaults to the sides' own between-process
    spread. None when a side has no positive time.
    """
    na = sum(len(g) for g in a)
    nb = sum(len(g) for g in b)
    if na == 0 or nb == 0:
        return None
    med_a = estimate([v for g in a for v in g])
    med_b = estimate([v for g in b for v in g])
    if med_b <= 0 or med_a <= 0:
        return None
    rng = _rng(key)
    boot_a = _resampled_estimates(a, resamples, rng, ESTIMATOR_Q)
    boot_b = _resampled_estimates(b, resamples, rng, ESTIMATOR_Q)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = boot_a / boot_b
    low, high = _interval(ratios, confidence)
    return RatioCI(med_a / med_b, low, high, na, nb, resamples, confidence,
                   noise=noise_of(a, b) if noise is None else noise)


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


def paired_ratio_ci(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], key: str = "",
                    resamples: int = BOOTSTRAP_RESAMPLES, confidence: float = CONFIDENCE,
                    noise: float | None = None) -> RatioCI | None:
    """The median of per-round ratios a_i/b_i of two variants sampled in the same rounds, with an interval.

    Process p's sample i of ``a`` and of ``b`` were taken in the same round,
    a few bouts apart; their ratio cancels whatever slowed the host during
    that round. Rounds are resampled within processes (processes first when
    there are several), like ``ratio_ci``. ``noise`` defaults to the
    between-process spread of the per-process ratio medians: pairing cancels
    a slow host, not a process that is slow for one side only. None when no
    round has both samples.
    """
    groups = []
    for pa, pb in zip(a, b, strict=False):
        n = min(len(pa), len(pb))
        pairs = [float(x) / float(y) for x, y in zip(pa[:n], pb[:n], strict=True) if x > 0 and y > 0]
        if pairs:
            groups.append(pairs)
    if not groups:
        return None
    n = sum(len(g) for g in groups)
    ratio = float(np.median([r for g in groups for r in g]))
    boot = _resampled_estimates(groups, resamples, _rng(key))
    low, high = _interval(boot, confidence)
    return RatioCI(ratio, low, high, n, n, resamples, confidence, paired=True,
                   noise=noise_of(groups) if noise is None else noise)


# Student's t, two-sided 95% (0.975 quantile) for 1-30 degrees of freedom; the normal's 1.96 beyond.
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_975(df: float) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (rounded down: the wider interval)."""
    k = int(math.floor(df))
    if k < 1:
        return math.inf
    return T_975[k - 1] if k <= len(T_975) else 1.96


def round_paired_ratio_ci(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], rounds_a: Sequence[str],
                          rounds_b: Sequence[str], key: str = "", resamples: int = BOOTSTRAP_RESAMPLES,
                          confidence: float = CONFIDENCE) -> RatioCI | None:
    """Two cells' variants measured in the same rounds of an interleaved run: the median of per-round ratios.

    Round r's process of ``a`` and of ``b`` ran in the same turn (seconds to
    minutes apart), so the ratio of their times (each the report's estimator
    over that process's samples) cancels how fast the host was during that
    turn. The ratio is the report's time of each side over all its samples
    (the estimator that reproduces best from run to run: measured, docs/measurement.md
    "How it measures"); the interval around it is as wide as Student's t on
    the per-round log ratios makes it (a paired t-test: with three rounds a
    bootstrap cannot see past its own three values), and the noise is their
    standard deviation: the measured round-to-round noise of this
    comparison. None with fewer than two common rounds.
    """
    by_round_b = {tag: list(pb) for tag, pb in zip(rounds_b, b, strict=False) if len(pb)}
    ratios = []
    for tag, pa in zip(rounds_a, a, strict=False):
        pb = by_round_b.get(tag)
        if pb and len(pa):
            ea, eb = estimate(pa), estimate(pb)
            if ea > 0 and eb > 0:
                ratios.append(ea / eb)
    if len(ratios) < 2:
        return None
    logs = np.log(np.asarray(ratios))
    n = len(ratios)
    sd = float(logs.std(ddof=1))
    half = t_975(n - 1) * sd / math.sqrt(n)
    ratio = estimate([v for g in a for v in g]) / estimate([v for g in b for v in g])
    return RatioCI(ratio, ratio * math.exp(-half), ratio * math.exp(half), n, n, 0, confidence,
                   paired=True, noise=math.expm1(sd), rounds=n)


def process_times(per_process: Sequence[Sequence[float]]) -> list[float]:
    """Each process's time (the report's estimator over its own samples)."""
    return [estimate(p) for p in per_process if len(p) and estimate(p) > 0]


def welch_ratio_ci(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], shift: float = 1.0,
                   confidence: float = CONFIDENCE) -> RatioCI | None:
    """a/b for two runs that cannot be paired (two runs of the matrix): Welch's t on log process times.

    Each side's fresh processes (its rounds) are its independent measurements;
    the interval comes from the spread between them (the run-to-run noise the
    rounds measured), with Welch's degrees of freedom. ``shift``: a/b that the
    whole comparison moved by in common (the host's mood between the runs,
    ``compare --normalise``), taken out of the ratio and its interval. The
    ratio shown is the report's estimator over all samples. None unless both
    sides have two processes or more.
    """
    ta, tb = process_times(a), process_times(b)
    if len(ta) < 2 or len(tb) < 2:
        return None
    la, lb = np.log(ta), np.log(tb)
    va, vb = float(la.var(ddof=1)) / len(ta), float(lb.var(ddof=1)) / len(tb)
    se = math.sqrt(va + vb)
    if se > 0:
        df = (va + vb) ** 2 / ((va ** 2 / (len(ta) - 1) if va else 0.0) + (vb ** 2 / (len(tb) - 1) if vb else 0.0))
    else:
        df = float(len(ta) + len(tb) - 2)
    half = t_975(df) * se
    ratio = estimate([v for g in a for v in g]) / estimate([v for g in b for v in g]) / shift
    noise = math.expm1(math.sqrt((float(la.var(ddof=1)) + float(lb.var(ddof=1))) / 2.0))
    return RatioCI(ratio, ratio * math.exp(-half), ratio * math.exp(half), sum(len(g) for g in a),
                   sum(len(g) for g in b), 0, confidence, noise=noise, rounds=0)


def same_windows(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Two records were sampled in the same windows (process by process): their samples pair up round by round."""
    return bool(a) and len(a) == len(b) and all(x is not None and x == y for x, y in zip(a, b, strict=True))


def pct_faster(ratio: float) -> float:
    """Seed 000's signed "% faster" of side a over side b, from the time ratio a/b.

    Magnitude ``(longer/shorter - 1) * 100`` (the seed writes it
    ``(1 - longer_time/shorter_time) * 100`` and takes the sign from who is
    faster): positive when a is faster (ratio < 1), negative when b is. A
    ratio of 1/3.76 is "+276%", a ratio of 1.47 is "-47%". Monotone in the
    ratio, so the ends of a ratio interval map to the ends of a % interval.
    """
    if ratio <= 0 or not math.isfinite(ratio):
        return math.nan
    if ratio < 1.0:
        return (1.0 / ratio - 1.0) * 100.0
    return -(ratio - 1.0) * 100.0
