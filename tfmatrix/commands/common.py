"""What every command shares: loading ``--matrix``, selecting cells with ``--only``, output directories.

Kept apart from ``cli.py`` (the command table and the setup/run commands) and
``report_commands.py`` (report, compare), which both use it.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ..errors import UserError
from ..matrix import Cell, Matrix, load


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


def add_only(p: argparse.ArgumentParser) -> None:
    p.add_argument("--only", action="append", default=[], metavar="GLOB",
                   help="select cells by name (fnmatch glob, repeatable)")


def find_cell(matrix: Matrix, typed: str) -> Cell:
    """The cell ``typed`` names, in full or by an unambiguous short form (``tf2.0-gpu``)."""
    from ..matrix import display_path
    from ..matrix.names import resolve

    found = resolve(typed, [c.name for c in matrix.cells])
    if found.name is None:
        raise UserError(f"{display_path(matrix.path)}: {found.problem}")
    return matrix.cell(found.name)
