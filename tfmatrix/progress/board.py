"""Progress of many cells at once on a cluster: which cell runs where, in what phase, how many done and left, ETA.

``progress.Progress`` follows one cell at a time on a terminal; here cells run
side by side on Ray nodes, so every event is one plain line naming the cell
and its node, followed by the tally (``2 running: a@n1, b@n2; 3 done; 4 left;
~6:10 left``). Each cell gets a ``CellProgress`` view with ``Progress``'s
methods, so ``execution`` and the runners drive it exactly like the local one.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape

from . import Progress, fmt_duration, parse_suite_line, stderr_console


@dataclass
class _Running:
    node: str = "queued"
    phase: str = "queued"
    done: int = 0
    total: int = 0
    started: float = field(default_factory=time.monotonic)
    printed_quarter: int = -1


def makespan(seconds: Sequence[float], width: int) -> float:
    """How long ``seconds`` of cells take on ``width`` slots, longest first, each to the slot free first.

    Cells are never split, so the slowest cell bounds the run however many
    nodes there are; greedy longest-first is what a queue of equal nodes does.
    """
    slots = [0.0] * max(1, width)
    for s in sorted(seconds, reverse=True):
        i = slots.index(min(slots))
        slots[i] += s
    return max(slots)


class ClusterProgress:
    """The whole run's tally; thread-safe (one thread per cell in flight)."""

    def __init__(self, total_cells: int, console: Console | None = None, estimate_s: float = 0.0,
                 estimates: Mapping[str, float] | None = None, width: int = 1, rounds: int = 1) -> None:
        self.console = console or stderr_console()
        self.total_cells = total_cells * max(1, rounds)   # each round runs every cell again
        self.rounds, self.round_no = max(1, rounds), 1
        self.estimate_s = estimate_s          # the serial estimate of the whole run, before any cell ends
        self.estimates = dict(estimates or {})   # each runnable cell's expected seconds (estimates.cell_estimates)
        self.width = max(1, width)            # cells the cluster runs at once
        self.started = time.monotonic()
        self.running: dict[str, _Running] = {}
        self.ended: set[str] = set()
        self.finished = 0
        self.busy_s: list[float] = []         # run times of finished cells that ran
        self._lock = threading.Lock()

    def eta(self, now: float) -> float | None:
        """Seconds left: the remaining cells' estimates (less what the running ones have done) on ``width`` slots."""
        if not self.estimates:
            return None
        left = []
        for name, est in self.estimates.items():
            if name in self.ended:
                continue
            state = self.running.get(name)
            started = state is not None and state.node != "queued"
            left.append(max(0.0, est - (now - state.started)) if started and state else est)
        later = (self.rounds - self.round_no) * makespan(list(self.estimates.values()), self.width)
        return makespan(left, self.width) + later if left or later else None

    def next_round(self) -> None:
        """The next round starts: every cell is to run again."""
        with self._lock:
            self.round_no += 1
            self.ended.clear()

    def view(self, name: str) -> CellProgress:
        return CellProgress(self, name)

    def close(self) -> None:
        pass

    def tally(self) -> str:
        """``N running: cell@node, ...; N done; N left; ~ETA``."""
        now = time.monotonic()
        placed = ["%s@%s" % (n, r.node) for n, r in sorted(self.running.items()) if r.node != "queued"]
        queued = sum(1 for r in self.running.values() if r.node == "queued")
        left = self.total_cells - self.finished
        parts = ["%d running%s" % (len(placed), (": " + ", ".join(placed)) if placed else "")]
        if queued:
            parts.append("%d queued" % queued)
        parts += ["%d done" % self.finished, "%d left" % left]
        eta = self.eta(now) if left else None
        if eta is not None:
            parts.append("~%s left" % fmt_duration(eta))
        elif left and self.busy_s:
            per_cell = sum(self.busy_s) / len(self.busy_s)
            parts.append("~%s left" % fmt_duration(per_cell * -(-left // self.width)))
        elif left and self.estimate_s:
            parts.append("~%s left serially" % fmt_duration(max(0.0, self.estimate_s - (now - self.started))))
        return "; ".join(parts)

    def event(self, name: str, text: str) -> None:
        with self._lock:
            line = "%s: %s (%s)" % (escape(name), escape(text), escape(self.tally()))
            self.console.print("\\[tfmatrix] " + line)


class CellProgress(Progress):
    """One cell's view of the cluster's progress, with ``Progress``'s interface."""

    def __init__(self, board: ClusterProgress, name: str) -> None:   # no super(): nothing of its own to display
        self.board = board
        self.name = name

    def start_cell(self, name: str, index: int) -> None:
        with self.board._lock:
            self.board.running[self.name] = _Running()

    def placed(self, node: str) -> None:
        """The cell's task started on ``node``."""
        with self.board._lock:
            state = self.board.running.setdefault(self.name, _Running())
            state.node, state.phase, state.started = node, "started", time.monotonic()
        self.board.event(self.name, "on %s" % node)

    def phase(self, phase: str, detail: str = "") -> None:
        with self.board._lock:
            state = self.board.running.setdefault(self.name, _Running())
            state.phase, state.done, state.total, state.printed_quarter = phase, 0, 0, -1
            node = state.node
        self.board.event(self.name, "%s on %s%s" % (phase, node, ", " + detail if detail else ""))

    def suite_output(self, line: str) -> None:
        parsed = parse_suite_line(line)
        if parsed is None:
            return
        with self.board._lock:
            state = self.board.running.get(self.name)
            if state is None:
                return
            state.done, state.total = parsed[0], parsed[1]
            quarter = 4 * state.done // max(1, state.total)
            if quarter <= state.printed_quarter:
                return
            state.printed_quarter = quarter
            node = state.node
        self.board.event(self.name, "benchmark %d of %d on %s" % (parsed[0], parsed[1], node))

    def finish_cell(self, status: str, reason: str | None, seconds: float) -> None:
        with self.board._lock:
            state = self.board.running.pop(self.name, None)
            self.board.ended.add(self.name)
            self.board.finished += 1
            if state is not None and state.node != "queued" and status != "skipped":
                self.board.busy_s.append(seconds)
        colour = {"ok": "green", "skipped": "yellow"}.get(status, "red")
        where = " on %s" % state.node if state is not None and state.node != "queued" else ""
        text = "[%s]%s[/%s] %s%s in %s" % (colour, status, colour, escape(self.name), where, fmt_duration(seconds))
        if reason:
            text += ": " + escape(reason)
        with self.board._lock:
            self.board.console.print("\\[tfmatrix] %s (%s)" % (text, escape(self.board.tally())))

    def close(self) -> None:
        pass
