"""Summary statistics for timing samples.

Pure Python (no numpy) so the numbers the suite reports do not depend on the
numpy version a cell happens to pin. Python 3.7 compatible: no
``statistics.quantiles`` (3.8+).
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default, 'type 7')."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("quantile of no values")
    if n == 1:
        return float(sorted_values[0])
    pos = (n - 1) * q
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return float(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac)


def median(values: Sequence[float]) -> float:
    return quantile(sorted(values), 0.5)


def median_ci(values: Sequence[float], z: float = 1.96) -> "tuple":
    """Distribution-free 95% interval of the median: order statistics around n/2.

    The number of samples below the true median is Binomial(n, 1/2); the
    interval runs from the sample at rank n/2 - z*sqrt(n)/2 to the one at
    n/2 + z*sqrt(n)/2 (normal approximation, conservative rounding). Needs
    no assumption about the shape of the noise, which on a shared host is
    skewed and often bimodal. (nan, nan) with fewer than 6 samples, where no
    pair of order statistics covers 95%.
    """
    n = len(values)
    if n < 6:
        return (math.nan, math.nan)
    s = sorted(values)
    half = z * math.sqrt(n) / 2.0
    lo = max(0, int(math.floor(n / 2.0 - half)))
    hi = min(n - 1, int(math.ceil(n / 2.0 + half)) - 1)
    return (float(s[lo]), float(s[hi]))


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def stdev(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1); 0.0 for a single value."""
    n = len(values)
    if n < 2:
        return 0.0
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1))


def summarize(values: Sequence[float]) -> Dict[str, float]:
    """The statistics every record carries, from raw per-iteration samples."""
    if not values:
        raise ValueError("no samples to summarize")
    s = sorted(values)
    m = mean(s)
    sd = stdev(s)
    q1 = quantile(s, 0.25)
    q3 = quantile(s, 0.75)
    return {
        "n": len(s),
        "mean": m,
        "std": sd,
        "median": quantile(s, 0.5),
        "q1": q1,
        "q3": q3,
        "iqr": q3 - q1,
        "min": s[0],
        "max": s[-1],
        "cv": (sd / m) if m > 0 else 0.0,
    }


def between_processes(per_process: Sequence[Sequence[float]]) -> Optional[Dict[str, object]]:
    """Spread between the medians of independent processes.

    pyperf's lesson: the variance between two fresh processes (address-space
    layout, thread pools, allocator state) is often larger than within one, so
    it is reported on its own. None when fewer than two processes ran.
    """
    medians = [median(p) for p in per_process if p]
    if len(medians) < 2:
        return None
    mid = median(medians)
    return {
        "processes": len(medians),
        "medians": medians,
        "cv": (stdev(medians) / mean(medians)) if mean(medians) > 0 else 0.0,
        "spread": ((max(medians) - min(medians)) / mid) if mid > 0 else 0.0,
    }


def within_process_cv(per_process: Sequence[Sequence[float]]) -> float:
    """Largest coefficient of variation seen inside one process."""
    cvs = []
    for p in per_process:
        if len(p) >= 2:
            m = mean(p)
            cvs.append(stdev(p) / m if m > 0 else 0.0)
    return max(cvs) if cvs else 0.0


def is_unstable(per_process: Sequence[Sequence[float]], threshold: float) -> bool:
    """A variant is unstable when its spread within or between processes is large.

    Within a process, CV of the repeat samples; between processes, CV of their
    medians. Either one above ``threshold`` means the median should not be
    trusted to the few per cent a cross-version comparison needs.
    """
    between = between_processes(per_process)
    worst = within_process_cv(per_process)
    if between is not None:
        worst = max(worst, float(between["cv"]))  # type: ignore[arg-type]
    return worst > threshold


def all_samples(per_process: Sequence[Sequence[float]]) -> List[float]:
    out: List[float] = []
    for p in per_process:
        out.extend(p)
    return out
