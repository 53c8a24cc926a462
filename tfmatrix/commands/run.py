"""The commands that measure cells of the matrix: ``matrix`` (every cell, or ``--only``) and ``cell`` (one).

Both take the measuring options (``options.add_measure_options``, merged with
matrix.toml's once in ``settings.RunSettings``), hold the checkout's run lock,
run through ``execution.dispatch.execute`` and refresh the report; the exit
code says whether any cell failed or the report left a file out.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from collections.abc import Sequence
from typing import Any

from ..matrix import Cell, Matrix
from ..results.documents import CELL_FAILURES, CELL_STATUSES
from .claims import add_claims, own_of
from .common import find_cell, load_matrix, output_dir, progress_page, refresh_report, report_refused, selected
from .options import add_bench, add_measure_options, add_only, add_redo
from .settings import RunSettings, claims_focus, measuring


def _run_cells(settings: RunSettings, cells: Sequence[Cell], bench: Sequence[str], redo: bool,
               requested: str | None = None) -> int:
    """Run ``cells`` (one at a time), write their results, then refresh the report.

    Holds the checkout's run lock throughout (see ``execution.lock``).
    ``requested`` is the one cell a user asked for by name (``cell NAME``): if
    it is skipped, the last line says so and the exit code is non-zero, since
    they got nothing.
    """
    from ..execution.dispatch import execute
    from ..progress import stderr_console

    console = stderr_console()
    reports = output_dir(settings.reports, "--reports")
    focus = claims_focus(settings.variants, bench, settings.bench_paths, settings.run_preset, settings.claims)
    claims_only = bool(focus) and not bench
    if claims_only:
        cells = concerned(cells, settings, console)
    with measuring(settings, console, cells) as session:
        runner = session.runner
        request = dataclasses.replace(settings.request(tuple(bench) or focus, claims_only=claims_only),
                                      page=functools.partial(progress_page, reports, settings.matrix,
                                                             own_of(settings.claims)))
        outcomes = execute(cells, runner, request, reports, redo=redo, console=console) if cells else []
        refused = refresh_report(reports, settings.matrix, console, own=own_of(settings.claims))
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


def concerned(cells: Sequence[Cell], settings: RunSettings, console: Any) -> list[Cell]:
    """The cells a claim of a claims-only run is about; the others are left out, their files as they are (a run of
    today's questions asks nothing of TF 1.x)."""
    from ..analysis.claims.sources import cell_view

    keep = [c for c in cells if any(claim.concerns(cell_view(c)) for claim in settings.claims) or cell_view(c).existing]
    idle = [c.name for c in cells if c not in keep]
    if idle:
        console.print("\\[tfmatrix] no claim of this run (%s%s) is about %d cell%s, left as they are: %s" % (
            ", ".join(settings.families), " and yours" if any(c.family not in settings.families
                                                             for c in settings.claims) else "",
            len(idle), "s" * (len(idle) != 1), ", ".join(idle)))
    return keep


def cmd_matrix(args: argparse.Namespace) -> int:
    """Every cell (or those matching --only), then the report."""
    matrix = load_matrix(args)
    cells = selected(matrix, args.only)
    return _run_cells(RunSettings.from_args(args, matrix), cells, args.bench, redo=args.redo)


def cmd_cell(args: argparse.Namespace) -> int:
    """One cell by name: build if needed, run, write its results, refresh the report."""
    matrix = load_matrix(args)
    cell = (existing_cell(matrix, args.name, args.python, args.target) if args.python
            else find_cell(matrix, args.name))
    return _run_cells(RunSettings.from_args(args, matrix), [cell], args.bench, redo=True, requested=cell.name)


def existing_cell(matrix: Matrix, name: str, python: str, target: str) -> Cell:
    """``cell NAME --python PATH``: an existing environment as a cell of its own (not in matrix.toml)."""
    from ..matrix.releases import load_table
    from ..matrix.resolve import resolve_cell

    values = {"python": python, "name": name, "target": target}
    return resolve_cell("--python", f"cell {name}", values, matrix.settings, load_table())


def configure_matrix(p: argparse.ArgumentParser) -> None:
    add_only(p)
    add_measure_options(p)
    add_claims(p)
    add_bench(p)
    add_redo(p, "every cell")


def configure_cell(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="cell name (see `list`); with --python, the name to give that environment")
    p.add_argument("--python", metavar="PATH",
                   help="an interpreter that is already installed (/opt/conda/envs/tf/bin/python): measure that "
                        "environment as it is, as a cell named NAME (nothing built or installed)")
    p.add_argument("--target", choices=("cpu", "gpu"), default="cpu",
                   help="--python: what the environment must run on (gpu: the suite fails loudly without a GPU)")
    add_measure_options(p)
    add_claims(p)
    add_bench(p, old_name=True)
