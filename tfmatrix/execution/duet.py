"""A duet: two cells measured at the same time, one core each (Bulej et al., "Duet Benchmarking", ICPE 2020).

The interleaved schedule measures two cells seconds to minutes apart; a duet
measures them in the same seconds: in every turn the slice runs in cell A
pinned to one CPU and in cell B pinned to the other, started together, and
the CPUs swap every round so neither cell keeps the better core. Whatever
the host does to one side it does to the other; the round-by-round ratio
(``analysis.statistics.inference.contrast``, paired as for an interleaved run)
cancels it. The price: each cell has one core (TensorFlow's thread pools see one),
so a duet answers "is B slower than A?" on one core, not "how fast is A on
this machine?". Asynchronous (Drozdik's variant): the two processes are not
synchronised iteration by iteration, only started together.

The ``duet`` command (``commands/duet.py``) picks the cells, holds the run
lock and compares the two files this writes.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from ..errors import UserError
from ..matrix import Cell
from ..progress import fmt_duration
from ..results.store import CellOutcome
from ..runners.base import Runner
from .interleaved import identity, measure_and_write, open_journal
from .live import LiveCell, finish, run_slice, wants
from .loop import Job, OneAfterAnother
from .provisioning import provision
from .request import RunRequest
from .turns import Turn


def cpu_pair() -> tuple[str, str]:
    """The two CPUs the duet pins its sides to: the first two this process may use."""
    usable = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    if len(usable) < 2:
        raise UserError("duet: needs two CPUs, this process may use %d" % len(usable))
    return str(usable[0]), str(usable[1])


@dataclass(frozen=True)
class Together(OneAfterAnother):
    """How the cells of a duet's turn run: both at once, each pinned to one CPU, the CPUs swapped every round."""

    cells: tuple[str, str]           # A, B: A has the first CPU in odd rounds
    cpus: tuple[str, str]

    def note(self) -> dict[str, Any]:
        return {"duet": {"cpus": list(self.cpus)}}

    def jobs(self, live: dict[str, LiveCell], turn: Turn) -> list[Job]:
        side_cpus = self.cpus if turn.round % 2 else self.cpus[::-1]
        return [(live[name], cpu) for name, cpu in zip(self.cells, side_cpus, strict=True)
                if wants(live.get(name), turn)]

    def run(self, jobs: Sequence[Job], turn: Turn, journal: Path) -> None:
        threads = [threading.Thread(target=run_slice, args=(lc, turn, journal, cpu)) for lc, cpu in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def line(self, jobs: Sequence[Job], turn: Turn, turns: Sequence[Turn], live: dict[str, LiveCell],
             elapsed_s: float) -> str:
        return "duet turn %d/%d (round %d, slice %s): %s" % (
            turn.number, len(turns), turn.round, turn.slice,
            ", ".join("%s on CPU %s %s" % (lc.cell.name, cpu, fmt_duration(lc.slice_s.get(turn.slice, 0.0)))
                      for lc, cpu in jobs))


def run(cells: Sequence[Cell], runner: Runner, request: RunRequest, reports_dir: Path,
        console: Console) -> list[CellOutcome]:
    """Provision both cells, then the interleaved turn loop with both cells of a turn at once (``Together``)."""
    if len(cells) != 2:
        raise UserError("duet: name exactly two cells")
    if not runner.interleaves:
        raise UserError(f"duet: the {runner.name} runner runs whole cells only; use --runner docker or venv")
    for cell in cells:
        why = runner.skip_reason(cell)
        if why:
            raise UserError(f"duet: {cell.name} cannot run here: {why}")
    cpus = cpu_pair()
    jobs = [request.job(c) for c in cells]        # the request comes stamped (``RunRequest.stamped``)
    journal, head = open_journal(reports_dir, "duet-" + identity(jobs, runner), request.seed, console)
    live, failed = provision(jobs, runner, request.claims if request.claims_only else None, reports_dir, console)
    if failed:
        for lc in live.values():
            lc.env.close()
            finish(lc, reports_dir, head, interrupted=True)
        name, outcome = next(iter(failed.items()))
        raise UserError(f"duet: {name} could not be prepared: {outcome.reason}")
    how = Together((cells[0].name, cells[1].name), cpus)
    outcomes = measure_and_write(live, request, reports_dir, journal, head, console, how)
    return [outcomes[c.name] for c in cells]
