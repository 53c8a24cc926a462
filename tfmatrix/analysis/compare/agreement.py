"""How far two runs agree: per-variant deviations, and the seeds' questions' lines matched between them.

The reproducibility target is stated in these terms (the share of variants
and of comparison ratios within 5/10/20%, comparisons reversed); ``compare``
and ``scripts/bench_stability.py`` report them.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..claims.answers import ClaimResult
from ..statistics.stats import deviation
from ..statistics.words import CLEAR, A, B

THRESHOLDS = (0.05, 0.10, 0.20)   # the agreement thresholds the reproducibility target is stated in


@dataclass(frozen=True)
class ComparisonChange:
    """One line of a question, computed from each side: did its answer hold?"""

    question: str
    group: str
    benchmark: str
    config: str
    ratio_a: float
    ratio_b: float
    verdict_a: str              # ``words``: A, B, UNCLEAR or THIN, as RatioCI.verdict
    verdict_b: str

    @property
    def deviation(self) -> float:
        return deviation(self.ratio_a, self.ratio_b)

    @property
    def reversed(self) -> bool:
        """Clear in both runs, in opposite directions."""
        return {self.verdict_a, self.verdict_b} == {A, B}

    @property
    def flipped(self) -> bool:
        """Clear in one run, not in the other."""
        return (self.verdict_a in CLEAR) != (self.verdict_b in CLEAR)


@dataclass(frozen=True)
class Agreement:
    """How many of ``deviations`` lie within each threshold, their median and the worst."""

    n: int
    within: dict[float, int]
    median: float
    worst: float
    worst_what: str = ""

    @classmethod
    def of(cls, items: Sequence[tuple[str, float]]) -> Agreement:
        devs = sorted(d for _, d in items)
        if not devs:
            return cls(0, {t: 0 for t in THRESHOLDS}, math.nan, math.nan)
        worst_what, worst = max(items, key=lambda it: it[1])
        return cls(len(devs), {t: sum(1 for d in devs if d <= t) for t in THRESHOLDS},
                   float(pd.Series(devs).median()), worst, worst_what)

    def share(self, threshold: float) -> float:
        return self.within.get(threshold, 0) / self.n if self.n else math.nan

    def line(self, what: str) -> str:
        if not self.n:
            return f"{what}: none in common"
        shares = ", ".join(f"{self.share(t):.0%} within {t:.0%}" for t in THRESHOLDS)
        return (f"{what}: {self.n} in both; {shares}; median deviation {self.median:.1%}, "
                f"worst {self.worst:.0%} ({self.worst_what})")


def comparison_changes(results_a: Iterable[ClaimResult], results_b: Iterable[ClaimResult]
                       ) -> list[ComparisonChange]:
    """The questions' lines present in both runs, matched by question, cell(s) and configuration."""
    def index(results: Iterable[ClaimResult]) -> dict[tuple[str, ...], Any]:
        out: dict[tuple[str, ...], Any] = {}
        for r in results:
            for cell in r.cells:
                for line in cell.lines:
                    c = line.comparison
                    out[(r.claim.key, c.group, c.benchmark, c.config, c.a_detail, c.b_detail)] = c
        return out

    ia, ib = index(results_a), index(results_b)
    return [ComparisonChange(key[0], key[1], key[2], key[3] + (f" [{key[4]} / {key[5]}]" if key[4] or key[5] else ""),
                             ca.ci.ratio, ib[key].ci.ratio, ca.ci.verdict, ib[key].ci.verdict)
            for key, ca in ia.items() if key in ib]
