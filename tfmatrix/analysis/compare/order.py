"""Did a case's head-against-base ratio depend on which side went first? The order test of ``ab``.

Duplyakin et al. ("Avoiding the Ordering Trap in Systems Performance
Measurement", USENIX ATC 2023) found that what runs first, and what runs
before what, moves results often enough that a measurement should test for it
rather than assume it away. Inside an ``ab`` process the two sides of a case
are built and sampled one after the other, so one of them always goes first
(its file imported first, its model built first, its first bout taken
first). Drawn afresh in each process, that position was noise the rounds had
to beat, and a run of a few rounds could draw the same side first in most of
them: an unchanged case then came out a few percent apart with a narrow
interval. Now the processes take turns (``suite.sides.lead_side``: over
every two rounds each side went first once) and each record says which side
did (``schedule.leads``).

So each case's rounds are a crossover: its per-round contrasts (log
head/base, both sides in one process, each process's own effect cancelling)
fall into rounds with base first and rounds with head first. The order
effect is the difference of the two groups' means; its test is the two-sample
t on the variance pooled within the groups, moderated across the case's
family like the contrast's own variance (``moderation.moderate``, with the
same early limits). A case whose order effect is beyond the noise at
``ORDER_ALPHA`` is **order-dependent**: its run cannot tell a change of the
code from one of position, so it gets no verdict (neither "slower" nor
"faster"), the gate judges it on its ratio moved towards 1 by half the two
orders' difference (``OrderTest.discounted``: a slowdown beyond what position
moves still fails it), and its line says how far apart the two orders came
out. A case whose rounds are all one order, or one round of each with no
family to lend a variance (round 2), is not testable (None): the balanced
mean is still what its verdict rests on.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..statistics.inference import Contrast, Side, contrast, side_of
from ..statistics.moderation import Limit, moderate

ORDER_ALPHA = 0.01      # two-sided; on null data about 1 case in 100 is called order-dependent (tests/test_ab_order.py)
ORDER_DEPENDENT = "order-dependent"


@dataclass(frozen=True)
class Crossover:
    """One case's rounds: per round its contrast (log head/base, paired in the process) and the side that went
    first in that process ("" where the records do not say, or its two sides disagree)."""

    diffs: tuple[float, ...]
    leads: tuple[str, ...]

    def group(self, side: str) -> tuple[float, ...]:
        """The contrasts of the rounds in which ``side`` went first."""
        return tuple(d for d, lead in zip(self.diffs, self.leads, strict=True) if lead == side)


def crossover(per_process_a: Sequence[Sequence[float]], windows_a: Sequence[str | None], leads_a: Sequence[str],
              per_process_b: Sequence[Sequence[float]], windows_b: Sequence[str | None], leads_b: Sequence[str],
              ) -> Crossover:
    """A case's ``Crossover`` from its two sides' records (A base, B head): per process its samples, the window it
    was sampled in (which pairs the sides) and the side that led; rounds are paired as ``compare`` pairs them."""
    def unit(per_process: Sequence[Sequence[float]], windows: Sequence[str | None], leads: Sequence[str],
             label: str) -> tuple[Side, dict[str, str]]:
        keys = [str(w) if w is not None else "" for w in windows] if len(windows) == len(per_process) else []
        led = {k: str(x) for k, x in zip(keys, leads, strict=True) if k} if len(leads) == len(keys) else {}
        return side_of(per_process, keys, label=label), led

    (a, led_a), (b, led_b) = (unit(per_process_a, windows_a, leads_a, "a"),
                              unit(per_process_b, windows_b, leads_b, "b"))
    b_by_key = dict(zip(b.keys, b.logs, strict=True))
    shared = [(k, y) for k, y in zip(a.keys, a.logs, strict=True) if k in b_by_key]
    return Crossover(tuple(b_by_key[k] - y for k, y in shared),
                     tuple(led_a.get(k, "") if led_a.get(k, "") == led_b.get(k, "") else "" for k, _ in shared))


@dataclass(frozen=True)
class OrderTest:
    """A case's order effect: its contrast with head first against with base first, and whether that is beyond the
    noise (``flagged``: then the case is ``ORDER_DEPENDENT``)."""

    sides: tuple[str, str]          # (base, head)
    means: tuple[float, float]      # mean log head/base in the rounds with base first, with head first
    contrast: Contrast              # log of (head first) / (base first), its variance moderated; n_a: head first
    alpha: float = ORDER_ALPHA

    @property
    def firsts(self) -> tuple[int, int]:
        """Rounds with base first, with head first."""
        return self.contrast.n_b, self.contrast.n_a

    @property
    def p(self) -> float:
        return self.contrast.p()

    @property
    def flagged(self) -> bool:
        """The order moved the contrast beyond the noise (a two-sided test at ``alpha``)."""
        return self.contrast.replicated and self.p < self.alpha

    @property
    def why(self) -> str:
        """One line: how far apart the two orders came out, and what that means for the verdict."""
        (base, head), (n_base, n_head) = self.sides, self.firsts
        return (f"{head}/{base} {math.exp(self.means[0]):.3f} in the {n_base} round(s) with {base} first, "
                f"{math.exp(self.means[1]):.3f} in the {n_head} with {head} first (order test p = {self.p:.2g}): "
                "which side runs first moves it beyond the noise, so the run cannot tell a change of the code from "
                "one of position (no verdict; the gate takes off what position moves it by)")

    def discounted(self, c: Contrast) -> Contrast:
        """The case's contrast moved towards 1 by half the two orders' difference (never past it): about what the
        order kinder to it saw, which is what the gate judges an order-dependent case on, so that only a change
        beyond what position moves can fail it."""
        half = abs(self.contrast.log_ratio) / 2
        return replace(c, log_ratio=math.copysign(max(0.0, abs(c.log_ratio) - half), c.log_ratio))


def order_tests(cases: Sequence[Crossover], groups: Sequence[Hashable], families: Sequence[Hashable],
                limits: Sequence[Limit | None] | None = None, sides: tuple[str, str] = ("base", "head"),
                alpha: float = ORDER_ALPHA) -> list[OrderTest | None]:
    """Each case's order test (None: untestable), the within-group variances moderated across ``groups`` (or, for
    a small group, ``families``) as ``moderation.judge`` moderates the contrasts; ``limits``: per case, what the
    prior may lend it early. Early or not, a case keeps of the family's prior only its share by its own rounds
    (``robust_d0``'s tail, never the whole prior): a case noisier than its mates, shrunk whole, was flagged 2.5% of
    the time at 4 rounds on null data, and a false flag takes a verdict away."""
    raw: list[Contrast | None] = []
    means: list[tuple[float, float]] = []
    for case in cases:
        base_first, head_first = case.group(sides[0]), case.group(sides[1])
        means.append((float(np.mean(base_first)) if base_first else math.nan,
                      float(np.mean(head_first)) if head_first else math.nan))
        raw.append(contrast(Side(tuple(f"h{i}" for i in range(len(head_first))), head_first),
                            Side(tuple(f"b{i}" for i in range(len(base_first))), base_first))
                   if base_first and head_first else None)
    shared = Limit(math.inf, early=False)         # at the cap (or with no look): only the tail's share
    shrunk = moderate(raw, groups, families, [limit or shared for limit in limits or [None] * len(raw)])
    return [OrderTest(sides, m, c, alpha) if c is not None and c.replicated else None
            for c, m in zip(shrunk, means, strict=True)]
