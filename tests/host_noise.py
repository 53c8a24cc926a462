"""This host's noise as the tests' simulations draw it: the measured figures, once, and the one draw made from them.

Every seeded simulation of ``tests/`` (``verdict_model``, ``matrix_model``,
``sequential_model``, ``test_steps``) gives each variant its own SD of one
round's log time, lognormal with a median and a 90th percentile: this
host's as measured (``HOST``: docs/measurement.md, 2026-11-26), or the
statistics review's quieter figures (``REVIEW``) where a test asks how the
rules behave on such a host.
"""
from __future__ import annotations

import math

import numpy as np

P90_Z = 1.2815515655446004          # the standard normal's 90th percentile
HOST = (0.114, 0.221)               # a variant's per-round SD (log): median, 90th percentile, measured here
REVIEW = (0.07, 0.17)               # the statistics review's (../shared/reviews/STATS-REVIEW.md)


def sds(rng: np.random.Generator, shape: int | tuple[int, ...], median: float = HOST[0],
        p90: float = HOST[1]) -> np.ndarray:
    """Per-variant SDs, lognormal with this median and 90th percentile (all ``median`` when ``p90 <= median``,
    drawing nothing)."""
    if p90 <= median:
        return np.full(shape, median)
    return median * np.exp(math.log(p90 / median) / P90_Z * rng.standard_normal(shape))
