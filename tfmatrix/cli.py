"""Command line: ``python -m tfmatrix <command> [--matrix PATH] ...``.

Each subcommand is one ``cmd_*`` function plus a small ``configure_*``
function for its options, both in its verb's module under ``commands/``,
registered in ``SUBCOMMANDS`` (the one place to add a command). This module
holds only the parser and ``main``. Every subcommand accepts
``--matrix PATH``. Bad input ends as one stderr line ``tfmatrix: error: ...``
and exit code 2, never a traceback; untested pairings allowed by
``allow_untested`` print ``tfmatrix: warning: ...`` once each.
"""
from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from . import __version__, paths
from .commands import ab, bisect, compare, disk, duet, explain, report, run, series, setup, sweep, timeline
from .errors import UserError

PROG = "python -m tfmatrix"


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one-line UserErrors (exit 2, no usage dump).

    No prefix matching (``allow_abbrev=False``): ``--bench`` must never be read
    as ``--bench-path``; an option is written in full or refused.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{self.prog}: {message}; see {self.prog} --help")


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    configure: Callable[[argparse.ArgumentParser], None] = lambda p: None


# --------------------------------------------------------------------------- registry

SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("validate", "check matrix.toml against the compatibility table", setup.cmd_validate),
    Subcommand("list", "show the resolved cells (name, TF, Keras, Python, target, CUDA, base, tag)",
               setup.cmd_list, setup.configure_list),
    Subcommand("render", "write one Dockerfile + requirements.txt + cell.json per cell", setup.cmd_render,
               setup.configure_render),
    Subcommand("wheels", "download every wheel the selected cells need into the shared wheelhouse", setup.cmd_wheels,
               setup.configure_wheels),
    Subcommand("base-images", "build local base images for hosts without a registry (air-gapped)",
               setup.cmd_base_images, setup.configure_base_images),
    Subcommand("matrix", "run every cell (or --only GLOB), write results, build the report", run.cmd_matrix,
               run.configure_matrix),
    Subcommand("cell", "run one cell (build if needed), write its results, refresh the report", run.cmd_cell,
               run.configure_cell),
    Subcommand("report", "rebuild reports/index.html and results.csv from reports/cells/*.json", report.cmd_report,
               report.configure_report),
    Subcommand("compare", "two result sets side by side: per-variant ratio, interval, verdict; run-to-run "
               "agreement", compare.cmd_compare, compare.configure_compare),
    Subcommand("duet", "two cells at the same time, one CPU each, CPUs swapped every round; B against A",
               duet.cmd_duet, duet.configure_duet),
    Subcommand("sweep", "from which size one environment pays in its second setting (the GPU, two threads): at "
               "most six sizes chosen by a fitted model and bisection, each a verdict", sweep.cmd_sweep,
               sweep.configure_sweep),
    Subcommand("ab", "did my change make it slower: two versions of a benchmark file measured together, in the "
               "same processes; head against base, with compare's gate", ab.cmd_ab, ab.configure_ab),
    Subcommand("explain", "why one side is slower: both sides profiled in their cells (a run of its own), lined "
               "up function by function", explain.cmd_explain, explain.configure_explain),
    Subcommand("bisect", "which release changed a claim (or one variant's time): a binary search over TF or Keras "
               "releases, each probe a cell built on demand", bisect.cmd_bisect, bisect.configure_bisect),
    Subcommand("timeline", "every claim across every TF minor release (or Keras 3 release): one cell per release, "
               "only the claims' variants; timeline.csv and a chart per claim", timeline.cmd_timeline,
               timeline.configure_timeline),
    Subcommand("series", "every kept run of each cell over time: the steps found (\"X 20% slower since run R, "
               "confirmed by 3 runs\"), the suspicious ones, the claim lines whose verdict changed",
               series.cmd_series, series.configure_series),
    Subcommand("publish", "many machines' reports directories merged into one static site: a report and a "
               "series per testbed", series.cmd_publish, series.configure_publish),
    Subcommand("disk", "tfmatrix's images, virtualenvs and wheels, who uses each; --prune removes what nothing "
               "uses (never another program's images)", disk.cmd_disk, disk.configure_disk),
)


def build_parser(subcommands: Sequence[Subcommand] = SUBCOMMANDS) -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="TensorFlow/Keras performance across versions, reproducibly.")
    parser.add_argument("--version", action="version", version=f"tfmatrix {__version__}")
    common = _Parser(add_help=False)
    common.add_argument("--matrix", default=str(paths.DEFAULT_MATRIX), metavar="PATH",
                        help="matrix file (default: matrix.toml at the repository root)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for sc in subcommands:
        # argparse %-formats a help line ("20% slower" would print its internals), never a description
        p = sub.add_parser(sc.name, help=sc.help.replace("%", "%%"), description=sc.help, parents=[common])
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
    except OSError as exc:  # a file tfmatrix could not read or write: one line, not a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        if exc.errno == errno.ENOSPC:
            print(f"tfmatrix: error: the disk is full ({where}{exc.strerror or exc}): every slice and cell file "
                  "written before it is kept; free space (`python -m tfmatrix disk --prune` lists what tfmatrix "
                  "keeps) and run the same command again: it resumes", file=sys.stderr)
            return 1
        print(f"tfmatrix: error: {where}{exc.strerror or exc}; check the path and its permissions", file=sys.stderr)
        return 2
