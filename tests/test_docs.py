"""The README stays short and the reference lives in docs/, built strictly into a site (mkdocs).

Every section the README once held must still be a heading of some page in docs/, the README's
two commands must sit in its first screen, and `scripts/build_docs.py` must fail on a broken link
(checked on a broken copy, so the strictness itself is tested, not assumed).
"""
from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")

# The sections of the 1011-line README before the reference moved into docs/ (issue 23).
OLD_SECTIONS = [
    "What Docker and the NVIDIA Container Toolkit are for", "The default matrix", "`matrix.toml`",
    "How each cell's image is made", "Keras 3 backends", "Adding a TensorFlow release", "Air-gapped hosts",
    "Running on many machines", "The benchmark suite", "How it measures", "Measuring tfmatrix itself",
    "Reproducibility on this 2-core VM", "Benchmark your own model", "1. Write a benchmark file",
    "2. Point the matrix at it", "3. Read the answer", "API reference", "Results", "Reading the report",
    "Comparing two runs", "What the default matrix showed", "Tests", "Commands and sessions",
]

needs_mkdocs = pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                                  reason="mkdocs is not installed (the test extra has it)")


def _headings() -> list[str]:
    out = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        out += [m.group(1).strip() for m in re.finditer(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), re.M)]
    return out


def test_readme_is_read_in_one_sitting_and_opens_with_the_two_commands():
    lines = README.splitlines()
    assert len(lines) < 250
    first_screen = "\n".join(lines[:50])
    assert "nox -s matrix" in first_screen and "nox -s tests" in first_screen


def test_every_old_readme_section_is_a_heading_in_docs():
    headings = _headings()
    missing = [s for s in OLD_SECTIONS if not any(h.startswith(s) for h in headings)]
    assert missing == []


def test_every_docs_page_is_linked_from_the_readme_and_exists():
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)", README))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert linked == pages


@needs_mkdocs
@pytest.mark.slow
def test_the_site_builds_strictly_and_a_broken_link_fails_it(tmp_path):
    import subprocess
    import sys

    def build(root: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(ROOT / "scripts" / "build_docs.py"), "--root", str(root)],
                              capture_output=True, text=True)

    good = tmp_path / "good"
    good.mkdir()
    for name in ("README.md", "mkdocs.yml"):
        shutil.copy(ROOT / name, good / name)
    shutil.copytree(ROOT / "docs", good / "docs")
    done = build(good)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    home = (good / "build" / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="measurement.html"' in home                 # the README's docs/ links point into the site
    assert (good / "build" / "site" / "findings.html").is_file()

    broken = tmp_path / "broken"
    shutil.copytree(good, broken, ignore=shutil.ignore_patterns("build"))
    page = broken / "docs" / "commands.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n", encoding="utf-8")
    done = build(broken)
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


def test_every_test_the_faults_page_names_exists():
    """docs/faults.md pairs each fault with the test that injects it: a renamed or removed test breaks the pairing."""
    page = (ROOT / "docs" / "faults.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_\w+)`", page))
    defined = {m for path in (ROOT / "tests").glob("test_*.py")
               for m in re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), flags=re.M)}
    assert len(named) >= 9
    assert sorted(named - defined) == []
