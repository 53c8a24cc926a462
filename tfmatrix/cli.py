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
from typing import TYPE_CHECKING, Any, NoReturn

from rich.markup import escape

from . import __version__, paths
from .commands.common import add_only, find_cell, load_matrix, output_dir, selected
from .commands.report import _configure_compare, _configure_report, cmd_compare, cmd_report, report_refused
from .errors import UserError
from .matrix import KNOWN_PRESETS, Cell, Matrix
from .results.documents import CELL_FAILURES, CELL_STATUSES

if TYPE_CHECKING:
    from .analysis.cells import Refused

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


class _OtherCommands(argparse.Action):
    """An option of another command, refused with the name of this command's own (``--bench`` on ``cell``)."""

    def __init__(self, option_strings: Sequence[str], dest: str, use: str = "", **kwargs: Any) -> None:
        self.use = use
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(f"{option_string} is not an option of this command; use {self.use}")


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    configure: Callable[[argparse.ArgumentParser], None] = lambda p: None


# --------------------------------------------------------------------------- shared helpers


# --------------------------------------------------------------------------- validate


def cmd_validate(args: argparse.Namespace) -> int:
    """Load and check the matrix; one summary line."""
    from .execution.dispatch import cold_estimate
    from .progress import fmt_duration

    matrix = load_matrix(args)
    print(f"{len(matrix.cells)} cells OK ({len(matrix.warnings)} warnings); a first `matrix` run of all of them: "
          f"roughly {fmt_duration(cold_estimate(matrix.cells))}")
    return 0


# --------------------------------------------------------------------------- list


def _list_rows(cells: Sequence[Cell]) -> list[dict[str, object]]:
    from .provision.render import render_cells  # jinja2 only when needed

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
        table.add_row(cell.name, cell.tf or "- (no TF)", cell.keras.label, cell.python, cell.target, cuda,
                      cell.base.ref, str(row["tag"]).rsplit(":", 1)[1])
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(table)
    return 0


def _configure_list(p: argparse.ArgumentParser) -> None:
    add_only(p)
    p.add_argument("--json", action="store_true", help="print cell.json documents (with tags) as a JSON array")


# --------------------------------------------------------------------------- render


def cmd_render(args: argparse.Namespace) -> int:
    """Write build/images/<cell>/{Dockerfile,requirements.txt,cell.json}."""
    from .provision.render import render_cells, write_rendered

    matrix = load_matrix(args)
    cells = selected(matrix, args.only)
    out = output_dir(args.out, "--out")
    for rendered in render_cells(cells):
        target = write_rendered(rendered, out)
        print(f"{target}  {rendered.tag}")
    print(f"rendered {len(cells)} cell{'s' if len(cells) != 1 else ''} into {out}")
    return 0


def _configure_render(p: argparse.ArgumentParser) -> None:
    add_only(p)
    p.add_argument("--out", default=str(paths.RENDER_DIR), metavar="DIR",
                   help="output directory (default: build/images)")


# --------------------------------------------------------------------------- matrix / cell


def _run_cells(args: argparse.Namespace, cells: Sequence[Cell], bench: Sequence[str], redo: bool,
               requested: str | None = None) -> int:
    """Run ``cells`` (one at a time), write their results, then refresh the report.

    Holds the checkout's run lock throughout (see ``lock``). ``requested`` is
    the one cell a user asked for by name (``cell NAME``): if it is skipped,
    the last line says so and the exit code is non-zero, since they got nothing.
    """
    from rich.console import Console

    from .execution.dispatch import execute, make_runner
    from .execution.lock import command_line, run_lock
    from .runners.common import RunRequest

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    matrix = args.loaded_matrix
    reports = output_dir(args.reports, "--reports")
    user_paths = bench_paths(args.bench_path, matrix)
    with run_lock(paths.BUILD_DIR / "run.lock", command_line()):
        if args.runner == "ray":
            runner = make_runner("ray", matrix.settings.base_registry, console,
                                 args.address or matrix.settings.cluster_address, matrix.settings.cluster_cpus)
        else:
            runner = make_runner(args.runner, matrix.settings.base_registry, console)
        rounds = args.rounds if args.rounds is not None else matrix.settings.rounds
        schedule = args.schedule or matrix.settings.schedule
        request = RunRequest(preset=args.preset, only=tuple(bench), repeats=args.repeats, rounds=rounds,
                             bench_paths=user_paths, processes=args.processes, schedule=schedule, seed=args.seed)
        outcomes = execute(cells, runner, request, reports, redo=redo, console=console)
        refused = _refresh_report(reports, matrix, console)
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


