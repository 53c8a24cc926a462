"""The ``series`` and ``publish`` commands: every kept run of each cell over time, and many machines in one site.

``series`` reads the run archive beside a report (``<reports>/runs/``, kept by
every report) and prints each cell's series: the steps found ("X 20% slower
since run R (date), confirmed by 3 runs"), the suspicious ones, what the
series resolves, the claim lines whose verdict changed. ``publish DIR...
--out SITE`` merges the archives of many reports directories (machines)
into one static site, a report per testbed.
"""
from __future__ import annotations

import argparse
import fnmatch
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import output_dir
from .options import add_fail_on, add_only, add_reports, gate_head, gate_tail

if TYPE_CHECKING:
    from ..analysis.series.answers import CellSeries


def cmd_series(args: argparse.Namespace) -> int:
    from ..analysis.series.answers import cell_series
    from ..report import series_view
    from ..results.archive import archive_dir, read_archive

    reports = Path(args.reports)
    archive = read_archive(reports)
    for line in archive.skipped:
        print(f"tfmatrix: warning: {line}", file=sys.stderr)
    if not archive.runs:
        print(f"{archive_dir(reports)}: no kept runs yet; every report keeps the runs it is built from")
        return 0
    found = [s for s in cell_series(archive.runs)
             if not args.only or any(fnmatch.fnmatchcase(s.cell, g) for g in args.only)]
    testbed = None
    for s in found:
        if s.testbed.key != testbed:
            testbed = s.testbed.key
            print(f"testbed {testbed}: {s.testbed.text()}")
        lines = series_view.cell_lines(s)
        print("\n".join("  " + line for line in lines))
    kept = sum(len(s.runs) for s in found)
    print(f"{kept} kept cell runs in {len(found)} series ({archive.bytes / 1e6:.1f} MB in {archive_dir(reports)})")
    if args.fail_on is None:
        return 0
    from ..analysis.series.answers import WITHIN

    return _gate(found, args.fail_on, WITHIN if args.within is None else args.within)


def _gate(found: list[CellSeries], threshold: float, within: int) -> int:
    """The series gate's lines and exit code (1: a confirmed regression above the threshold)."""
    from ..analysis.series.answers import gate
    from ..report.series_view import gate_lines

    offenders, suspects = gate(found, threshold, within)
    for line in gate_head(gate_lines(offenders, suspects)):
        print(line)
    print(gate_tail(len(offenders), threshold, f" (a confirmed regression among each series' newest {within} runs; "
                                               f"{len(suspects)} suspect(s) in the newest run alone)"))
    return 1 if offenders else 0


def configure_series(p: argparse.ArgumentParser) -> None:
    add_reports(p, "the report and its kept runs (runs/) are")
    add_only(p)
    add_fail_on(p, gate="a CI gate with the kept runs as its baseline: exit 1 when a variant (or a whole cell) "
                "stepped up by more than PERCENT (its step's 95%% interval above 1 + PERCENT), confirmed by two "
                "runs or more, its step among each series' newest --within runs; a step in the newest run alone is "
                "a suspect, printed, never failed (the next run confirms it or not)")
    p.add_argument("--within", type=int, metavar="N", help="how recent a step the gate reads: among each series' "
                   "newest N runs (default: 3; docs/series.md)")


def cmd_publish(args: argparse.Namespace) -> int:
    from ..report.publish import SITE_INDEX, publish

    out = output_dir(args.out, "--out")
    site = publish([Path(d) for d in args.dirs], out)
    for line in site.skipped:
        print(f"tfmatrix: warning: {line}", file=sys.stderr)
    for page in site.pages:
        print(f"{page.testbed.key}: {page.testbed.text()}: {len(page.latest)} cells, {len(page.runs)} kept runs "
              f"(from {', '.join(page.sources)})")
    print(f"wrote {out / SITE_INDEX} ({len(site.pages)} testbed(s)); open it, or serve {out} as it is")
    return 0


def configure_publish(p: argparse.ArgumentParser) -> None:
    p.add_argument("dirs", metavar="DIR", nargs="+", help="reports directories (each with its runs/ archive), from "
                   "any machines")
    p.add_argument("--out", metavar="SITE", required=True, help="the site's folder (index.html, one folder per "
                   "testbed)")
