"""A picture of the host: one fixed workload, timed between slices, the same binary every time.

The cells' own numbers cannot tell a slow TensorFlow from a slow host; a
fixed reference can. It runs in the tfmatrix process itself (the host's
Python, never a cell's), is pure Python (no numpy threads to schedule) and
takes about 15 ms here, the best of three: between two slices of a run it shows
how fast the machine was just then. The series goes into every cell file
(``config.host_speed``) and onto the report's chart of the run.
"""
from __future__ import annotations

import hashlib
import time

REPEATS = 3


def _work() -> int:
    """A fixed mix of interpreter dispatch, integer arithmetic and hashing."""
    acc = 0
    for i in range(200000):
        acc = (acc * 31 + i) % 1000003
    digest = hashlib.sha256()
    for _ in range(2000):
        digest.update(b"tfmatrix" * 64)
    return acc ^ digest.digest()[0]


def probe(repeats: int = REPEATS) -> float:
    """Seconds the reference workload takes now: the best of ``repeats``."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        _work()
        best = min(best, time.perf_counter() - t0)
    return best
