"""The ``duet`` command: two cells at the same time, one CPU each, CPUs swapped every round; then B against A.

The measuring is ``execution.duet.run``; this module reads the options,
holds the checkout's run lock around it, and prints the comparison of the
two cell files it wrote (``analysis.compare.sets``, round by round), which the
execution stage never reads back itself.
"""
from __future__ import annotations

import argparse
import sys

from .. import paths
from ..errors import UserError
from .common import find_cell, load_matrix, output_dir
from .options import add_bench, add_paired_options, add_rounds
from .settings import RunSettings, measuring


def cmd_duet(args: argparse.Namespace) -> int:
    """``python -m tfmatrix duet A B``: both cells at once, one core each; then B against A, round by round."""
    from ..analysis.cells import load_dir
    from ..analysis.compare.sets import compare_cells
    from ..execution import duet
    from ..progress import stderr_console
    from ..report.compare_view import table_rows

    console = stderr_console()
    matrix = load_matrix(args)
    cells = [find_cell(matrix, args.a), find_cell(matrix, args.b)]
    if cells[0].name == cells[1].name:
        raise UserError("duet: name two different cells")
    settings = RunSettings.from_args(args, matrix)
    reports = output_dir(settings.reports, "--reports")
    # fixed rounds (matrix.toml's "auto" gives its cap): the CPUs swap every round, both cells run every round
    request = settings.request(tuple(args.bench), schedule="duet", sequential=False)
    with measuring(settings, console) as session:
        outcomes = duet.run(cells, session.runner, request, reports, console)
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
    add_bench(p)
    add_rounds(p, fewest=2, then="; the CPUs swap every round")
    add_paired_options(p, paths.REPORTS_DIR / "duet")