def bench_paths(given: Sequence[str], matrix: Matrix) -> tuple[Path, ...]:
    """The user's benchmark paths: ``--bench-path`` (relative to the current directory) replaces ``[suite] paths``."""
    from .matrix.user_benchmarks import check_path

    if not given:
        return matrix.settings.bench_paths
    return tuple(dict.fromkeys(check_path(p, Path.cwd(), f"--bench-path {p}", "the current directory")
                               for p in given))


def _has_results(cells_dir: Path, name: str) -> bool:
    from .results.store import load_cell

    doc = load_cell(cells_dir / f"{name}.json")
    return doc is not None and doc.status == "ok"


def _refresh_report(reports: Path, matrix: Matrix, console: Any) -> list[Refused]:
    """Rebuild the report after a run; the cell files it had to leave out."""
    from .report.build import build

    cells = reports / "cells"
    upgrade = matrix.settings.compare
    if upgrade is not None and not all(_has_results(cells, name) for name in upgrade):
        console.print("\\[tfmatrix] " + escape(f"[report] compare: {' or '.join(upgrade)} has no results yet: "
                                                "no upgrade view"))
        upgrade = None
    summary = build(cells, reports, matrix.settings.baseline, baseline_source=f"{matrix.path.name}: baseline",
                    baseline_fallback=True, upgrade=upgrade)
    if summary.baseline_note:
        console.print("\\[tfmatrix] " + escape(summary.baseline_note))
    console.print("\\[tfmatrix] " + escape(summary.line()))
    return summary.refused


def cmd_matrix(args: argparse.Namespace) -> int:
    """Every cell (or those matching --only), then the report."""
    args.loaded_matrix = load_matrix(args)
    cells = selected(args.loaded_matrix, args.only)
    return _run_cells(args, cells, args.bench, redo=args.redo)


def cmd_cell(args: argparse.Namespace) -> int:
    """One cell by name: build if needed, run, write its results, refresh the report."""
    args.loaded_matrix = load_matrix(args)
    cell = find_cell(args.loaded_matrix, args.name)
    return _run_cells(args, [cell], args.only, redo=True, requested=cell.name)


def cmd_duet(args: argparse.Namespace) -> int:
    """Two cells at the same time, one CPU each (``tfmatrix.execution.duet``)."""
    from .execution.duet import cmd_duet as run

    return run(args)


def _configure_duet(p: argparse.ArgumentParser) -> None:
    from .execution.duet import configure

    configure(p)


def _then_report(args: argparse.Namespace, code: int) -> int:
    """After a bisect or a timeline: rebuild the report beside them (it gains their section) when it has cells."""
    from rich.console import Console

    reports = Path(args.reports)
    if any((reports / "cells").glob("*.json")):
        refused = _refresh_report(reports, load_matrix(args), Console(stderr=True, highlight=False, soft_wrap=True))
        report_refused(refused, sys.stderr)
    return code


def cmd_bisect(args: argparse.Namespace) -> int:
    """Which release changed a claim or a variant (``tfmatrix.history.bisect``), then the report."""
    from .history.bisect import cmd_bisect as run

    return _then_report(args, run(args))


def _configure_bisect(p: argparse.ArgumentParser) -> None:
    from .history.bisect import configure

    configure(p)


def cmd_timeline(args: argparse.Namespace) -> int:
    """Every claim across every release (``tfmatrix.history.timeline``), then the report."""
    from .history.timeline import cmd_timeline as run

    return _then_report(args, run(args))


def _configure_timeline(p: argparse.ArgumentParser) -> None:
    from .history.timeline import configure

    configure(p)


