"""A duet: two cells measured at the same time, one core each (Bulej et al., "Duet Benchmarking", ICPE 2020).

The interleaved schedule measures two cells seconds to minutes apart; a duet
measures them in the same seconds: in every turn the slice runs in cell A
pinned to one CPU and in cell B pinned to the other, started together, and
the CPUs swap every round so neither cell keeps the better core. Whatever
the host does to one side it does to the other; the round-by-round ratio
(``analysis.stats.round_paired_ratio_ci``, as for an interleaved run) cancels
it. The price: each cell has one core (TensorFlow's thread pools see one),
so a duet answers "is B slower than A?" on one core, not "how fast is A on
this machine?". Asynchronous (Drozdik's variant): the two processes are not
synchronised iteration by iteration, only started together.

The ``duet`` command (``commands/duet.py``) picks the cells, holds the run
lock and compares the two files this writes.
"""
from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from ..errors import UserError
from ..matrix import Cell
from ..progress import fmt_duration
from ..results.store import CellOutcome, write_json_atomic
from ..runners.base import Runner
from ..runners.common import RunRequest
from . import hostspeed
from .interleaved import (
    finish,
    identity,
    open_journal,
    provision,
    resume,
    run_slice,
    wants,
)
from .turns import plan_turns


def cpu_pair() -> tuple[str, str]:
    """The two CPUs the duet pins its sides to: the first two this process may use."""
    usable = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    if len(usable) < 2:
        raise UserError("duet: needs two CPUs, this process may use %d" % len(usable))
    return str(usable[0]), str(usable[1])


def run(cells: Sequence[Cell], runner: Runner, request: RunRequest, reports_dir: Path,
        console: Console) -> list[CellOutcome]:
    """Provision both cells, then every turn's slice in both at once, one CPU each, CPUs swapped every round."""
    if len(cells) != 2:
        raise UserError("duet: name exactly two cells")
    if not runner.interleaves:
        raise UserError(f"duet: the {runner.name} runner runs whole cells only; use --runner docker or venv")
    for cell in cells:
        why = runner.skip_reason(cell)
        if why:
            raise UserError(f"duet: {cell.name} cannot run here: {why}")
    cpus = cpu_pair()
    journal, head = open_journal(reports_dir, "duet-" + identity(cells, runner, request), request.seed, console)
    live, failed = provision(cells, runner, request, reports_dir, console)
    if failed:
        for lc in live.values():
            lc.env.close()
            finish(lc, request, reports_dir, head, interrupted=True)
        name, outcome = next(iter(failed.items()))
        raise UserError(f"duet: {name} could not be prepared: {outcome.reason}")
    keys = sorted({k for lc in live.values() for k in lc.slices})
    turns = plan_turns(keys, list(live), request.rounds, int(head["seed"]))
    head["turns"] = [t.to_json() for t in turns]
    head["duet"] = {"cpus": list(cpus)}
    write_json_atomic(journal / "run.json", head)
    resume(live, journal, turns)
    a, b = (live[c.name] for c in cells)
    try:
        for turn in turns:
            side_cpus = cpus if turn.round % 2 else cpus[::-1]
            jobs = [(lc, cpu) for lc, cpu in zip((a, b), side_cpus, strict=True) if wants(lc, turn)]
            if not jobs:
                continue
            head["host_speed"].append([turn.number, 0.0, hostspeed.probe()])
            threads = [threading.Thread(target=run_slice, args=(lc, turn, request, journal, cpu)) for lc, cpu in jobs]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            console.print("\\[tfmatrix] duet turn %d/%d (round %d, slice %s): %s" % (
                turn.number, len(turns), turn.round, turn.slice,
                ", ".join("%s on CPU %s %s" % (lc.cell.name, cpu, fmt_duration(lc.slice_s.get(turn.slice, 0.0)))
                          for lc, cpu in jobs)))
    except BaseException:
        for lc in (a, b):
            lc.env.close()
            finish(lc, request, reports_dir, head, interrupted=True)
        raise
    out = []
    for lc in (a, b):
        lc.env.close()
        out.append(finish(lc, request, reports_dir, head))
    shutil.rmtree(journal, ignore_errors=True)
    return out
