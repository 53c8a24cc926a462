"""The interleaved schedule: every cell runs a slice of its suite per turn, in a fresh random order.

Randomized multiple interleaved trials (Abedi & Brecht, ICPE 2017): on a
shared host the machine's speed drifts over minutes, so measuring cell X in
one stretch of time and cell Y in another compares two moods of the host as
much as two TensorFlows. Here a cell's work is cut into slices (one process
group of the suite each: the same variants in every cell), and the run is
``rounds`` passes over the slices; each pass takes the slices in a random
order and each slice is a *turn* in which every cell runs it once, the cells
in a fresh random order. A variant measured in two cells in round r was
measured in the same turn, seconds to a few minutes apart, so the ratio of
round r cancels what the host did meanwhile; the spread of those ratios over
the rounds is the noise a verdict must beat (``analysis.statistics``).

Pure: the order is a function of the seed, recorded in every cell file, so
a run can be replayed and a test can check it.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Turn:
    """One slice, run once in every cell that has it, in ``order``."""

    number: int                  # 1-based over the whole run
    round: int                   # 1-based: the pass over all slices this turn belongs to
    slice: str
    order: tuple[str, ...]       # cell names, first runs first

    def to_json(self) -> list[object]:
        return [self.number, self.round, self.slice, list(self.order)]


def plan_turns(slices: Sequence[str], cells: Sequence[str], rounds: int, seed: int) -> list[Turn]:
    """Every slice of every cell ``rounds`` times: slices in a random order per round, cells per turn.

    ``slices`` and ``cells`` are sorted first, so the plan depends on the
    seed and the sets alone, never on the order the matrix listed them in.
    """
    rng = random.Random(seed)
    keys, names = sorted(set(slices)), sorted(set(cells))
    turns: list[Turn] = []
    for round_no in range(1, rounds + 1):
        order = list(keys)
        rng.shuffle(order)
        for key in order:
            cells_now = list(names)
            rng.shuffle(cells_now)
            turns.append(Turn(len(turns) + 1, round_no, key, tuple(cells_now)))
    return turns


def new_seed() -> int:
    """A fresh seed for a run that was given none (recorded, so the run can be replayed with ``--seed``)."""
    return random.SystemRandom().randrange(1, 2**31)