def _add_run_options(p: argparse.ArgumentParser) -> None:
    from .execution.dispatch import RUNNERS

    p.add_argument("--preset", choices=KNOWN_PRESETS, help="override every cell's suite preset")
    p.add_argument("--repeats", type=int, help="override the samples per process")
    p.add_argument("--processes", type=int, choices=range(1, 11), metavar="N",
                   help="fresh processes per variant in each round (default: the preset's, 1 for seed and quick); more "
                        "agree better from run to run at N times the suite's time (docs/measurement.md)")
    p.add_argument("--rounds", type=int, choices=range(1, 21), metavar="N",
                   help="measure every variant in N rounds, a fresh process each, pooled (default: matrix.toml's "
                        "rounds, 3)")
    p.add_argument("--schedule", choices=("interleaved", "sequential"),
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


def _configure_matrix(p: argparse.ArgumentParser) -> None:
    add_only(p)
    _add_run_options(p)
    p.add_argument("--bench", action="append", default=[], metavar="PATTERN",
                   help="run only benchmarks matching PATTERN (glob on variant id; repeatable)")
    p.add_argument("--redo", action="store_true", help="run again cells whose earlier results are still valid")


def _configure_cell(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="cell name (see `list`)")
    _add_run_options(p)
    p.add_argument("--only", action="append", default=[], metavar="PATTERN",
                   help="run only benchmarks matching PATTERN (glob on variant id; repeatable)")
    p.add_argument("--bench", action=_OtherCommands, use="--only PATTERN to pick benchmarks in one cell")


# --------------------------------------------------------------------------- report


# --------------------------------------------------------------------------- wheels / base-images


def cmd_wheels(args: argparse.Namespace) -> int:
    """Fill the shared wheelhouse for the selected cells (air-gapped hosts: run this where PyPI answers)."""
    from .provision import wheelhouse

    matrix = load_matrix(args)
    cells = selected(matrix, args.only)
    failed = 0
    for cell in cells:
        try:
            ws = wheelhouse.ensure((*cell.bootstrap, *cell.requirements), cell.python, offline=args.offline,
                                   log=(print if args.verbose else (lambda line: None)))
        except wheelhouse.WheelhouseError as e:
            print(f"{cell.name}: FAILED: {e}", file=sys.stderr)
            failed += 1
            continue
        print(f"{cell.name}: {len(ws.files)} wheels ({ws.downloaded} downloaded, {ws.how}, {ws.seconds:.1f} s)")
    print(f"wheelhouse: {wheelhouse.wheelhouse_dir()}")
    return 1 if failed else 0


def _configure_wheels(p: argparse.ArgumentParser) -> None:
    add_only(p)
    p.add_argument("--offline", action="store_true", help="use only what the wheelhouse has (TFMATRIX_OFFLINE=1)")
    p.add_argument("--verbose", action="store_true", help="show pip's output")


def cmd_base_images(args: argparse.Namespace) -> int:
    """Build the base images the selected CPU cells expect, from this host (no registry needed)."""
    from .provision import base_images
    from .runners.docker import engine

    matrix = load_matrix(args)
    cells = [c for c in selected(matrix, args.only) if c.target == "cpu"]
    client = engine()
    if client is None:
        raise UserError("base-images: no Docker engine answers (start dockerd, or check DOCKER_HOST)")
    upstream = sorted({c.base.upstream for c in cells if base_images.buildable_python(c.base.upstream)})
    from .execution.lock import command_line, run_lock

    try:
        with run_lock(paths.BUILD_DIR / "run.lock", command_line()):   # never build an image twice at once
            built = base_images.ensure_for(client, upstream, log=(print if args.verbose else (lambda line: None)))
    except base_images.BaseImageError as e:
        raise UserError(f"base-images: {e}") from None
    for up, local in built.items():
        print(f"{up} -> {local}")
    print(f"use them with TFMATRIX_BASE_REGISTRY={base_images.LOCAL_REGISTRY} (the docker runner also picks them "
          "by itself when a pull fails)")
    return 0


def _configure_base_images(p: argparse.ArgumentParser) -> None:
    add_only(p)
    p.add_argument("--verbose", action="store_true", help="show debootstrap and docker build output")


# --------------------------------------------------------------------------- registry

SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("validate", "check matrix.toml against the compatibility table", cmd_validate),
    Subcommand("list", "show the resolved cells (name, TF, Keras, Python, target, CUDA, base, tag)",
               cmd_list, _configure_list),
    Subcommand("render", "write one Dockerfile + requirements.txt + cell.json per cell", cmd_render,
               _configure_render),
    Subcommand("wheels", "download every wheel the selected cells need into the shared wheelhouse", cmd_wheels,
               _configure_wheels),
    Subcommand("base-images", "build local base images for hosts without a registry (air-gapped)",
               cmd_base_images, _configure_base_images),
    Subcommand("matrix", "run every cell (or --only GLOB), write results, build the report", cmd_matrix,
               _configure_matrix),
    Subcommand("cell", "run one cell (build if needed), write its results, refresh the report", cmd_cell,
               _configure_cell),
    Subcommand("report", "rebuild reports/index.html and results.csv from reports/cells/*.json", cmd_report,
               _configure_report),
    Subcommand("compare", "two result sets side by side: per-variant ratio, interval, verdict; run-to-run "
               "agreement", cmd_compare, _configure_compare),
    Subcommand("duet", "two cells at the same time, one CPU each, CPUs swapped every round; B against A",
               cmd_duet, _configure_duet),
    Subcommand("bisect", "which release changed a claim (or one variant's time): a binary search over TF or Keras "
               "releases, each probe a cell built on demand", cmd_bisect, _configure_bisect),
    Subcommand("timeline", "every claim across every TF minor release (or Keras 3 release): one cell per release, "
               "only the claims' variants; timeline.csv and a chart per claim", cmd_timeline, _configure_timeline),
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
    except OSError as exc:  # a file tfmatrix could not read or write: one line, not a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"tfmatrix: error: {where}{exc.strerror or exc}; check the path and its permissions", file=sys.stderr)
        return 2
