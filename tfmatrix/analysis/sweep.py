"""Where one setting (the GPU) starts to pay, found with few sizes: fit two, predict, verify, bisect.

A preset measures one size of each benchmark, so the Devices section's
crossover (``devices.crossover_at``) has as many points as presets were run.
A log-2 grid over the sizes that matter is 10 or more sizes a device; on a
short GPU loan that is the whole loan. The sweep here asks for at most six
(``MAX_SIZES``), following the synthesis in the outside review
``GPU-CROSSOVER.md`` (StarPU's and Qilin's per-device models; the noisy
bisection of Waeber, Frazier and Henderson, 2013):

1. **calibrate**: both settings at a small and a large size; per setting a
   line time = fixed + per-unit cost x work (``Line``; the work of a matmul
   grows as n^3, of a batch as its size: ``WORK``);
2. **predict** where the lines cross (``predict``);
3. **verify** at the prediction divided and multiplied by the square root of
   ``WITHIN`` (a factor of 2 apart: the review's half and twice leave a 4x
   bracket, and its middle, the prediction itself, is where the two are the
   same, which no number of rounds decides);
4. **bisect** on log size between the largest size where B is not faster and
   the smallest from which it is, until they are within a factor of 2.

Every decision is a verdict, never a point ratio: a size counts as "B slower"
or "B faster" only when its paired interval excludes 1, and a size whose
interval spans 1 gets more rounds (doubling, up to ``MAX_ROUNDS``) before it
is left as "the same". Where B starts to pay is then bracketed by the largest
size where it is decided slower (or, with no slower size, the same) and the
smallest from which it is decided faster at every larger size (``crossing``).
Measuring is the caller's (``Measure``: one size, a number of rounds, paired
and interleaved: ``execution.size_sweep``); this module only chooses sizes
and reads verdicts, so it is tested on a seeded simulation of the host's
noise.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from .devices import SizePoint, crossover_at
from .statistics.words import CHANGED, SLOWER, UNCLEAR

MAX_SIZES = 6          # sizes per axis and configuration, calibration included
MAX_ROUNDS = 12        # an open size gets rounds doubled up to this, then stays "the same"
SAME_MARGIN = 0.05     # a size whose interval lies within 5% of 1 is shown the same: more rounds would not change that
WITHIN = 2.0           # the bracket is done when its ends are within this factor
DECIDED = CHANGED


@dataclass(frozen=True)
class Work:
    """How the work of one call grows with a size axis, and back (to turn a predicted work into a size)."""

    name: str
    power: float                # work = size ** power
    sets: tuple[str, ...] = ()  # the suite parameters (``suite run --set``) that are the size: ``batch_shape[0]``

    def of(self, size: float) -> float:
        return size ** self.power

    def size(self, work: float) -> float:
        return work ** (1.0 / self.power)


WORK = {"n": Work("matrix size n (n^3 multiply-adds)", 3.0, ("n",)),
        "batch": Work("batch size", 1.0, ("batch_shape[0]",)),
        "side": Work("image side (side^2 pixels)", 2.0, ("input_shape[1]", "input_shape[2]"))}


@dataclass(frozen=True)
class Line:
    """time = fixed + per_unit x work: one setting's cost model from two sizes."""

    fixed: float
    per_unit: float

    @classmethod
    def through(cls, w1: float, t1: float, w2: float, t2: float) -> Line:
        per_unit = (t2 - t1) / (w2 - w1) if w2 != w1 else 0.0
        return cls(t1 - per_unit * w1, per_unit)


def predict(a: Line, b: Line) -> float | None:
    """The work at which B's line meets A's, when B costs more to start and less per unit; else None
    (one of the two is cheaper at every work, as far as two sizes can say)."""
    more_fixed, less_per_unit = b.fixed - a.fixed, a.per_unit - b.per_unit
    if more_fixed > 0 and less_per_unit > 0:
        return more_fixed / less_per_unit
    return None


@dataclass(frozen=True)
class Probe:
    """One size measured in both settings: each setting's time (s) and the paired ratio B/A with its verdict."""

    size: float
    time_a: float
    time_b: float
    point: SizePoint
    rounds: int


Measure = Callable[[float, int], Probe]     # (size, rounds) -> the size measured, paired and interleaved


