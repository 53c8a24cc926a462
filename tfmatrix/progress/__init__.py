"""Progress a person can follow on long work: cell, phase, benchmark i of n, elapsed, ETA.

The suite prints one line per finished variant (``[suite 12/140] ok <id> ...``);
runners feed those lines here. On a terminal this is a live rich display; in
a log (CI) it prints a plain line at each phase and every ~10% of a run.

The two consoles tfmatrix prints through are made here, once each:
``stderr_console`` for progress and notes (stdout stays for a command's
answer, so it can be piped), ``table_console`` for a table on stdout.
"""
from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape

from suite.schema import PROGRESS_PATTERN

SUITE_LINE = re.compile(PROGRESS_PATTERN)  # suite/run.Progress writes schema.PROGRESS_FORMAT


def stderr_console() -> Console:
    """The console for progress and notes: stderr, no highlighting of numbers, long lines never cut."""
    return Console(stderr=True, highlight=False, soft_wrap=True)


def table_console() -> Console:
    """The console for a table on stdout: the terminal's width, or 200 columns in a pipe or a log."""
    return Console(width=None if sys.stdout.isatty() else 200)


def parse_suite_line(line: str) -> tuple[int, int, str, str] | None:
    """(done, total, status, variant id) from a suite progress line, else None."""
    m = SUITE_LINE.match(line.strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)


def counted(n: int, one: str, many: str) -> str:
    """``n`` things in words: "1 slice", "3 slices"."""
    return f"{n} {one if n == 1 else many}"


def fmt_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return "%d:%02d:%02d" % (h, m, s) if h else "%d:%02d" % (m, s)


@dataclass
class _CellState:
    name: str
    index: int
    phase: str = "queued"
    started: float = field(default_factory=time.monotonic)
    phase_started: float = field(default_factory=time.monotonic)
    done: int = 0
    measured: int = 0        # finished runs that measured something (not n/a: those take no time)
    total: int = 0
    last_printed_pct: int = -10


class Progress:
    """Tracks the matrix run and tells the person what is happening."""

    def __init__(self, total_cells: int, console: Console | None = None, live: bool | None = None) -> None:
        self.console = console or stderr_console()
        self.live = self.console.is_terminal if live is None else live
        self.total_cells = total_cells
        self.started = time.monotonic()
        self.cell: _CellState | None = None
        self.finished = 0
        self._status = None
        if self.live:
            self._status = self.console.status("")
            self._status.start()

    # -- events --------------------------------------------------------------

    def start_cell(self, name: str, index: int) -> None:
        self.cell = _CellState(name=name, index=index)
        self._emit("cell %d/%d: %s" % (index, self.total_cells, name), force=True)

    def phase(self, phase: str, detail: str = "") -> None:
        if self.cell is None:
            return
        self.cell.phase = phase
        self.cell.phase_started = time.monotonic()
        self.cell.done = self.cell.total = self.cell.measured = 0
        self.cell.last_printed_pct = -10
        self._emit(self._line(detail), force=True)

    def suite_output(self, line: str) -> None:
        parsed = parse_suite_line(line)
        if parsed is None or self.cell is None:
            return
        self.cell.done, self.cell.total = parsed[0], parsed[1]
        if parsed[2] != "n/a":
            self.cell.measured += 1
        pct = int(100 * self.cell.done / max(1, self.cell.total))
        force = pct >= self.cell.last_printed_pct + 10 or self.cell.done == self.cell.total
        if force:
            self.cell.last_printed_pct = pct
        self._emit(self._line(), force=force)

    def placed(self, node: str) -> None:
        """A cluster placed the cell on ``node`` (the Ray runner says so; a local run has nothing to show)."""

    def finish_cell(self, status: str, reason: str | None, seconds: float) -> None:
        self.finished += 1
        name = self.cell.name if self.cell else "?"
        colour = {"ok": "green", "skipped": "yellow"}.get(status, "red")
        text = "[%s]%s[/%s] %s in %s" % (colour, status, colour, escape(name), fmt_duration(seconds))
        if reason:
            text += ": " + escape(reason)
        self._print(text)
        self.cell = None

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    # -- rendering -------------------------------------------------------------

    def _line(self, detail: str = "") -> str:
        c = self.cell
        assert c is not None
        now = time.monotonic()
        parts = ["(%d/%d) %s: %s" % (c.index, self.total_cells, c.name, c.phase)]
        if c.total:
            parts.append("benchmark %d of %d" % (c.done, c.total))
        parts.append("%s elapsed" % fmt_duration(now - c.started))
        if c.total and c.measured >= 3 and c.done < c.total:
            # The phase's whole time over the runs that measured something: lines come in bursts (a
            # window of variants is sampled together and reported at once), so the time between the
            # first line and the last says nothing (60 lines in one second gave "~0:00 left" at 60 of
            # 120). Conservative: the import counts in, and every remaining run as one that measures.
            rate = (now - c.phase_started) / c.measured
            parts.append("~%s left in this cell" % fmt_duration(rate * (c.total - c.done)))
        if detail:
            parts.append(detail)
        return ", ".join(parts)

    def _emit(self, text: str, force: bool) -> None:
        if self._status is not None:
            self._status.update(escape(text))
        elif force:
            self._print(escape(text))

    def _print(self, text: str) -> None:
        self.console.print("\\[tfmatrix] " + text)
        if not self.live:
            sys.stderr.flush()
