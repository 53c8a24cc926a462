"""Command line: ``python -m tfmatrix <command> [--matrix PATH] ...``.

Each subcommand is one ``cmd_*`` function plus a small ``configure`` function
for its options, registered in ``SUBCOMMANDS`` (the one place to add e.g.
``wheels``, ``base-images``, ``run``, ``report``). Every subcommand accepts
``--matrix PATH``. Bad input ends as one stderr line ``tfmatrix: error: ...``
and exit code 2, never a traceback; untested pairings allowed by
``allow_untested`` print ``tfmatrix: warning: ...`` once each.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TextIO

from . import __version__, paths
from .errors import UserError
from .matrix import Cell, Matrix, load

PROG = "python -m tfmatrix"


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one-line UserErrors (exit 2, no usage dump)."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{self.prog}: {message}; see {self.prog} --help")


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    configure: Callable[[argparse.ArgumentParser], None] = lambda p: None


# --------------------------------------------------------------------------- shared helpers


def load_matrix(args: argparse.Namespace, err: TextIO | None = None) -> Matrix:
    """Load --matrix and print its untested warnings (each once) to stderr."""
    matrix = load(args.matrix)
    stream = err if err is not None else sys.stderr
    for warning in matrix.warnings:
        print(f"tfmatrix: warning: {warning}", file=stream)
    return matrix


def selected(matrix: Matrix, patterns: Sequence[str]) -> tuple[Cell, ...]:
    """Cells matching ``--only`` globs; a pattern that matches nothing is an error."""
    for pattern in patterns:
        if not matrix.select([pattern]):
            names = ", ".join(c.name for c in matrix.cells)
            raise UserError(f"--only {pattern!r}: no cell matches; cells are: {names}")
    return matrix.select(patterns)


def _add_only(p: argparse.ArgumentParser) -> None:
    p.add_argument("--only", action="append", default=[], metavar="GLOB",
                   help="select cells by name (fnmatch glob, repeatable)")


# --------------------------------------------------------------------------- validate


def cmd_validate(args: argparse.Namespace) -> int:
    """Load and check the matrix; one summary line."""
    matrix = load_matrix(args)
    print(f"{len(matrix.cells)} cells OK ({len(matrix.warnings)} untested warnings)")
    return 0


# --------------------------------------------------------------------------- list


def _list_rows(cells: Sequence[Cell]) -> list[dict[str, object]]:
    from .render import render_cells  # jinja2 only when needed

    return [{**c.to_dict(), "tag": r.tag} for c, r in zip(cells, render_cells(cells), strict=True)]


def cmd_list(args: argparse.Namespace) -> int:
    """Print the resolved cells as a table (or JSON with --json)."""
    matrix = load_matrix(args)
    cells = selected(matrix, args.only)
    rows = _list_rows(cells)
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{matrix.path.name}: {len(cells)} cells (baseline {matrix.settings.baseline})")
    for column in ("name", "TF", "Keras", "Python", "target", "CUDA/cuDNN", "base image", "tag"):
        table.add_column(column, no_wrap=column in ("name", "tag"))
    for cell, row in zip(cells, rows, strict=True):
        cuda = f"{cell.cuda}/{cell.cudnn}" if cell.cuda else "-"
        table.add_row(cell.name, cell.tf, cell.keras.label, cell.python, cell.target, cuda, cell.base.ref,
                      str(row["tag"]).rsplit(":", 1)[1])
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(table)
    return 0


def _configure_list(p: argparse.ArgumentParser) -> None:
    _add_only(p)
    p.add_argument("--json", action="store_true", help="print cell.json documents (with tags) as a JSON array")


# --------------------------------------------------------------------------- render


def cmd_render(args: argparse.Namespace) -> int:
    """Write build/images/<cell>/{Dockerfile,requirements.txt,cell.json}."""
    from .render import render_cells, write_rendered

    matrix = load_matrix(args)
    cells = selected(matrix, args.only)
    out = Path(args.out)
    for rendered in render_cells(cells):
        target = write_rendered(rendered, out)
        print(f"{target}  {rendered.tag}")
    print(f"rendered {len(cells)} cell{'s' if len(cells) != 1 else ''} into {out}")
    return 0


def _configure_render(p: argparse.ArgumentParser) -> None:
    _add_only(p)
    p.add_argument("--out", default=str(paths.BUILD_DIR / "images"), metavar="DIR",
                   help="output directory (default: build/images)")


# --------------------------------------------------------------------------- registry

SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("validate", "check matrix.toml against the compatibility table", cmd_validate),
    Subcommand("list", "show the resolved cells (name, TF, Keras, Python, target, CUDA, base, tag)",
               cmd_list, _configure_list),
    Subcommand("render", "write one Dockerfile + requirements.txt + cell.json per cell", cmd_render,
               _configure_render),
)


def build_parser(subcommands: Sequence[Subcommand] = SUBCOMMANDS) -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="TensorFlow/Keras performance across versions, reproducibly.")
    parser.add_argument("--version", action="version", version=f"tfmatrix {__version__}")
    common = _Parser(add_help=False)
    common.add_argument("--matrix", default=str(paths.DEFAULT_MATRIX), metavar="PATH",
                        help="matrix file (default: matrix.toml at the repository root)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for sc in subcommands:
        p = sub.add_parser(sc.name, help=sc.help, description=sc.help, parents=[common])
        sc.configure(p)
        p.set_defaults(run=sc.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if getattr(args, "run", None) is None:
            parser.print_help(sys.stderr)
            return 2
        return int(args.run(args))
    except UserError as exc:
        print(f"tfmatrix: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("tfmatrix: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `python -m tfmatrix list | head`
        return 0
