#!/usr/bin/env python3
"""Refresh docs/report.png: the report of a results directory as a 1366x768 laptop screen shows it first.

    python scripts/screenshot_report.py reports/cells            # the last run's cells
    python scripts/screenshot_report.py tests/golden/default-matrix.tar.gz --out /tmp/report.png

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

from tfmatrix.report import build  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cells", type=Path, help="a cells directory, or a .tar.gz holding cells/")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "report.png")
    p.add_argument("--width", type=int, default=1366)
    p.add_argument("--height", type=int, default=768)
    args = p.parse_args()
    chromium = find_chromium()
    if chromium is None:
        sys.exit("screenshot_report: headless Chromium not found (bash scripts/host-setup installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        cells = args.cells
        if cells.name.endswith(".tar.gz"):
            with tarfile.open(cells) as tar:
                tar.extractall(tmp, filter="data")
            cells = Path(tmp) / "cells"
        build(cells, Path(tmp) / "out")
        with Chromium.start(Path(tmp) / "profile", chromium, width=args.width, height=args.height) as browser:
            page = browser.open_page((Path(tmp) / "out" / "index.html").as_uri(), width=args.width,
                                     height=args.height)
            page.screenshot(args.out, full_page=False)
    print(f"screenshot_report: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
