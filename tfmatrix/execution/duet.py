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
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from .. import paths
from ..errors import UserError
from ..matrix import KNOWN_PRESETS, Cell
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



# --------------------------------------------------------------------------- the command


def cmd_duet(args: argparse.Namespace) -> int:
    """``python -m tfmatrix duet A B``: both cells at once, one core each; then B against A, round by round."""
    from ..analysis.cells import load_dir
    from ..analysis.compare import compare_cells
    from ..commands.common import find_cell, load_matrix, output_dir
    from ..matrix.user_benchmarks import files_hash
    from ..report.compare_view import table_rows
    from ..results.store import suite_fingerprint
    from .dispatch import make_runner
    from .lock import command_line, run_lock

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    matrix = load_matrix(args)
    cells = [find_cell(matrix, args.a), find_cell(matrix, args.b)]
    if cells[0].name == cells[1].name:
        raise UserError("duet: name two different cells")
    reports = output_dir(args.reports, "--reports")
    request = RunRequest(preset=args.preset, only=tuple(args.bench), rounds=args.rounds or matrix.settings.rounds,
                         schedule="duet", seed=args.seed, suite=suite_fingerprint(), bench=files_hash(()))
    with run_lock(paths.BUILD_DIR / "run.lock", command_line()):
        runner = make_runner(args.runner, matrix.settings.base_registry, console)
        outcomes = run(cells, runner, request, reports, console)
    bad = [o for o in outcomes if o.status != "ok"]
    if bad:
        print(f"tfmatrix: error: duet: {bad[0].name} {bad[0].status}: {bad[0].reason}", file=sys.stderr)
        return 1
    loaded = load_dir(reports / "cells").cells
    result = compare_cells(loaded, loaded, cells[0].name, cells[1].name, [(cells[0].name, cells[1].name)])
    for row in table_rows(result, args.rows):
        print("  ".join(row))
    counts = result.verdicts()
    print(f"duet {cells[1].name} against {cells[0].name}, {request.rounds} rounds, one CPU each: "
          f"{counts['slower']} slower, {counts['faster']} faster, {counts['no clear difference']} no clear "
          f"difference; cell files in {reports / 'cells'}")
    return 0


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="CELL_A", help="the reference cell (see `list`)")
    p.add_argument("b", metavar="CELL_B", help="the cell compared with it")
    p.add_argument("--preset", choices=KNOWN_PRESETS, help="override both cells' suite preset")
    p.add_argument("--bench", action="append", default=[], metavar="PATTERN",
                   help="run only benchmarks matching PATTERN (glob on variant id; repeatable)")
    p.add_argument("--rounds", type=int, choices=range(2, 21), metavar="N",
                   help="rounds (default: matrix.toml's rounds, 3); the CPUs swap every round")
    p.add_argument("--seed", type=int, metavar="N", help="the order's seed (default: a fresh one, recorded)")
    p.add_argument("--runner", default="auto", choices=("auto", "docker", "venv"),
                   help="auto: Docker when an engine answers, else local virtualenvs")
    p.add_argument("--reports", default=str(paths.REPORTS_DIR / "duet"), metavar="DIR",
                   help="where the duet's cell files go (default: reports/duet; never the matrix's reports/cells)")
    p.add_argument("--rows", type=int, default=20, metavar="N", help="show the N variants that moved most")
