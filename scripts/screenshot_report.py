#!/usr/bin/env python3
"""Refresh docs/report.png: the report of a results directory as a 1366x768 laptop screen shows it first.

    python scripts/screenshot_report.py reports/cells            # the last run's cells
    python scripts/screenshot_report.py tests/golden/default-matrix.tar.gz --out /tmp/report.png
    python scripts/screenshot_report.py reports/index.html --section timeline --out docs/timeline.png

Given an ``index.html``, the report as written (with its timeline and
bisect sections, which come from files beside it) is shown instead of a
fresh build. ``--section ID`` captures that whole section rather than the
first screen.

Builds the report into a temporary directory and drives headless Chromium
through the same DevTools pipe the browser tests use (tests/cdp_pipe.py).
"""
from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from cdp_pipe import Chromium, find_chromium  # noqa: E402

from tfmatrix.report.build import build  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cells", type=Path, help="a cells directory, a .tar.gz holding cells/, or a report's index.html")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "report.png")
    p.add_argument("--width", type=int, default=1366)
    p.add_argument("--height", type=int, default=768)
    p.add_argument("--section", metavar="ID", help="capture the element with this id whole (e.g. timeline, bisect)")
    args = p.parse_args()
    chromium = find_chromium()
    if chromium is None:
        sys.exit("screenshot_report: headless Chromium not found (bash scripts/host-setup installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        cells = args.cells
        if cells.name == "index.html":
            html = cells.resolve()
        else:
            if cells.name.endswith(".tar.gz"):
                with tarfile.open(cells) as tar:
                    tar.extractall(tmp, filter="data")
                cells = Path(tmp) / "cells"
            build(cells, Path(tmp) / "out")
            html = Path(tmp) / "out" / "index.html"
        with Chromium.start(Path(tmp) / "profile", chromium, width=args.width, height=args.height) as browser:
            page = browser.open_page(html.as_uri(), width=args.width, height=args.height)
            if args.section:
                box = page.evaluate(
                    "(function (el) { if (!el) return null; var r = el.getBoundingClientRect();"
                    " return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width,"
                    " height: r.height}; })(document.getElementById(%r))" % args.section)
                if box is None:
                    sys.exit(f"screenshot_report: {html} has no element with id {args.section!r}")
                page.screenshot(args.out, clip=box)
            else:
                page.screenshot(args.out, full_page=False)
    print(f"screenshot_report: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
