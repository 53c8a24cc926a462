"""A fixed reference workload: how fast the interpreter running it is just now.

Timed by the host between slices (``tfmatrix.execution.hostspeed``: the
host's own Python) and by every slice's process inside its cell, before and
after its variants (``run.run_slice``: the cell's Python, in its
container). Pure Python, no threads to schedule, about 15 ms here, the best
of three. Across cells the numbers are not comparable (each cell has its own
Python); across the rounds and runs of one cell they are: a cell whose every
variant moved while its own reference did not moved in TensorFlow, not in
its container.
"""
from __future__ import annotations

import hashlib
import time

REPEATS = 3


def work() -> int:
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
        work()
        best = min(best, time.perf_counter() - t0)
    return best
