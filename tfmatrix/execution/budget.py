"""A run's time budget (``--budget 8m``): which rounds, and which open lines in a round, fit the time left.

Why: a borrowed GPU is often lent for minutes. A run that plans its rounds
without the clock either overruns the loan or is cut off mid-round and keeps
nothing replicated; one that knows the clock spends what is left where it
answers most. Round 1 always runs whole (without it no line exists; the
opening line says when its estimate alone is over the budget). Before each
later round the schedule asks what the round would cost, from what each
slice and variant took in this run (``Costs``), and keeps the open lines
that fit, cheapest first: a cheap line replicated is an answer, an
expensive one half-measured is none. What is left out is said per line
("still open after round 2: the budget left 0:40, its round needs ~1:10").

The arithmetic is pure (``affordable``) and takes its costs through the
``Costs`` protocol; ``SliceCosts`` holds a run's own timings (the live
cells' slices and variants, ``costs_of``); ``cut_to_budget`` and
``round_fits`` are what the interleaved schedule asks before a round.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rich.console import Console

from ..analysis.stopping import OPEN, LineState, open_variants
from ..progress import fmt_duration
from .live import LiveCell

# Kept back from the budget for what follows the last round: each cell's file written, the report rendered
# (4 existing-environment cells here: 6-9 s; a report of many cells and charts takes longer).
REPORT_RESERVE_S = 30.0
FEWEST_S = 1           # any budget: one shorter than round 1 means round 1 only (round 1 always runs whole)
MOST_S = 7 * 24 * 3600


def parse_budget(text: str) -> float:
    """``8m``, ``480s``, ``480`` or ``1h`` in seconds; ValueError with the fix otherwise."""
    value = text.strip().lower()
    unit = {"s": 1, "m": 60, "h": 3600}.get(value[-1:])
    number = value[:-1] if unit else value
    try:
        seconds = float(number) * (unit or 1)
    except ValueError:
        raise ValueError(f"{text!r} is not a duration: write seconds (480) or minutes/hours (8m, 1h)") from None
    if not FEWEST_S <= seconds <= MOST_S:
        raise ValueError(f"{text!r} is out of range: use 1 s .. 7 days")
    return seconds


@dataclass
class Budget:
    """The run's clock: ``seconds`` from ``start`` (monotonic), ``reserve_s`` of it kept for the files and report."""

    seconds: float
    start: float = field(default_factory=time.monotonic)
    reserve_s: float = REPORT_RESERVE_S
    rounds: int = 0                 # the whole rounds ``start_round`` let start

    def left(self) -> float:
        """Seconds still free for measuring (negative: over)."""
        return self.seconds - self.reserve_s - (time.monotonic() - self.start)

    def start_round(self, need_s: float, console: Console) -> bool:
        """Whether the next whole round may start: round 1 always, a later one when ``need_s`` fits what is left
        (``round_fits``, which says so when it does not); counts the rounds it lets start."""
        if self.rounds and not round_fits(self, self.rounds + 1, need_s, console):
            return False
        self.rounds += 1
        return True


class Costs(Protocol):
    """What measuring a set of variants again would cost, from what they took so far in this run."""

    def of(self, wanted: Mapping[str, set[str]]) -> float:
        """Seconds one round of ``wanted`` (per cell, variant ids) would take: each slice it touches once (a
        fresh process: its start and imports) plus each variant's own time."""
        ...


@dataclass(frozen=True)
class Fitted:
    """A round cut to the budget: the open lines it measures, those it leaves open, and its estimate."""

    kept: tuple[LineState, ...]
    left_out: tuple[LineState, ...]
    cost_s: float
    left_s: float
    alone_s: Mapping[tuple[str, str, str, str], float] = field(default_factory=dict)   # each open line on its own

    def why(self, round_no: int, line: LineState) -> str:
        """What a line left out says (its stop), in the cell file and the report."""
        return "still open after round %d: the budget left %s, too little to measure it again (~%s)" % (
            round_no, fmt_duration(max(0.0, self.left_s)), fmt_duration(self.alone_s.get(line.key, 0.0)))


