"""The verdict words, each defined once, and the one reading of an interval they come from (``direction``).

Every answer the report gives reads a time ratio's interval the same way:
the first side faster (``A``), the second (``B``), an interval that holds 1
(``UNCLEAR``), or no interval at all (``THIN``: one process a side, nothing
to say either way). What a question calls those directions is its own
(a claim holds or is reversed, a run got faster or slower) and is made from
these; "no clear difference" and "not enough replication" read the same
wherever they show.
"""
from __future__ import annotations

A = "a"                                 # the first side is faster (its interval lies below 1)
B = "b"                                 # the second side is faster (its interval lies above 1)
UNCLEAR = "no clear difference"         # the interval holds 1
THIN = "not enough replication"         # one process a side: no interval, so no verdict either way
CLEAR = (A, B)
FASTER, SLOWER = "faster", "slower"     # a change: the second side (B, the newer run) against the first
CHANGED = (FASTER, SLOWER)


def direction(replicated: bool, low: float, high: float) -> str:
    """``A``, ``B``, ``UNCLEAR`` or ``THIN``: what a time ratio's interval (first side over second) says."""
    if not replicated:
        return THIN
    if high < 1.0:
        return A
    if low > 1.0:
        return B
    return UNCLEAR
