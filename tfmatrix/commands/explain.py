"""The ``explain`` command: why one side is slower, from profiles of both sides taken in their cells.

``explain --cell C --variants A B``: two variants of one cell (a claim's
two sides); ``explain --cells C1 C2 --variant V``: one variant in two cells
(two releases); ``explain --claim KEY --cell C``: a claim's seed
configuration as the last run answered it in C (the report's Claims).
Each cell profiles what it is asked in a run of its own
(``execution.profiling``: never a measured run), and the two profiles are
lined up per call of the step (``analysis.explain.profiles``): packages, functions,
the calls only one side makes, retracing, in a few sentences and a table.
When ``--reports`` holds a run's cells, the report is rebuilt: each claim
line whose two sides now have profiles gains its "why" panel
(``report.why_view``).
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import UserError
from .common import find_cell, load_matrix, output_dir, then_report
from .options import add_reports, add_rows, add_runner
from .settings import RunSettings, measuring

if TYPE_CHECKING:
    from ..matrix import Cell, Matrix

CALLS = 20


def cmd_explain(args: argparse.Namespace) -> int:
    """Both sides profiled in their cells and lined up, then the report (it gains the claim lines' "why")."""
    settings = RunSettings.from_args(args, load_matrix(args))
    return then_report(settings.reports, settings.matrix, _explain(args, settings))


def _explain(args: argparse.Namespace, settings: RunSettings) -> int:
    from ..analysis.explain.ops import explanation_sentences, op_lines, overhead_line
    from ..analysis.explain.profiles import explain, pair, report_lines
    from ..execution.profiling import profile_in_cell
    from ..progress import stderr_console
    from ..results.profile_docs import ProfilesDoc, read_profiles

    console = stderr_console()
    matrix = settings.matrix
    if args.claim:
        sides = claim_sides(args.claim, args.cell, settings.reports, matrix)
    elif bool(args.cell) == bool(args.cells):
        raise UserError("explain: name one cell and two variants (--cell C --variants A B), two cells and one "
                        "variant (--cells C1 C2 --variant V), or a claim in a cell (--claim KEY --cell C)")
    elif args.cell:
        if not args.variants:
            raise UserError("explain --cell: name the two variants with --variants A B (ids as in results.csv)")
        cell = find_cell(matrix, args.cell)
        sides = [(cell, args.variants[0]), (cell, args.variants[1])]
    else:
        if not args.variant:
            raise UserError("explain --cells: name the variant with --variant ID (as in results.csv)")
        sides = [(find_cell(matrix, name), args.variant) for name in args.cells]
    reports = output_dir(settings.reports, "--reports")
    wanted: dict[str, list[str]] = {}
    for cell, vid in sides:
        wanted.setdefault(cell.name, [])
        if vid not in wanted[cell.name]:
            wanted[cell.name].append(vid)
    found: dict[str, ProfilesDoc] = {}
    with measuring(settings, console) as session:
        for cell, _ in sides:
            if cell.name in found:
                continue
            console.print(f"\\[tfmatrix] profiling {len(wanted[cell.name])} variant(s) in {cell.name} "
                          f"({args.calls} samples' worth of calls each, a run of its own: never a measurement)")
            made = profile_in_cell(cell, session.runner, wanted[cell.name], reports, args.calls,
                                   bench_paths=settings.bench_paths)
            if isinstance(made, str):
                print(f"{cell.name}: {made}")
                return 1
            found[cell.name] = read_profiles(made)
    (cell_a, id_a), (cell_b, id_b) = sides
    both = pair(found[cell_a.name], id_a, found[cell_b.name], id_b)
    if isinstance(both, str):
        print(both)
        return 1
    label_a, label_b = "A", "B"
    expl = explain(*both, top=args.rows)
    print(f"A = {id_a} in {cell_a.name}\nB = {id_b} in {cell_b.name}")
    for line in explanation_sentences(expl, label_a, label_b):
        print(line)
    print()
    for line in report_lines(expl, label_a, label_b, rows=args.rows) + op_lines(expl, label_a, label_b, args.rows):
        print(line)
    cost = overhead_line(expl, label_a, label_b)
    if cost:
        print(cost)
    print(f"profiles in {reports / 'profiles'} (cProfile function tables and TensorFlow's op tables; the profiled "
          "calls are not timings)")
    return 0


def claim_sides(key: str, cell_name: str | None, reports: str, matrix: Matrix) -> list[tuple[Cell, str]]:
    """A claim's seed configuration in a cell, as the last run in ``reports`` answered it: its two sides."""
    from pathlib import Path

    from ..analysis.cells import load_dir
    from ..analysis.claims.answers import compute_claim
    from ..analysis.claims.files import every_builtin, find
    from ..analysis.claims.sources import own_claims
    from ..analysis.frame import build_frame

    claim = find(every_builtin() + own_claims(matrix), key, "explain --claim")
    if not cell_name:
        raise UserError(f"explain --claim {key}: name the cell with --cell NAME (as in the report's Claims)")
    cell = find_cell(matrix, cell_name)
    cells_dir = Path(reports) / "cells"
    if not cells_dir.is_dir():
        raise UserError(f"explain --claim: {cells_dir} has no results; run the matrix (or `cell {cell.name}`) first, "
                        "or name the variants with --variants")
    loaded = [c for c in load_dir(cells_dir).cells if c.has_records]
    answered = compute_claim(claim, build_frame(loaded), loaded)
    here = next((c for c in answered.cells if c.cell.name == cell.name), None)
    if here is None or not here.lines:
        why = here.reason if here is not None else "the cell has no results in " + str(cells_dir)
        raise UserError(f"explain --claim {key}: no line of it in {cell.name} ({why})")
    line = here.lines[0].comparison
    return [(find_cell(matrix, line.cell_a.name), line.a_id), (find_cell(matrix, line.cell_b.name), line.b_id)]


def configure_explain(p: argparse.ArgumentParser) -> None:
    p.add_argument("--claim", metavar="KEY",
                   help="a claim (its key, as in claims.csv: a built-in one or your own) in --cell: its first "
                        "configuration's two sides as the last run in --reports measured them")
    p.add_argument("--cell", metavar="NAME", help="one cell: explain --variants A B in it (or --claim in it)")
    p.add_argument("--variants", nargs=2, metavar=("A", "B"), help="two variant ids of --cell (as in results.csv)")
    p.add_argument("--cells", nargs=2, metavar=("A", "B"), help="two cells: explain --variant V across them")
    p.add_argument("--variant", metavar="ID", help="one variant id, profiled in both --cells")
    p.add_argument("--calls", type=int, default=CALLS, choices=range(1, 1001), metavar="N",
                   help=f"samples' worth of calls profiled per variant, after its first call and warm-up "
                        f"(default {CALLS})")
    add_runner(p)
    add_reports(p, "the profiles (DIR/profiles/<cell>.json) go")
    add_rows(p, "largest differences", default=8)

