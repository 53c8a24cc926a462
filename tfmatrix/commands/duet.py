"""The ``duet`` command: two cells at the same time, one CPU each, CPUs swapped every round; then B against A.

The measuring is ``execution.duet.run``; this module reads the options,
holds the checkout's run lock around it, and prints the comparison of the
two cell files it wrote (``analysis.compare``, round by round), which the
execution stage never reads back itself.
"""
from __future__ import annotations

import argparse
import sys

from .. import paths
from ..errors import UserError
from .common import add_paired_run_options, find_cell, load_matrix, output_dir


def cmd_duet(args: argparse.Namespace) -> int:
    """``python -m tfmatrix duet A B``: both cells at once, one core each; then B against A, round by round."""
    from ..analysis.cells import load_dir
    from ..analysis.compare import compare_cells
    from ..execution import duet
    from ..execution.lock import checkout_lock
    from ..execution.request import RunRequest
    from ..progress import stderr_console
    from ..report.compare_view import table_rows
    from ..runners.choose import make_runner

    console = stderr_console()
    matrix = load_matrix(args)
    cells = [find_cell(matrix, args.a), find_cell(matrix, args.b)]
    if cells[0].name == cells[1].name:
        raise UserError("duet: name two different cells")
    reports = output_dir(args.reports, "--reports")
    request = RunRequest(preset=args.preset, only=tuple(args.bench), rounds=args.rounds or matrix.settings.rounds,
                         schedule="duet", seed=args.seed)
    with checkout_lock():
        runner = make_runner(args.runner, matrix.settings.base_registry, console)
        outcomes = duet.run(cells, runner, request, reports, console)
    bad = [o for o in outcomes if o.status != "ok"]
    if bad:
        print(f"tfmatrix: error: duet: {bad[0].name} {bad[0].status}: {bad[0].reason}", file=sys.stderr)
        return 1
    loaded = load_dir(reports / "cells").cells
    result = compare_cells(loaded, loaded, cells[0].name, cells[1].name, [(cells[0].name, cells[1].name)])
    for row in table_rows(result, args.rows):
        print("  ".join(row))
    print(f"duet {cells[1].name} against {cells[0].name}, {request.rounds} rounds, one CPU each: "
          f"{result.counts_text()}; cell files in {reports / 'cells'}")
    return 0


def configure_duet(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="CELL_A", help="the reference cell (see `list`)")
    p.add_argument("b", metavar="CELL_B", help="the cell compared with it")
    p.add_argument("--bench", action="append", default=[], metavar="PATTERN",
                   help="run only benchmarks matching PATTERN (glob on variant id; repeatable)")
    p.add_argument("--rounds", type=int, choices=range(2, 21), metavar="N",
                   help="rounds (default: matrix.toml's rounds, 3); the CPUs swap every round")
    add_paired_run_options(p, "both cells'", str(paths.REPORTS_DIR / "duet"))
