"""The commands that measure cells of the matrix: ``matrix`` (every cell, or ``--only``) and ``cell`` (one).

Both take the run options (``add_run_options``), hold the checkout's run
lock, run through ``execution.dispatch.execute`` and refresh the report; the
exit code says whether any cell failed or the report left a file out.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import paths
from ..matrix import KNOWN_PRESETS, Cell, Matrix
from ..matrix.records import AUTO_ROUNDS, AUTO_ROUNDS_CAP, SCHEDULES, VARIANTS
from ..results.documents import CELL_FAILURES, CELL_STATUSES
from .common import (
    OtherCommands,
    add_only,
    find_cell,
    load_matrix,
    output_dir,
    refresh_report,
    report_refused,
    selected,
)


def _run_cells(args: argparse.Namespace, cells: Sequence[Cell], bench: Sequence[str], redo: bool,
               requested: str | None = None) -> int:
    """Run ``cells`` (one at a time), write their results, then refresh the report.

    Holds the checkout's run lock throughout (see ``execution.lock``).
    ``requested`` is the one cell a user asked for by name (``cell NAME``): if
    it is skipped, the last line says so and the exit code is non-zero, since
    they got nothing.
    """
    from ..execution.dispatch import execute
    from ..execution.lock import checkout_lock
    from ..execution.request import RunRequest
    from ..progress import stderr_console
    from ..runners.choose import make_runner

    console = stderr_console()
    matrix = args.loaded_matrix
    reports = output_dir(args.reports, "--reports")
    user_paths = bench_paths(args.bench_path, matrix)
    with checkout_lock():
        if args.runner == "ray":
            runner = make_runner("ray", matrix.settings.base_registry, console,
                                 args.address or matrix.settings.cluster_address, matrix.settings.cluster_cpus)
        else:
            runner = make_runner(args.runner, matrix.settings.base_registry, console, cells=cells)
        rounds, sequential = args.rounds if args.rounds is not None else (matrix.settings.rounds,
                                                                          matrix.settings.sequential)
        schedule = args.schedule or matrix.settings.schedule
        focus = claims_focus(args.variants or matrix.settings.variants, bench, user_paths,
                             args.preset or matrix.settings.preset)
        request = RunRequest(preset=args.preset, only=tuple(bench) or focus, repeats=args.repeats, rounds=rounds,
                             bench_paths=user_paths, processes=args.processes, schedule=schedule, seed=args.seed,
                             sequential=sequential, claims_only=bool(focus) and not bench)
        outcomes = execute(cells, runner, request, reports, redo=redo, console=console)
        refused = refresh_report(reports, matrix, console)
    bad = [o for o in outcomes if o.status in CELL_FAILURES]
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in CELL_STATUSES}
    console.print("\\[tfmatrix] cells: %s; open %s" % (", ".join("%d %s" % (n, s) for s, n in counts.items() if n),
                                                       reports / "index.html"))
    code = 1 if bad else 0
    if report_refused(refused, sys.stderr):
        code = code or 1
    skipped = [o for o in outcomes if o.status == "skipped" and o.name == requested]
    if skipped:
        print(f"tfmatrix: error: cell {requested} was skipped, nothing ran: {skipped[0].reason}", file=sys.stderr)
        code = 1
    return code


def _rounds(text: str) -> tuple[int, bool]:
    """``--rounds N`` (a fixed count, 1-20) or ``--rounds auto`` (sequential, up to the cap): (rounds, sequential)."""
    if text == AUTO_ROUNDS:
        return AUTO_ROUNDS_CAP, True
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 20:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of rounds from 1 to 20, or {AUTO_ROUNDS}")
    return value, False


def claims_focus(variants: str, bench: Sequence[str], user_paths: Sequence[Path], preset: str) -> tuple[str, ...]:
    """The ids a ``variants = "claims"`` run measures: the catalogue's variants a claim compares, at ``preset``'s
    sizes; nothing (the whole preset) when all are asked for, or when the user names benchmarks or files."""
    if variants != "claims" or bench or user_paths:
        return ()
    from suite.definitions import PRESETS
    from suite.registry import all_variants

    from ..analysis.sequential import claim_variant_ids

    known = PRESETS.get(preset)
    if known is None:
        return ()
    return tuple(claim_variant_ids((v.benchmark, v.id, v.as_dict()) for v in all_variants(known)))


def bench_paths(given: Sequence[str], matrix: Matrix) -> tuple[Path, ...]:
    """The user's benchmark paths: ``--bench-path`` (relative to the current directory) replaces ``[suite] paths``."""
    from ..matrix.user_benchmarks import check_path

    if not given:
        return matrix.settings.bench_paths
    return tuple(dict.fromkeys(check_path(p, Path.cwd(), f"--bench-path {p}", "the current directory")
                               for p in given))


