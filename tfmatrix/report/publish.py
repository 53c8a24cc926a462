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
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup

from ..analysis.series.answers import cell_series
from ..errors import UserError
from ..results.archive import KeptRun, Testbed, archive_dir, copy_runs, open_cell_file, read_archive
from ..results.store import write_text_atomic
from . import series_view
from .build import build
from .html import HERE, environment

SITE_INDEX = "index.html"


@dataclass(frozen=True)
class TestbedPage:
    """One testbed of the site: its runs (each with the reports directory it came from) and what its page says."""

    testbed: Testbed
    runs: tuple[tuple[KeptRun, Path], ...]
    sources: tuple[str, ...]          # the reports directories it came from, as given

    @property
    def latest(self) -> dict[str, tuple[KeptRun, Path]]:
        """The newest kept run of each cell."""
        out: dict[str, tuple[KeptRun, Path]] = {}
        for run, where in sorted(self.runs, key=lambda rw: rw[0].finished):
            out[run.cell] = (run, where)
        return out


def gather(dirs: Sequence[Path]) -> list[TestbedPage]:
    """The kept runs of every reports directory, by testbed, each file once (``UserError``: a directory keeps none)."""
    by_key: dict[str, dict[str, tuple[KeptRun, Path]]] = {}
    sources: dict[str, list[str]] = {}
    testbeds: dict[str, Testbed] = {}
    for d in dirs:
        archive = read_archive(d)
        if not archive.runs:
            raise UserError(f"{d}: no kept runs ({archive_dir(d)}/index.json is missing or empty); give a reports "
                            "directory a run or `python -m tfmatrix report` wrote")
        for run in archive.runs:
            key = run.testbed.key
            testbeds[key] = run.testbed
            by_key.setdefault(key, {}).setdefault(run.digest, (run, d))
            if str(d) not in sources.setdefault(key, []):
                sources[key].append(str(d))
    return [TestbedPage(testbeds[k], tuple(by_key[k].values()), tuple(sources[k])) for k in sorted(by_key)]


def publish(dirs: Sequence[Path], out: Path, generated: str | None = None) -> list[TestbedPage]:
    """Write the site into ``out``: a folder per testbed (its runs, its latest cells, their report), then the
    index. Returns the testbeds published."""
    pages = gather(dirs)
    out.mkdir(parents=True, exist_ok=True)
    for page in pages:
        _testbed_folder(page, out, generated)
    write_text_atomic(out / SITE_INDEX, site_index(pages, out, generated))
    return pages


def _testbed_folder(page: TestbedPage, out: Path, generated: str | None) -> None:
    final = out / page.testbed.key
    work = out / f".tmp-{page.testbed.key}"
    shutil.rmtree(work, ignore_errors=True)
    copy_runs(page.runs, work)
    cells = work / "cells"
    cells.mkdir(parents=True)
    for run, where in page.latest.values():
        (cells / f"{Path(run.file).parent.name}.json").write_bytes(open_cell_file(where, run))
    build(cells, work, generated=generated)
    old = out / f".old-{page.testbed.key}"
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    work.rename(final)
    shutil.rmtree(old, ignore_errors=True)


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
