"""Descriptive statistics of raw samples: the report's time, quantiles, spreads.

Every number shown comes from a record's raw per-iteration samples, never
from its mean: medians and quartiles use linear interpolation (numpy's
default, the same as ``suite.stats``). Ratios, intervals and verdicts are
``inference``'s (one estimator, one unit, one test).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

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


def same_windows(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Two records were sampled in the same windows (process by process): their samples pair up round by round."""
    return bool(a) and len(a) == len(b) and all(x is not None and x == y for x, y in zip(a, b, strict=True))