def cmd_matrix(args: argparse.Namespace) -> int:
    """Every cell (or those matching --only), then the report."""
    args.loaded_matrix = load_matrix(args)
    cells = selected(args.loaded_matrix, args.only)
    return _run_cells(args, cells, args.bench, redo=args.redo)


def cmd_cell(args: argparse.Namespace) -> int:
    """One cell by name: build if needed, run, write its results, refresh the report."""
    args.loaded_matrix = load_matrix(args)
    if args.python:
        cell = existing_cell(args.loaded_matrix, args.name, args.python, args.target)
    else:
        cell = find_cell(args.loaded_matrix, args.name)
    return _run_cells(args, [cell], args.only, redo=True, requested=cell.name)


def existing_cell(matrix: Matrix, name: str, python: str, target: str) -> Cell:
    """``cell NAME --python PATH``: an existing environment as a cell of its own (not in matrix.toml)."""
    from ..matrix.releases import load_table
    from ..matrix.resolve import resolve_cell

    values = {"python": python, "name": name, "target": target}
    return resolve_cell("--python", f"cell {name}", values, matrix.settings, load_table())


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options ``matrix`` and ``cell`` share: preset, repeats, rounds, schedule, runner, where results go."""
    from ..runners.choose import RUNNERS

    p.add_argument("--preset", choices=KNOWN_PRESETS, help="override every cell's suite preset")
    p.add_argument("--repeats", type=int, help="override the samples per process")
    p.add_argument("--processes", type=int, choices=range(1, 11), metavar="N",
                   help="fresh processes per variant in each round (default: the preset's, 1 for seed and quick); more "
                        "agree better from run to run at N times the suite's time (docs/measurement.md)")
    p.add_argument("--rounds", type=_rounds, metavar="N|auto",
                   help="measure every variant in N rounds (1-20), a fresh process each, pooled; auto: after each "
                        "round only the variants of claim lines still open run again, up to %d (default: matrix.toml's "
                        "rounds, else 3)" % AUTO_ROUNDS_CAP)
    p.add_argument("--variants", choices=VARIANTS,
                   help="claims: only the variants the seeds' claims compare (matrix.toml's default); all: the "
                        "preset's whole catalogue (the findings' and charts' breadth)")
    p.add_argument("--schedule", choices=SCHEDULES,
                   help="interleaved: every cell provisioned first, then one slice of each cell per turn in a random "
                        "order (default); sequential: whole cells one after another, round after round")
    p.add_argument("--seed", type=int, metavar="N",
                   help="the interleaved order's seed (default: a fresh one, recorded in every cell file)")
    p.add_argument("--runner", default="auto", choices=RUNNERS,
                   help="auto: Docker when an engine answers, else local virtualenvs (default); ray: the cells as "
                        "tasks on a Ray cluster (--address)")
    p.add_argument("--address", metavar="ADDRESS",
                   help="--runner ray: the Ray cluster (ray://HEAD:10001, HOST:6379 or auto; default: matrix.toml's "
                        "[cluster] address)")
    p.add_argument("--reports", default=str(paths.REPORTS_DIR), metavar="DIR",
                   help="where cells/<cell>.json|.log and index.html go (default: reports)")
    p.add_argument("--bench-path", action="append", default=[], metavar="PATH",
                   help="a directory or .py file of your own benchmarks (suite.api), mounted read-only into every "
                   "cell; repeatable; replaces matrix.toml's [suite] paths")


def configure_matrix(p: argparse.ArgumentParser) -> None:
    add_only(p)
    add_run_options(p)
    p.add_argument("--bench", action="append", default=[], metavar="PATTERN",
                   help="run only benchmarks matching PATTERN (glob on variant id; repeatable)")
    p.add_argument("--redo", action="store_true", help="run again cells whose earlier results are still valid")


def configure_cell(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="cell name (see `list`); with --python, the name to give that environment")
    p.add_argument("--python", metavar="PATH",
                   help="an interpreter that is already installed (/opt/conda/envs/tf/bin/python): measure that "
                        "environment as it is, as a cell named NAME (nothing built or installed)")
    p.add_argument("--target", choices=("cpu", "gpu"), default="cpu",
                   help="--python: what the environment must run on (gpu: the suite fails loudly without a GPU)")
    add_run_options(p)
    p.add_argument("--only", action="append", default=[], metavar="PATTERN",
                   help="run only benchmarks matching PATTERN (glob on variant id; repeatable)")
    p.add_argument("--bench", action=OtherCommands, use="--only PATTERN to pick benchmarks in one cell")
