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
from pathlib import Path

from .common import output_dir
from .options import add_only, add_reports


def cmd_series(args: argparse.Namespace) -> int:
    from ..analysis.series.answers import cell_series
    from ..report import series_view
    from ..results.archive import archive_dir, read_archive

    reports = Path(args.reports)
    archive = read_archive(reports)
    found = [s for s in cell_series(archive.runs)
             if not args.only or any(fnmatch.fnmatchcase(s.cell, g) for g in args.only)]
    if not archive.runs:
        print(f"{archive_dir(reports)}: no kept runs yet; every report keeps the runs it is built from")
        return 0
    testbed = None
    for s in found:
        if s.testbed.key != testbed:
            testbed = s.testbed.key
            print(f"testbed {testbed}: {s.testbed.text()}")
        lines = series_view.cell_lines(s)
        print("\n".join("  " + line for line in lines))
    kept = sum(len(s.runs) for s in found)
    print(f"{kept} kept cell runs in {len(found)} series ({archive.bytes / 1e6:.1f} MB in {archive_dir(reports)})")
    return 0


def configure_series(p: argparse.ArgumentParser) -> None:
    add_reports(p, "the report and its kept runs (runs/) are")
    add_only(p)


def cmd_publish(args: argparse.Namespace) -> int:
    from ..report.publish import SITE_INDEX, publish

    out = output_dir(args.out, "--out")
    pages = publish([Path(d) for d in args.dirs], out)
    for page in pages:
        print(f"{page.testbed.key}: {page.testbed.text()}: {len(page.latest)} cells, {len(page.runs)} kept runs "
              f"(from {', '.join(page.sources)})")
    print(f"wrote {out / SITE_INDEX} ({len(pages)} testbed(s)); open it, or serve {out} as it is")
    return 0


def configure_publish(p: argparse.ArgumentParser) -> None:
    p.add_argument("dirs", metavar="DIR", nargs="+", help="reports directories (each with its runs/ archive), from "
                   "any machines")
    p.add_argument("--out", metavar="SITE", required=True, help="the site's folder (index.html, one folder per "
                   "testbed)")