def variants_of(lines: Iterable[LineState]) -> dict[str, set[str]]:
    """Per cell, the variants ``lines`` need (both sides', each in its own cell)."""
    out: dict[str, set[str]] = {}
    for s in lines:
        for cell, vid in (s.a, s.b):
            out.setdefault(cell, set()).add(vid)
    return out


def affordable(states: Sequence[LineState], costs: Costs, left_s: float) -> Fitted:
    """The open lines of ``states`` that one more round can measure within ``left_s``: cheapest first (each at
    what it adds to those already kept, so lines that share a slice or a variant are cheap together), a line
    kept only while the whole round still fits. Lines already decided or the same are not measured again."""
    open_lines = [s for s in states if s.state == OPEN]
    alone = {s.key: costs.of(variants_of([s])) for s in open_lines}
    kept: list[LineState] = []
    left_out: list[LineState] = []
    cost = 0.0
    for s in sorted(open_lines, key=lambda s: (alone[s.key], s.key)):
        with_it = costs.of(variants_of([*kept, s]))
        if with_it <= left_s:
            kept.append(s)
            cost = with_it
        else:
            left_out.append(s)
    return Fitted(tuple(kept), tuple(left_out), cost, left_s, alone)


@dataclass(frozen=True)
class SliceCosts:
    """``Costs`` from one run's own timings: each slice's fixed part (its process start, beyond its variants)
    and each variant's time, per cell; a variant not timed yet costs the mean of its cell's timed variants."""

    slices: Mapping[str, Mapping[str, list[str]]]      # cell -> slice -> its variant ids
    overhead_s: Mapping[str, Mapping[str, float]]      # cell -> slice -> seconds beyond its variants
    variant_s: Mapping[str, Mapping[str, float]]       # cell -> variant id -> seconds of its last run

    def of(self, wanted: Mapping[str, set[str]]) -> float:
        total = 0.0
        for cell, vids in wanted.items():
            timed = self.variant_s.get(cell, {})
            known = list(timed.values())
            fallback = sum(known) / len(known) if known else 0.0
            for key, ids in self.slices.get(cell, {}).items():
                here = [v for v in ids if v in vids]
                if here:
                    total += self.overhead_s.get(cell, {}).get(key, 0.0)
                    total += sum(timed.get(v, fallback) for v in here)
        return total


def costs_of(live: Mapping[str, LiveCell]) -> SliceCosts:
    """What the live cells' slices and variants took so far in this run: a budget's costs."""
    return SliceCosts({n: lc.slices for n, lc in live.items()}, {n: lc.overhead_s for n, lc in live.items()},
                      {n: lc.variant_s for n, lc in live.items()})


def cut_to_budget(states: Sequence[LineState], live: Mapping[str, LiveCell], budget: Budget, round_no: int,
                   first: dict[tuple[str, str, str, str], tuple[int, str]], cut: set[tuple[str, str, str, str]],
                   console: Console) -> dict[str, set[str]] | None:
    """The variants of the open lines the next round can measure within the budget (``budget.affordable``); each
    line left out stops here with the budget as its why (``first``, ``cut``). None: every open line fits."""
    fit = affordable(states, costs_of(live), budget.left())
    if not fit.left_out:
        return None
    for st in fit.left_out:
        first[st.key] = (round_no, fit.why(round_no, st))
        cut.add(st.key)
    console.print("\\[tfmatrix] budget: %s left; round %d measures %d of %d open lines (~%s), %d left open" % (
        fmt_duration(max(0.0, fit.left_s)), round_no + 1, len(fit.kept), len(fit.kept) + len(fit.left_out),
        fmt_duration(fit.cost_s), len(fit.left_out)))
    return open_variants(fit.kept)


def round_fits(budget: Budget, round_no: int, need_s: float, console: Console) -> bool:
    """Whether a whole round of a fixed-round run (``need_s``, from this run's slice times) fits what is left; said
    on the console when it does not."""
    if need_s <= budget.left():
        return True
    console.print("\\[tfmatrix] budget: round %d (~%s) does not fit the %s left; stopped after round %d"
                  % (round_no, fmt_duration(need_s), fmt_duration(max(0.0, budget.left())), round_no - 1))
    return False
