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

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240515
CONFIDENCE = 0.95


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
    """Ratio of medians a/b with a percentile bootstrap confidence interval."""

    ratio: float
    low: float
    high: float
    n_a: int
    n_b: int
    resamples: int
    confidence: float = CONFIDENCE

    @property
    def clear(self) -> bool:
        """The interval excludes 1: one side is faster beyond the measured noise."""
        return self.high < 1.0 or self.low > 1.0

    @property
    def verdict(self) -> str:
        """"a" (a is faster), "b" (b is faster) or "unclear"."""
        if self.high < 1.0:
            return "a"
        if self.low > 1.0:
            return "b"
        return "unclear"


def _rng(key: str) -> np.random.Generator:
    """A generator seeded from a fixed seed and ``key``: same data, same interval, in any order."""
    return np.random.Generator(np.random.PCG64([BOOTSTRAP_SEED, zlib.crc32(key.encode("utf-8"))]))


def _resampled_medians(groups: Sequence[Sequence[float]], resamples: int, rng: np.random.Generator) -> np.ndarray:
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
        return np.median(values, axis=1)
    pooled = np.asarray([v for g in groups for v in g], dtype=float)
    pick = rng.integers(0, pooled.size, size=(resamples, pooled.size))
    return np.median(pooled[pick], axis=1)


def ratio_ci(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], key: str = "",
             resamples: int = BOOTSTRAP_RESAMPLES, confidence: float = CONFIDENCE) -> RatioCI | None:
    """median(a) / median(b) with a percentile bootstrap interval.

    ``a`` and ``b`` are per-process sample lists (a record's ``per_process``;
    a single list of samples is one process). Each side is resampled with
    replacement on its own; the interval is the central ``confidence`` of
    the resampled ratios. ``key`` seeds the generator, so a report is
    reproducible. None when a side has no positive median.
    """
    na = sum(len(g) for g in a)
    nb = sum(len(g) for g in b)
    if na == 0 or nb == 0:
        return None
    med_a = float(np.median([v for g in a for v in g]))
    med_b = float(np.median([v for g in b for v in g]))
    if med_b <= 0 or med_a <= 0:
        return None
    rng = _rng(key)
    boot_a = _resampled_medians(a, resamples, rng)
    boot_b = _resampled_medians(b, resamples, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = boot_a / boot_b
    ratios = ratios[np.isfinite(ratios)]
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(ratios, [tail, 100.0 - tail])
    return RatioCI(med_a / med_b, float(low), float(high), na, nb, resamples, confidence)


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


def speedup(ratio: float) -> float:
    """How many times faster the faster side is (>= 1)."""
    return 1.0 / ratio if ratio < 1.0 else ratio
