"""Two versions of a benchmark file measured as one: the A/B of ``tfmatrix ab``.

Laaber et al. (2019) found that on shared cloud hosts only measuring both
versions in the same run, in the same instance, finds slowdowns of 10% and
less; two separate runs cannot. Here both versions share more than the run:
a benchmark that the ``base`` and ``head`` files both define becomes one
``Sides`` benchmark whose variants are each side's, with ``side=<name>``
added to their parameters, the two sides of the same parameters next to
each other. Consecutive variants of one benchmark are one window
(``worker.windows``): built in the same process, sampled round robin, so the
host pairs the two sides process by process and whatever the process or
the host did to one it did to the other.

A side's file that fails to import, or that lacks a benchmark the other
defines, costs only what it lacks: its ``BrokenFile`` variant and the
variants of the other side are still measured, and the host lists what has
no partner.

Which side goes first in a process (is imported first, builds first in each
pair, takes the first bout) is a position that may help whoever holds it.
Drawn afresh in each process it only became noise the rounds must beat, and
a run of a few rounds could draw one side first in most of them; so an
``ab`` process is told its ``Order`` (``lead_side``: the two sides take
turns, round after round, from a side the run's seed draws), builds each
window as a ``crossover`` and records the side that led, and the host tests
whether the order mattered (``tfmatrix.analysis.compare.order``).
"""
from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any, Dict, List, NamedTuple, Sequence, Tuple

from .definitions import Benchmark, Prepared, Preset, Variant
from .schema import SIDE_PARAM

PAIRS_PER_WINDOW = 8      # both sides of 8 parameter sets: 16 variants, within every preset's window


def with_side(variant: Variant, side: str) -> Variant:
    """``variant`` with ``side=<side>`` among its parameters, before ``api`` and ``mode``."""
    own = [(k, v) for k, v in variant.params if k not in ("api", "mode")]
    tail = [(k, v) for k, v in variant.params if k in ("api", "mode")]
    return Variant(variant.benchmark, variant.seed, tuple(own + [(SIDE_PARAM, side)] + tail), variant.mode,
                   variant.api, variant.timeout, variant.always)


def without_side(variant: Variant) -> Tuple[str, Variant]:
    """The side a variant belongs to, and the variant as that side's own benchmark listed it."""
    side = str(variant.param(SIDE_PARAM))
    params = tuple((k, v) for k, v in variant.params if k != SIDE_PARAM)
    return side, Variant(variant.benchmark, variant.seed, params, variant.mode, variant.api, variant.timeout,
                         variant.always)


class Sides(Benchmark):
    """One benchmark name, one implementation per side; its variants interleave the sides."""

    def __init__(self, name: str, by_side: "OrderedDict[str, Benchmark]") -> None:
        first = next(iter(by_side.values()))
        self.name = name
        self.seed = first.seed
        self.title = first.title
        self.description = first.description
        self.by_side = by_side
        self._chunk: Dict[str, int] = {}

    def variants(self, preset: Preset) -> List[Variant]:
        together: "OrderedDict[str, List[Variant]]" = OrderedDict()
        for side, bench in self.by_side.items():
            for v in bench.variants(preset):
                together.setdefault(v.id, []).append(with_side(v, side))
        out: List[Variant] = []
        for index, group in enumerate(together.values()):
            for v in group:
                self._chunk[v.id] = index // PAIRS_PER_WINDOW
                out.append(v)
        return out

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        side, own = without_side(variant)
        return self.by_side[side].prepare(own, env)

    def window_key(self, variant: Variant) -> str:
        """Both sides of a parameter set in one window: windows end between pairs, never inside one."""
        return "%s#%d" % (self.name, self._chunk.get(variant.id, 0))


def pair_up(sided: Sequence[Tuple[str, Sequence[Benchmark]]]) -> List[Benchmark]:
    """Each side's benchmarks (``[(side, benchmarks)]``, in side order) as ``Sides``, in first-seen name order."""
    by_name: "OrderedDict[str, OrderedDict[str, Benchmark]]" = OrderedDict()
    for side, benchmarks in sided:
        for bench in benchmarks:
            by_name.setdefault(bench.name, OrderedDict())[side] = bench
    return [Sides(name, by_side) for name, by_side in by_name.items()]


def lead_side(sides: Sequence[str], seed: int, pass_no: int, process: int = 0) -> str:
    """The side that goes first in one process of an ``ab`` run: the seed draws round 1's, then the sides take turns
    round after round (and process after process within a round), so every two processes each side led once and a
    position's help cancels in the mean, whichever side it falls to."""
    return sides[(seed + pass_no + process) % len(sides)]


class Order(NamedTuple):
    """How one ``ab`` process orders its windows: ``lead``'s side first in each pair, the pairs' order and the builds'
    heap pads drawn from ``seed`` (the run's seed, its round and the process: recorded, so a run replays)."""

    lead: str
    seed: str

    def arg(self) -> str:
        """As the worker's ``--order`` takes it."""
        return "%s:%s" % (self.lead, self.seed)

    @classmethod
    def parse(cls, text: str) -> "Order":
        lead, _, seed = text.partition(":")
        return cls(lead, seed)

    def rng(self, window: int) -> random.Random:
        """The draws of the process's ``window``-th window (a string seed: the same in every Python)."""
        return random.Random("%s/%d" % (self.seed, window))


def crossover(window: Sequence[Variant], lead: str, rng: random.Random) -> List[Variant]:
    """A window of ``Sides`` variants in build order: its pairs (one parameter set's sides) in a random order, each
    pair's ``lead`` side first, so the two sides of a case differ in nothing but the order the process gave them."""
    pairs: "OrderedDict[str, List[Variant]]" = OrderedDict()
    for v in window:
        pairs.setdefault(without_side(v)[1].id, []).append(v)
    keys = list(pairs)
    rng.shuffle(keys)
    return [v for k in keys for v in sorted(pairs[k], key=lambda v: str(v.param(SIDE_PARAM)) != lead)]
