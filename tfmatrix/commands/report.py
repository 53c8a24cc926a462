"""The commands that read results and run nothing: ``report`` (the page) and ``compare`` (two runs).

Registered in ``cli.SUBCOMMANDS`` like every other command.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rich.markup import escape

from .. import paths
from ..errors import UserError
from ..matrix import Matrix
from .common import load_matrix, output_dir

if TYPE_CHECKING:
    from ..analysis.cells import Refused


def cmd_report(args: argparse.Namespace) -> int:
    """Rebuild reports/index.html and results.csv from reports/cells/*.json; runs nothing."""
    from ..report.build import build

    out = output_dir(args.out, "--out", create=False)   # created when the report is written
    cells = Path(args.cells) if args.cells else out / "cells"
    matrix = load_matrix(args) if Path(args.matrix).exists() else None
    baseline, source, fallback = args.baseline, "--baseline", False
    if baseline is None and matrix is not None:
        baseline, source, fallback = matrix.settings.baseline, f"{matrix.path.name}: baseline", True
    upgrade, upgrade_source = _upgrade_pair(args, matrix, baseline)
    previous = Path(args.previous) if args.previous else None
    summary = build(cells, out, baseline, baseline_source=source, baseline_fallback=fallback, previous=previous,
                    upgrade=upgrade, upgrade_source=upgrade_source)
    print(summary.line())
    return report_refused(summary.refused, sys.stderr)


def _upgrade_pair(args: argparse.Namespace, matrix: Matrix | None, baseline: str | None
                  ) -> tuple[tuple[str, str] | None, str]:
    """The upgrade view's (baseline, candidate): ``--candidate`` against the baseline, else ``[report] compare``."""
    if args.candidate is not None:
        if baseline is None:
            raise UserError(f"--candidate {args.candidate}: no baseline to compare it with; add --baseline CELL")
        return (baseline, args.candidate), "--baseline/--candidate"
    if matrix is not None and matrix.settings.compare is not None:
        return matrix.settings.compare, f"{matrix.path.name}: [report] compare"
    return None, ""


def report_refused(refused: Sequence[Refused], err: TextIO) -> int:
    """Name each cell file the report left out, one stderr line each; exit code 2 when there are any.

    Called after the report is written: the readable cells are reported even
    when a file beside them is broken, and the exit code still says so.
    """
    for r in refused:
        print(f"tfmatrix: error: {r.reason}", file=err)
    return 2 if refused else 0


def _configure_report(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cells", metavar="DIR", help="cell results directory (default: <out>/cells)")
    p.add_argument("--out", default=str(paths.REPORTS_DIR), metavar="DIR", help="output directory (default: reports)")
    p.add_argument("--baseline", metavar="CELL", help="cell to compare against (default: matrix.toml's baseline)")
    p.add_argument("--candidate", metavar="CELL", help="add the upgrade view: every variant's time in CELL against "
                   "the baseline, ratio, interval and verdict, slowest first (default: [report] compare)")
    p.add_argument("--previous", metavar="DIR", help="an earlier run's cell files; the summary states how well the "
                   "two runs agree (default: <out>/previous, kept by matrix/cell when they replace a complete run)")


# --------------------------------------------------------------------------- compare


def cmd_compare(args: argparse.Namespace) -> int:
    """Two result sets side by side (pyperf compare_to): per variant the time ratio B/A, its interval, a verdict."""
    from ..analysis.compare import compare_paths
    from ..report.compare_view import compare_csv, compare_html, table_rows
    from ..results.store import write_text_atomic

    result = compare_paths(Path(args.a), Path(args.b), args.cell, args.normalise)
    offenders = result.offenders(args.fail_on) if args.fail_on is not None else []
    for line in offenders:       # a CI gate's reader wants these first
        print(f"tfmatrix: gate: {line}")
    rows = table_rows(result, None if args.all else args.rows)
    if rows:
        from rich.console import Console
        from rich.table import Table

        shown = "all" if args.all or len(rows) == len(result.variants) else f"the {len(rows)} that moved most"
        table = Table(title=f"{len(result.variants)} variants, {shown}")
        for column in ("cell", "variant", "A", "B", "B/A", "95% CI", "verdict"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*(escape(x) for x in row))
        Console(width=None if sys.stdout.isatty() else 200).print(table)
    if args.csv:
        write_text_atomic(Path(args.csv), compare_csv(result))
    if args.html:
        write_text_atomic(Path(args.html), compare_html(result))
    for line in result.summary_lines():
        print(line)
    if args.fail_on is not None:
        print(f"tfmatrix: gate: {len(offenders)} offender(s) for --fail-on slower:{args.fail_on:.0%}"
              + (" (listed first)" if offenders else ""))
    return 1 if offenders else 0


def fail_on(text: str) -> float:
    """``slower:10%`` (or ``slower:10``) -> 0.10: the gate's threshold on a clear slowdown."""
    kind, _, value = text.partition(":")
    number = value.strip().rstrip("%")
    try:
        threshold = float(number) / 100.0
    except ValueError:
        threshold = -1.0
    if kind != "slower" or not 0.0 <= threshold <= 10.0:
        raise argparse.ArgumentTypeError(f"{text!r}: use slower:PERCENT, e.g. slower:10%")
    return threshold


def _configure_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="RUN_A", help="a directory of cell files (a copy of reports/cells) or one cell file")
    p.add_argument("b", metavar="RUN_B", help="the same for the other side; two files compare two different cells")
    p.add_argument("--cell", action="append", default=[], metavar="NAME", help="only this cell (repeatable)")
    p.add_argument("--rows", type=int, default=20, metavar="N", help="show the N variants that moved most (default 20)")
    p.add_argument("--all", action="store_true", help="show every variant")
    p.add_argument("--csv", metavar="FILE", help="write every variant's row as CSV")
    p.add_argument("--html", metavar="FILE", help="write the comparison as a self-contained HTML page")
    p.add_argument("--fail-on", type=fail_on, metavar="slower:PERCENT",
                   help="exit 1 when a variant broke, or is clearly slower (the report's verdict rule) with its whole "
                        "95%% interval above 1 + PERCENT; offenders are printed first (a CI gate)")
    p.add_argument("--normalise", choices=("none", "host", "run"), default="none",
                   help="take a common move of B out of every ratio: host, by the host's reference workload; run, by "
                        "the median ratio of every variant compared (default: none)")
