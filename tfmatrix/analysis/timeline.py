"""The timeline's verdict rule: a verdict changed only where two neighbouring releases' intervals are apart.

A verdict that differs from the previous release's while the two intervals
overlap is no change: the ratio moved less than the noise measured, and a
ratio near the edge of "no clear difference" flickers between two runs of
the same code (two whole timelines, 2026-11-25: 17 of 238 verdicts differed,
all of them such neighbours). Those are counted, not marked. Pure: the
``timeline`` command (``history.timeline``) and the report's Timeline section
(``report.timeline_view``) both apply it from here.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from .claims.answers import HOLDS, REVERSED
from .statistics.words import THIN, UNCLEAR

DECIDED = (HOLDS, REVERSED, UNCLEAR, THIN)     # a line measured in the cell (one round: its ratio, no interval)
Reading = tuple[str, float, float]          # (verdict, low, high) of one release's point


def reading(verdict: str, low: float | None, high: float | None) -> Reading:
    """One release's point as the rule reads it; no interval (one process a side) spans everything: never apart."""
    return verdict, low if low is not None else 0.0, high if high is not None else math.inf


def changed(a: Reading, b: Reading) -> bool:
    """The verdict differs between two releases AND their 95% intervals do not overlap (beyond the noise)."""
    (va, la, ha), (vb, lb, hb) = a, b
    return va != vb and (ha < lb or hb < la)


def verdict_steps(readings: Sequence[Reading]) -> tuple[list[int], int]:
    """Over consecutive measured releases: each ``i`` where ``i -> i+1`` ``changed``, and how many flickered.

    A flicker: neighbours whose verdicts differ while their intervals overlap.
    The one place that applies the rule along a timeline (report and command).
    """
    pairs = list(zip(readings, readings[1:], strict=False))
    moves = [i for i, (a, b) in enumerate(pairs) if changed(a, b)]
    return moves, sum(1 for a, b in pairs if a[0] != b[0]) - len(moves)


def verdict_counts(verdicts: Sequence[str]) -> str:
    """'holds in 15, no clear difference in 9' (most frequent first)."""
    return ", ".join(f"{v} in {n}" for v, n in Counter(verdicts).most_common())
