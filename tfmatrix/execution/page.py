"""The page as the run goes: after each look of a sequential run, the report of what is decided so far.

A run of the default takes a quarter of an hour warm and more cold, and its
report used to appear at the end only. After each look the live cells'
rounds so far (the same cell documents the look judged, ``looks.live_results``)
are written as interim cell files beside copies of the run's other cell
files, under ``<reports>/.interim/cells``, and the report is built from them
into ``<reports>/`` with a line that says where the run is ("round 2 of up
to 4 done: 97 lines decided, 33 open; the next round ~4:10"), a page that
reloads itself every half minute. Nothing kept over time comes from it: the
run archive, the noise history and the cell files are the final report's
(``report.build.build(..., progress=...)`` writes neither). The report at
the end replaces the page and removes the interim folder.

What builds the page (the report's settings: baseline, the user's claims) is
the command's, handed down as ``RunRequest.page``; this module writes the
files it reads and words the line.
"""
from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ..analysis.stopping import DECIDED, OPEN, SAME, LineState, open_variants
from ..progress import fmt_duration
from ..results.documents import CellDoc
from ..results.journal import JournalHead
from ..results.store import CellOutcome, cell_document, write_cell
from .budget import costs_of
from .live import LiveCell
from .looks import live_docs

INTERIM_DIR = ".interim"          # <reports>/.interim/cells: the cell files of the page in progress

PageWriter = Callable[[Path, str], None]
"""(a cells directory, the run's state in words) -> the report built from it, with that line (the command's)."""


def interim_cells(reports_dir: Path) -> Path:
    return reports_dir / INTERIM_DIR / "cells"


def progress_words(states: Sequence[LineState], round_no: int, cap: int, elapsed_s: float,
                   next_round_s: float | None) -> str:
    """The run's state as the page says it."""
    decided = sum(s.state == DECIDED for s in states)
    same = sum(s.state == SAME for s in states)
    still = sum(s.state == OPEN for s in states)
    text = (f"This run is in progress: round {round_no} of up to {cap} done after {fmt_duration(elapsed_s)}; "
            f"{decided} claim lines decided, {same} shown the same, {still} still open")
    if still and round_no < cap and next_round_s is not None:
        text += f"; the next round measures the open lines only (~{fmt_duration(next_round_s)})"
    return text + ". This page reloads itself; the report at the end replaces it."


def write_page(live: Mapping[str, LiveCell], docs: Sequence[CellDoc], reports_dir: Path, states: Sequence[LineState],
               round_no: int, cap: int, elapsed_s: float, page: PageWriter) -> None:
    """The interim cell files (``docs``: the live cells' rounds so far; every other cell file of ``reports/cells``
    as it is), then the page built from them with the run's state in words."""
    still = open_variants(states)
    page(interim_files(live, docs, reports_dir),
         progress_words(states, round_no, cap, elapsed_s, costs_of(live).of(still) if still else None))


def interim_files(live: Mapping[str, LiveCell], docs: Sequence[CellDoc], reports_dir: Path) -> Path:
    """The interim cells folder, written anew: ``docs`` (the live cells' rounds so far) and every cell file of
    ``reports/cells`` that is not a live cell's (a live cell's earlier file is an earlier run, not this one)."""
    cells = interim_cells(reports_dir)
    shutil.rmtree(cells, ignore_errors=True)
    cells.mkdir(parents=True)
    for doc in docs:
        write_cell(cells / f"{doc.name}.json", doc)
    for path in sorted((reports_dir / "cells").glob("*.json")):
        if path.stem not in live and not path.name.startswith("."):
            shutil.copyfile(path, cells / path.name)
    return cells


def start_words(live: Mapping[str, LiveCell], cap: int, first_look: int, expected_end: float | None = None,
                now: float | None = None) -> str:
    """What the page says once the cells are provisioned, before a round has ended; ``expected_end``: when the
    opening line's estimate ends the run (seconds since the epoch), said as a clock time and as time left."""
    variants = sum(len(ids) for lc in live.values() for ids in lc.slices.values())
    text = (f"This run is in progress: {len(live)} cell{'s' * (len(live) != 1)} provisioned, {variants} variants "
            f"to measure; round 1 of up to {cap} is running and the first verdicts come after round {first_look}")
    if expected_end is not None:
        left = max(0.0, expected_end - (time.time() if now is None else now))
        text += (f"; the opening estimate ends the run about {time.strftime('%H:%M', time.localtime(expected_end))}"
                 f" (~{fmt_duration(left)} from now)")
    return text + ". This page reloads itself; the report at the end replaces it."


def not_written(console: Console, error: Exception) -> None:
    """The one line a page that cannot be written is (a full disk): the page is a view of the run, never its stop."""
    console.print("\\[tfmatrix] the page in progress was not written (the run goes on): %s"
                  % escape(str(error).splitlines()[0] if str(error) else type(error).__name__))


def page_at_start(live: Mapping[str, LiveCell], writer: PageWriter | None, cap: int, first_look: int,
                  reports_dir: Path, console: Console, expected_end: float | None = None) -> None:
    """The page once provisioning is done: each live cell's plan (its environment, nothing measured yet), the
    cells that are not live (skipped, kept) as they are. A page that cannot be written is one line; the run goes on."""
    if writer is None:
        return
    try:
        plans = [cell_document(lc.cell.to_dict(), CellOutcome(name, "ok", None, lc.env.runner, {}, lc.plan),
                               lc.job.asked) for name, lc in sorted(live.items())]
        writer(interim_files(live, plans, reports_dir), start_words(live, cap, first_look, expected_end))
    except Exception as e:
        not_written(console, e)


def remove_interim(reports_dir: Path) -> None:
    """The interim folder goes once the run's own report is written (or a run without looks ends)."""
    shutil.rmtree(reports_dir / INTERIM_DIR, ignore_errors=True)


LookHook = Callable[[Sequence[LineState], int, float], None]
"""(the look's lines, its round, the seconds since the rounds began) -> the page in progress written."""


def page_after_looks(live: Mapping[str, LiveCell], head: JournalHead, writer: PageWriter | None, cap: int,
                     reports_dir: Path, console: Console) -> LookHook | None:
    """What a look does for the page in progress, when the command asked for one (``writer``); the terminal says
    once where the first verdicts are."""
    if writer is None:
        return None
    told = False

    def after_look(states: Sequence[LineState], round_no: int, elapsed_s: float) -> None:
        nonlocal told
        try:
            write_page(live, live_docs(live, head), reports_dir, states, round_no, cap, elapsed_s, writer)
        except Exception as e:      # the page is a view of the run: it never stops the measuring
            not_written(console, e)
            return
        if not told and any(s.state != OPEN for s in states):
            told = True
            console.print("\\[tfmatrix] the first verdicts are on the page: %s (it fills after each look)"
                          % (reports_dir / "index.html"))
    return after_look
