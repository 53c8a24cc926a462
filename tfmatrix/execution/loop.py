"""The turn loop's core: what it carries from turn to turn (``Loop``), how one turn's cells run, and what is left.

A turn: the host's reference workload timed, then every cell that wants the
turn's slice runs it (``OneAfterAnother``, or the duet's ``Together``), and
its line is printed. ``Loop`` is the one record the schedules pass down
(``interleaved.measure``, ``until_decided.measure_until_decided``), instead
of the same seven values through every function.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from suite.reference import probe as host_reference

from ..progress import fmt_duration
from ..results.documents import HostSpeedPoint
from ..results.journal import JournalHead, write_head
from .budget import Budget
from .live import LiveCell, run_slice, said, wants
from .request import RunRequest
from .turns import Turn

Job = tuple[LiveCell, str | None]
"""A cell that runs this turn's slice, and the CPUs its process is pinned to (None: not pinned)."""


class OneAfterAnother:
    """How the cells of one turn run in the interleaved schedule: one after another, in the turn's order.

    The turn loop's one variable part (``measure``); the duet's ``Together``
    is the other: both cells at once, one CPU each.
    """

    def note(self) -> dict[str, Any]:
        """What the journal's header records about how turns run, beside the turns."""
        return {}

    def jobs(self, live: dict[str, LiveCell], turn: Turn) -> list[Job]:
        """The cells that run the turn's slice (still wanting it), in the order they run."""
        return [(live[name], None) for name in turn.order if wants(live.get(name), turn)]

    def run(self, jobs: Sequence[Job], turn: Turn, journal: Path) -> None:
        for lc, cpus in jobs:
            run_slice(lc, turn, journal, cpus)

    def line(self, jobs: Sequence[Job], turn: Turn, turns: Sequence[Turn], live: dict[str, LiveCell],
             elapsed_s: float) -> str:
        """The turn's line on the console, once it ran."""
        asked = jobs[0][0].asked                    # asked of every cell alike
        return "turn %d/%d (round %d of %s%d, slice %s): %s; %s so far, ~%s left" % (
            turn.number, turns[-1].number, turn.round, "up to " if asked.sequential else "", asked.rounds,
            slice_words(turn.slice, [lc for lc, _ in jobs]),
            ", ".join(said(lc, turn) for lc, _ in jobs), fmt_duration(elapsed_s),
            fmt_duration(seconds_left(live, turns, turn)))


def slice_words(key: str, cells: Sequence[LiveCell]) -> str:
    """A slice as the console names it: its key, the catalogue's process group (the same in every cell, so that
    rounds pair), and "(NumPy only here)" where these cells run nothing else in it: on a JAX or PyTorch cell the
    ``eager:tf.keras`` group holds only the NumPy control, and its name alone said TensorFlow ran."""
    ids = [vid for lc in cells for vid in lc.slices.get(key, [])]
    return key + " (NumPy only here)" if ids and all("api=numpy" in vid for vid in ids) else key


@dataclass
class Loop:
    """What the turn loop carries from turn to turn: the live cells, what the run asks, its journal and header,
    where it speaks, how a turn's cells run, its time budget, and when its turns began."""

    live: dict[str, LiveCell]
    request: RunRequest
    journal: Path
    head: JournalHead
    console: Console
    how: OneAfterAnother
    budget: Budget | None = None
    t_start: float = field(default_factory=time.monotonic)

    def say(self, text: str) -> None:
        self.console.print("\\[tfmatrix] " + text)

    def turn(self, turn: Turn, turns: Sequence[Turn]) -> None:
        """One turn: the host's speed timed, the cells that want its slice run as ``how`` says, its line printed."""
        jobs = self.how.jobs(self.live, turn)
        if not jobs:
            return
        self.head.host_speed.append(HostSpeedPoint(turn.number, round(time.time(), 3), host_reference()))
        write_head(self.journal, self.head)
        self.how.run(jobs, turn, self.journal)
        self.say(self.how.line(jobs, turn, turns, self.live, time.monotonic() - self.t_start))


def seconds_left(live: dict[str, LiveCell], turns: Sequence[Turn], after: Turn) -> float:
    """Each remaining (cell, slice) at the time that slice last took in that cell; a slice not yet run there at
    the cell's seconds per variant so far (else every cell's) times its variants. Round 1 has unseen slices:
    counting them as 0 said '~0:00 left' after the first turn."""
    timed = [(lc.slice_s[k], len(lc.slices[k])) for lc in live.values() for k in lc.slice_s if k in lc.slices]
    overall = sum(s for s, _ in timed) / max(1, sum(n for _, n in timed))
    return sum(slice_estimate(live[n], t.slice, overall) for t in turns if t.number > after.number
               for n in t.order if wants(live.get(n), t))


def slice_estimate(lc: LiveCell, key: str, fallback_rate: float) -> float:
    """Seconds the slice ``key`` will take in this cell: its last run, else its variants at the cell's rate so far
    (seconds per variant over the slices it ran), else at ``fallback_rate``."""
    if key in lc.slice_s:
        return lc.slice_s[key]
    ran = [k for k in lc.slice_s if k in lc.slices]
    variants = sum(len(lc.slices[k]) for k in ran)
    rate = sum(lc.slice_s[k] for k in ran) / variants if variants else fallback_rate
    return rate * len(lc.slices.get(key, []))