@dataclass
class Sweep:
    """What a sweep measured and found."""

    work: Work
    probes: list[Probe] = field(default_factory=list)
    predicted: float | None = None      # the size the calibration's lines cross at, or None
    bracket: tuple[float, float] | None = None  # (largest size B is slower, smallest from which it is faster)
    pays: tuple[float, float] | None = None     # (largest size B is not faster, smallest from which it is)
    why: str = ""                       # why there is no bracket, or why it is wider than WITHIN

    @property
    def sizes(self) -> list[float]:
        return sorted(p.size for p in self.probes)

    def text(self, b: str = "GPU", a: str = "CPU") -> str:
        """ "the GPU starts to pay between n = 128 and 256 (predicted 181; 5 sizes, 3-12 rounds each)", or why not."""
        rounds = sorted({p.rounds for p in self.probes})
        spent = f"{len(self.probes)} sizes, {rounds[0]}-{rounds[-1]} rounds each" if rounds else "nothing measured"
        guess = f"predicted {_num(self.predicted)}; " if self.predicted else ""
        if self.bracket is None or self.pays is None:
            return f"no crossover shown ({self.work.name}): {self.why} ({guess}{spent})"
        low, high = self.pays
        crosses = "" if self.pays == self.bracket else \
            f"; the ratio crosses 1 between {_num(self.bracket[0])} and {_num(self.bracket[1])}"
        same = sorted(p.size for p in self.probes if p.size <= high and p.point.verdict not in DECIDED)
        zone = f"; the same at {', '.join(_num(x) for x in same)}" if same else ""
        note = f"; {self.why}" if self.why and not (zone and self.why.startswith("the same from")) else ""
        return (f"{b} starts to pay between {_num(low)} and {_num(high)} ({self.work.name}; {guess}{spent}{zone}"
                f"{crosses}{note})")


def _num(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.3g}"


def paying(probes: list[Probe]) -> tuple[tuple[float, float] | None, str]:
    """(largest size where B is not shown faster, smallest from which it is decided faster at every larger size),
    or (None, why): the Devices section's rule (``devices.crossover_at``) on the sweep's sizes."""
    bracket, why = crossover_at([p.point for p in probes])
    return ((bracket.below, bracket.above) if bracket else None), why


def crossing(probes: list[Probe]) -> tuple[tuple[float, float] | None, str]:
    """(lower, upper), why: where the ratio crosses 1, between ``upper`` (the smallest size from which B is decided
    faster at every larger size) and ``lower``: the largest size where it is decided slower, so that the sizes
    where the two are the same lie inside; where no size is slower, the largest where they are the same (and
    ``why`` says so). (None, why) where the sizes show no such change."""
    pays, why = paying(probes)
    if pays is None:
        return None, why
    slower = [p.size for p in probes if p.size < pays[1] and p.point.verdict == SLOWER]
    if slower:
        return (max(slower), pays[1]), ""
    return pays, f"the same from the smallest size, {_num(min(p.size for p in probes))}, up to {_num(pays[0])}"


def shown_same(point: SizePoint, margin: float = SAME_MARGIN) -> bool:
    """A replicated interval inside ``margin`` of 1 either way: the two are the same there, whatever more rounds
    would say about a smaller difference."""
    return point.verdict == UNCLEAR and point.low >= 1 / (1 + margin) and point.high <= 1 + margin


def sweep(measure: Measure, low: float, high: float, work: Work, rounds: int = 2,
          max_sizes: int = MAX_SIZES, max_rounds: int = MAX_ROUNDS, within: float = WITHIN) -> Sweep:
    """Calibrate at ``low`` and ``high``, predict, verify ``within`` apart around the prediction, bisect on log size
    until the bracket is within ``within`` or ``max_sizes`` are spent. Sizes are whole numbers."""
    out = Sweep(work)
    seen: dict[float, Probe] = {}

    def probe(size: float) -> None:
        size = float(min(max(round(size), low), high))
        if size in seen or len(seen) >= max_sizes:
            return
        r = rounds
        p = measure(size, r)
        while p.point.verdict not in DECIDED and not shown_same(p.point) and r < max_rounds:
            r = min(2 * r, max_rounds)
            p = measure(size, r)
        seen[size] = p
        out.probes.append(p)

    probe(low)
    probe(high)
    lo, hi = seen.get(float(round(low))), seen.get(float(round(high)))
    if lo is None or hi is None:
        out.why = "the calibration sizes could not be measured"
        return out
    a = Line.through(work.of(lo.size), lo.time_a, work.of(hi.size), hi.time_a)
    b = Line.through(work.of(lo.size), lo.time_b, work.of(hi.size), hi.time_b)
    w = predict(a, b)
    if w is not None and w > 0:
        out.predicted = work.size(w)
        if low < out.predicted < high:
            below = round(out.predicted / math.sqrt(within))       # whole sizes exactly ``within`` apart
            probe(below)
            probe(below * within)
    while True:
        out.bracket, out.why = crossing(out.probes)
        out.pays = paying(out.probes)[0]
        if out.bracket is None or out.pays is None or out.pays[1] / out.pays[0] <= within:
            break
        before = len(seen)
        probe(math.sqrt(out.pays[0] * out.pays[1]))
        if len(seen) == before:
            out.why = (f"bracketed within {out.pays[1] / out.pays[0]:.1f}x, not {within:g}x: "
                       f"{'the sizes are spent' if len(seen) >= max_sizes else 'no whole size left between'}")
            break
    out.probes.sort(key=lambda p: p.size)
    return out
