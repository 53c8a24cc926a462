"""The ``ab`` command: "did my change make it slower?", both versions measured together in one run.

Two versions of a benchmark file (a pull request's base and head) run in
the same cells, the same rounds and the same processes, each benchmark's
two sides window-mates (``suite.sides``); then head against base, variant by
variant, with ``compare``'s rule, table and gate (``analysis.compare.ab``). The
measuring is the ordinary interleaved run (``execution.dispatch``) into its
own reports directory, never the matrix's.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .. import paths
from ..analysis.compare.ab import ROUNDS, SAMPLES
from ..errors import UserError
from .common import find_cell, load_matrix, output_dir
from .compare import print_table
from .options import add_bench, add_csv, add_fail_on, add_paired_options, add_rounds, gate_head, gate_tail
from .settings import RunSettings, measuring

if TYPE_CHECKING:
    from ..analysis.compare.result import CompareResult


def cmd_ab(args: argparse.Namespace) -> int:
    """``python -m tfmatrix ab BASE HEAD --cell NAME``: both versions in one run, head against base."""
    from ..analysis.cells import load_dir
    from ..analysis.compare.ab import SIDES, compare_sides, summary_lines, this_runs_noise
    from ..analysis.runs.noise_model import history_of, pooled, run_ids
    from ..analysis.series.entries import with_cells
    from ..analysis.stopping import run_alpha, run_cap
    from ..execution.dispatch import execute
    from ..matrix.user_benchmarks import check_path
    from ..progress import stderr_console
    from ..report.compare_view import ab_csv, ab_json
    from ..results.archive import read_archive
    from ..results.archive import save as save_archive
    from ..results.store import write_text_atomic
    from ..runners.job import SEQUENTIAL_SHARE

    console = stderr_console()
    matrix = load_matrix(args)
    files = tuple(check_path(value, Path.cwd(), f"ab {side.upper()}", "the current directory")
                  for side, value in zip(SIDES, (args.base, args.head), strict=True))
    for side, path in zip(SIDES, files, strict=True):
        if not path.is_file():
            raise UserError(f"ab {side.upper()}: {path} is a directory; name one .py file per side (two versions "
                            "of the same file, e.g. `git show main:bench.py > base.py`)")
    if not args.cell:
        raise UserError("ab: name the cell(s) to measure in with --cell NAME (see `list`)")
    cells = [find_cell(matrix, name) for name in dict.fromkeys(args.cell)]
    settings = RunSettings.from_args(args, matrix)
    reports = output_dir(settings.reports, "--reports")
    # rounds until every case is decided or the same (``execution.looks.ab_look``), at most ``--rounds``; each
    # process takes ``--samples`` (the suite gives a sequential run's process 1/SEQUENTIAL_SHARE of the repeats asked)
    request = settings.request(tuple(args.bench) or ("*side=*",), repeats=args.samples * SEQUENTIAL_SHARE,
                               schedule="interleaved", bench_paths=files, sides=SIDES, sequential=True, judge="ab")
    with measuring(settings, console) as session:
        outcomes = execute(cells, session.runner, request, reports, console=console)
    bad = [o for o in outcomes if o.status != "ok"]
    if bad:
        print(f"tfmatrix: error: ab: {bad[0].name} {bad[0].status}: {bad[0].reason}", file=sys.stderr)
        return 1
    loaded = [c for c in load_dir(reports / "cells").cells if c.name in {cell.name for cell in cells}]
    archive = read_archive(reports)     # the earlier ab runs here: their noise limits an early look's prior
    result = compare_sides(loaded, alpha=run_alpha(loaded), history=pooled(history_of(archive.runs),
                                                                           without=run_ids(loaded)),
                           cap=run_cap(loaded))
    if not result.variants and not result.broke:
        raise UserError(f"ab: no benchmark of {files[0].name} and {files[1].name} ran on both sides; see the cell "
                        f"logs in {reports / 'cells'}")
    archive, _ = with_cells(archive, loaded, [], this_runs_noise(loaded, str(reports / "cells")))
    for line in save_archive(reports, archive).skipped:
        print(f"tfmatrix: warning: the run archive: {line}", file=sys.stderr)
    offenders = result.offenders(args.fail_on) if args.fail_on is not None else []
    for line in gate_head(offenders):
        print(line)
    _print_table(result, args.rows)
    summary = summary_lines(result)
    for line in summary:
        print(line)
    if args.csv:
        write_text_atomic(Path(args.csv), ab_csv(result))
    if args.json:
        write_text_atomic(Path(args.json), ab_json(result, summary))
    if args.fail_on is not None:
        print(f"tfmatrix: gate: {result.gate_line(args.fail_on)}")
        print(gate_tail(len(offenders), args.fail_on))
    print(f"cell files in {reports / 'cells'}")
    return 1 if offenders else 0


def _print_table(result: CompareResult, rows_wanted: int) -> None:
    from ..report.compare_view import table_rows

    rows = table_rows(result, rows_wanted)
    if rows:
        print_table(rows, f"{len(result.variants)} variants, head against base", ("base", "head", "head/base"))


def configure_ab(p: argparse.ArgumentParser) -> None:
    p.add_argument("base", metavar="BASE",
                   help="the benchmark file as it was (e.g. the PR's base; docs/own-benchmarks.md)")
    p.add_argument("head", metavar="HEAD", help="the same file as it is now (the PR's head)")
    p.add_argument("--cell", action="append", default=[], metavar="NAME",
                   help="measure in this cell (repeatable; see `list`)")
    add_bench(p, old_name=True)
    add_rounds(p, fewest=2, most=30, default=ROUNDS)
    p.add_argument("--samples", type=int, choices=range(2, 101), default=SAMPLES, metavar="N",
                   help=f"samples per process (default {SAMPLES}: the two sides share each process, so what is left "
                        "is the samples' own noise, which more samples a process reduce; docs/measurement.md)")
    add_paired_options(p, paths.REPORTS_DIR / "ab")
    add_csv(p, "every case's row as CSV: compare's columns, then its rounds with each side first, its ratio in "
               "each and the order test's p, and why its verdict is what it is")
    p.add_argument("--json", metavar="FILE", help="write the summary and every case's row (as --csv) as JSON")
    add_fail_on(p, broke=" in head")
