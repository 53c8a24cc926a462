"""What every command shares: loading ``--matrix``, selecting cells with ``--only``, output directories, and the
report rebuilt after a run. The shared options themselves are ``commands.options``.

Kept apart from ``cli.py`` (the parser and the command table) and from the
verbs' modules beside it, which all use it.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich.markup import escape

from ..errors import UserError
from ..matrix import Cell, Matrix, load
from ..progress import stderr_console

if TYPE_CHECKING:
    from ..analysis.cells import Refused
    from ..analysis.claims.records import Claim


def load_matrix(args: argparse.Namespace, err: TextIO | None = None) -> Matrix:
    """Load --matrix and print its untested warnings (each once) to stderr."""
    matrix = load(args.matrix)
    stream = err if err is not None else sys.stderr
    for warning in matrix.warnings:
        print(f"tfmatrix: warning: {warning}", file=stream)
    return matrix


def selected(matrix: Matrix, patterns: Sequence[str]) -> tuple[Cell, ...]:
    """Cells matching ``--only`` globs or short names (``tf2.0`` selects tf2.0-keras2.3.1-cpu and -gpu).

    A pattern that matches nothing is an error that suggests the closest name.
    """
    from ..matrix.names import ends, matches, resolve

    names = [c.name for c in matrix.cells]
    globs: list[str] = []
    for pattern in patterns:
        if matrix.select([pattern]):
            globs.append(pattern)
            continue
        short = ([n for n in names if matches(pattern, n)] or [n for n in names if ends(pattern, n)]
                 if not set("*?[") & set(pattern) else [])
        if not short:
            why = resolve(pattern, names).problem or ""
            raise UserError(f"--only {pattern!r}: {why.replace('no cell named', 'no cell matches', 1)}")
        globs += short
    return matrix.select(globs)


def output_dir(value: str, flag: str, create: bool = True) -> Path:
    """``value`` as a directory to write into (created if missing and ``create``); a one-line UserError if it
    cannot be one.

    Checked before any work starts, so a typo in --out costs nothing and never
    ends as NotADirectoryError/FileExistsError halfway through.
    """
    path = Path(value)
    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            where = "is a file" if p == path else f"is inside {p}, which is a file"
            raise UserError(f"{flag} {value}: {where}, not a directory; pass a directory path")
    try:
        if create:
            path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"{flag} {value}: cannot create the directory ({e.strerror or e}); pass a writable "
                        "directory") from None
    return path


def find_cell(matrix: Matrix, typed: str) -> Cell:
    """The cell ``typed`` names, in full or by an unambiguous short form (``tf2.0-gpu``)."""
    from ..matrix import display_path
    from ..matrix.names import resolve

    found = resolve(typed, [c.name for c in matrix.cells])
    if found.name is None:
        raise UserError(f"{display_path(matrix.path)}: {found.problem}")
    return matrix.cell(found.name)


# --------------------------------------------------------------------------- the report after a run


def report_refused(refused: Sequence[Refused], err: TextIO) -> int:
    """Name each cell file the report left out, one stderr line each; exit code 2 when there are any.

    Called after the report is written: the readable cells are reported even
    when a file beside them is broken, and the exit code still says so.
    """
    for r in refused:
        print(f"tfmatrix: error: {r.reason}", file=err)
    return 2 if refused else 0


def has_results(cells_dir: Path, name: str) -> bool:
    """Whether ``cells_dir`` holds an ok cell file for the cell ``name``."""
    from ..results.store import load_cell

    doc = load_cell(cells_dir / f"{name}.json")
    return doc is not None and doc.status == "ok"


def refresh_report(reports: Path, matrix: Matrix, console: Any, own: tuple[Claim, ...] | None = None, *,
                   cells: Path | None = None, progress: str | None = None) -> list[Refused]:
    """Rebuild the report after a run; the cell files it had to leave out. ``own``: the user's claims (default: the
    matrix file's). ``cells`` and ``progress``: the page of a run still measuring (``execution.page``), built from
    its interim cell files, quietly (the run's own lines say where it is)."""
    from ..analysis.claims.sources import own_claims
    from ..report.build import build

    cells = cells or reports / "cells"
    upgrade = matrix.settings.compare
    if upgrade is not None and not all(has_results(cells, name) for name in upgrade):
        if progress is None:
            console.print("\\[tfmatrix] " + escape(f"[report] compare: {' or '.join(upgrade)} has no results yet: "
                                                    "no upgrade view"))
        upgrade = None
    summary = build(cells, reports, matrix.settings.baseline, baseline_source=f"{matrix.path.name}: baseline",
                    baseline_fallback=True, upgrade=upgrade, own=own_claims(matrix) if own is None else own,
                    progress=progress)
    if progress is not None:
        return summary.refused
    if summary.baseline_note:
        console.print("\\[tfmatrix] " + escape(summary.baseline_note))
    console.print("\\[tfmatrix] " + escape(summary.line()))
    for note in summary.unanswered:
        console.print("\\[tfmatrix] " + escape(note))
    return summary.refused


def progress_page(reports: Path, matrix: Matrix, own: tuple[Claim, ...] | None, cells: Path, progress: str) -> None:
    """The page of a run still measuring, built as the run's report will be (``RunRequest.page``)."""
    refresh_report(reports, matrix, None, own, cells=cells, progress=progress)


def then_report(reports: str, matrix: Matrix, code: int) -> int:
    """After a bisect, a timeline or an explain: rebuild the report in ``reports`` beside them (it gains their
    section) when it has cells."""
    if any((Path(reports) / "cells").glob("*.json")):
        refused = refresh_report(Path(reports), matrix, stderr_console())
        report_refused(refused, sys.stderr)
    return code
