"""The ``report`` command: rebuild the page and its CSV files from the cell files; runs nothing.

The baseline comes from ``--baseline`` or matrix.toml's, the upgrade view's
pair from ``--candidate`` or ``[report] compare`` (``_upgrade_pair``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import UserError
from ..matrix import Matrix
from .common import load_matrix, output_dir, report_refused
from .options import add_reports


def cmd_report(args: argparse.Namespace) -> int:
    """Rebuild reports/index.html and results.csv from reports/cells/*.json; runs nothing."""
    from ..report.build import build

    flag, given = ("--out", args.out) if args.out is not None else ("--reports", args.reports)
    out = output_dir(given, flag, create=False)   # created when the report is written
    cells = Path(args.cells) if args.cells else out / "cells"
    matrix = load_matrix(args) if Path(args.matrix).exists() else None
    baseline, source, fallback = args.baseline, "--baseline", False
    if baseline is None and matrix is not None:
        baseline, source, fallback = matrix.settings.baseline, f"{matrix.path.name}: baseline", True
    upgrade, upgrade_source = _upgrade_pair(args, matrix, baseline)
    previous = Path(args.previous) if args.previous else None
    summary = build(cells, out, baseline, baseline_source=source, baseline_fallback=fallback, previous=previous,
                    upgrade=upgrade, upgrade_source=upgrade_source, claims_from=matrix)
    print(summary.line())
    for note in summary.unanswered:
        print(note)
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


def configure_report(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cells", metavar="DIR", help="cell results directory (default: <reports>/cells)")
    add_reports(p, "index.html and the CSV files go")
    p.add_argument("--out", metavar="DIR", help="deprecated: the old name of --reports")
    p.add_argument("--baseline", metavar="CELL", help="cell to compare against (default: matrix.toml's baseline)")
    p.add_argument("--candidate", metavar="CELL", help="add the upgrade view: every variant's time in CELL against "
                   "the baseline, ratio, interval and verdict, slowest first (default: [report] compare)")
    p.add_argument("--previous", metavar="DIR", help="an earlier run's cell files; the summary states how well the "
                   "two runs agree (default: each cell's run before this one in the run archive, <reports>/runs)")
