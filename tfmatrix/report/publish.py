"""One static site from many machines' run archives: ``publish DIR... --out SITE`` (asv's ``publish``).

Each reports directory keeps its runs (``results.archive``); a user with a
laptop, a CI machine and a GPU box has three. Publishing merges them by
testbed (``archive.Testbed``: numbers are compared only within one): per
testbed one folder holding its kept runs from every directory (each file
once, by digest), the newest run of each of its cells, and the report built
from those, whose "Over time" section shows the testbed's series; device
pairs come out of that report, so only within one environment of one
testbed. ``index.html`` lists the testbeds. Every page is self-contained
(no server, no network): the folder can be opened or served as it is.

A testbed's folder is built beside the old one and swapped in whole, so a
failed publish leaves the previous site.
"""
from __future__ import annotations

import datetime
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from markupsafe import Markup

from ..analysis.series.answers import cell_series
from ..errors import UserError
from ..results.archive import Archive, KeptRun, Testbed, archive_dir, cell_dir, copy_runs, open_cell_file, read_archive
from ..results.store import write_bytes_atomic, write_text_atomic
from . import series_view
from .build import build
from .html import HERE, environment

SITE_INDEX = "index.html"


@dataclass(frozen=True)
class TestbedPage:
    """One testbed of the site: its runs (each with the reports directory it came from) and what its page says."""

    testbed: Testbed
    runs: tuple[tuple[KeptRun, Path], ...]
    sources: tuple[str, ...]          # the reports directories it came from, as the site names them (``label``)

    @property
    def latest(self) -> dict[str, tuple[KeptRun, Path]]:
        """The newest kept run of each cell."""
        where = {run.digest: d for run, d in self.runs}
        return {cell: (run, where[run.digest]) for cell, run in newest(r for r, _ in self.runs).items()}


def newest(runs: Iterable[KeptRun]) -> dict[str, KeptRun]:
    """The newest of ``runs`` of each cell."""
    return {run.cell: run for run in sorted(runs, key=lambda r: r.finished)}


@dataclass(frozen=True)
class Site:
    """What ``publish`` wrote: the testbeds, and one line for each entry or file it left out (the rest published)."""

    pages: tuple[TestbedPage, ...]
    skipped: tuple[str, ...] = ()


def label(d: Path) -> str:
    """A reports directory as the site names it: its folder's name (and its parent's, where the name alone says
    little), never the publisher's absolute path."""
    parts = Path(d).resolve().parts
    return "/".join(parts[-2:]) if parts[-1:] in (("reports",), ("runs",)) and len(parts) > 2 else parts[-1]


def gather(dirs: Sequence[Path]) -> tuple[list[TestbedPage], list[str]]:
    """The kept runs of every reports directory, by testbed, each file once (``UserError``: a directory keeps none),
    and a line for each index entry left out."""
    by_key: dict[str, dict[str, tuple[KeptRun, Path]]] = {}
    sources: dict[str, list[str]] = {}
    testbeds: dict[str, Testbed] = {}
    skipped: list[str] = []
    for d in dirs:
        archive = read_archive(d)
        skipped += archive.skipped
        if not archive.runs:
            raise UserError(f"{d}: no kept runs ({archive_dir(d)}/index.json is missing or empty, or none of its "
                            "entries can be used); give a reports directory a run or `python -m tfmatrix report` "
                            "wrote")
        for run in archive.runs:
            key = run.testbed.key
            testbeds[key] = run.testbed
            by_key.setdefault(key, {}).setdefault(run.digest, (run, d))
            if label(d) not in sources.setdefault(key, []):
                sources[key].append(label(d))
    pages = [TestbedPage(testbeds[k], tuple(by_key[k].values()), tuple(sources[k])) for k in sorted(by_key)]
    return pages, skipped


def publish(dirs: Sequence[Path], out: Path, generated: str | None = None) -> Site:
    """Write the site into ``out``: a folder per testbed (its runs, its latest cells, their report), then the
    index. Returns the testbeds published and what was left out; ``UserError`` when nothing could be."""
    found, skipped = gather(dirs)
    out.mkdir(parents=True, exist_ok=True)
    pages = []
    for page in found:
        copied = _testbed_folder(page, out, generated)
        skipped += copied.skipped
        if copied.runs:
            pages.append(replace(page, runs=tuple(rw for rw in page.runs if copied.has(rw[0].digest))))
    if not pages:
        raise UserError(f"nothing to publish: no kept run of {', '.join(map(str, dirs))} could be read; "
                        + " | ".join(skipped[:3]))
    write_text_atomic(out / SITE_INDEX, site_index(pages, out, generated))
    return Site(tuple(pages), tuple(skipped))


def _testbed_folder(page: TestbedPage, out: Path, generated: str | None) -> Archive:
    """The testbed's folder, built beside the old one and swapped in whole: its runs' files (each read as its entry
    says, or left out), the newest cell file of each cell from those copies, their report. Returns what it kept."""
    final = out / page.testbed.key
    work = Path(tempfile.mkdtemp(prefix=f".tmp-{page.testbed.key}-", dir=out))
    try:
        copied = copy_runs(page.runs, work)
        if not copied.runs:
            return copied
        cells = work / "cells"
        cells.mkdir()
        for run in newest(copied.runs).values():
            write_bytes_atomic(cells / f"{cell_dir(run.cell)}.json", open_cell_file(work, run))
        build(cells, work, generated=generated)
        os.chmod(work, 0o755)
        old = out / f".old-{page.testbed.key}"
        shutil.rmtree(old, ignore_errors=True)
        if final.is_symlink():
            final.unlink()
        if final.exists():
            final.rename(old)
        work.rename(final)
        shutil.rmtree(old, ignore_errors=True)
        return copied
    finally:
        shutil.rmtree(work, ignore_errors=True)


def site_index(pages: Sequence[TestbedPage], out: Path, generated: str | None) -> str:
    """The site's front page: per testbed, what it is, its cells and runs, the steps its series found."""
    rows = []
    for page in pages:
        runs = [r for r, _ in page.runs]
        series = series_view.shown(cell_series(runs))
        steps = [line for s in series for line in series_view.step_lines(s)]
        rows.append({"key": page.testbed.key, "text": page.testbed.text(), "cells": sorted(page.latest),
                     "runs": len(runs), "first": min(r.finished for r in runs)[:10],
                     "last": max(r.finished for r in runs)[:10], "sources": page.sources, "steps": steps,
                     "series": bool(series)})
    when = generated or datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    return environment(keep_trailing_newline=False).get_template("site.html").render(
        css=Markup((HERE / "report.css").read_text(encoding="utf-8")), testbeds=rows, generated=when)
