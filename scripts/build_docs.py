#!/usr/bin/env python3
"""Build the documentation site (build/site/) from README.md and docs/ with mkdocs, strictly.

The README is the site's home page and docs/*.md its other pages, each kept
where GitHub shows it; this script copies them into build/docs-src/ (the
README as index.md, its ``docs/`` links made relative to the site) and runs
``mkdocs build --strict``, so a broken link, a missing anchor or a page left
out of ``mkdocs.yml``'s navigation fails the build.

    python scripts/build_docs.py            # build/site/index.html
    python scripts/build_docs.py --root DIR # another checkout (the tests build a broken copy)
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def home_page(readme: str) -> str:
    """The README with its links into docs/ made relative to the site (docs/x.md -> x.md)."""
    return re.sub(r"\]\(docs/", "](", readme)


def assemble(root: Path) -> Path:
    """Copy the site's sources into root/build/docs-src (replaced whole) and return it."""
    src = root / "build" / "docs-src"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(root / "docs", src)
    (src / "index.md").write_text(home_page((root / "README.md").read_text(encoding="utf-8")), encoding="utf-8")
    return src


def build(root: Path) -> subprocess.CompletedProcess[str]:
    assemble(root)
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "-f",
                           str(root / "mkdocs.yml")], cwd=root, capture_output=True, text=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=ROOT)
    args = p.parse_args()
    done = build(args.root)
    sys.stderr.write(done.stderr)
    if done.returncode == 0:
        print(f"docs: {args.root / 'build' / 'site' / 'index.html'}")
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
