"""Run the cells of a matrix on a schedule and write their results: the dispatch (estimates: ``estimates.py``;
the runner: ``runners.choose``).

Cells never run side by side on one host: concurrent cells would disturb
each other's timings (on a 2-core machine, badly). The default schedule is
interleaved (``interleaved.py``: every cell provisioned first, then one slice
of each cell per turn in a random order); ``--schedule sequential`` runs
whole cells one after another (``sequential.py``), as a cluster's runner
always does (``parallel.py``).
"""
from __future__ import annotations

import dataclasses
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console
from rich.markup import escape

from suite.reference import probe as host_reference

from ..errors import UserError
from ..matrix import Cell
from ..progress import Progress, counted, fmt_duration, stderr_console
from ..results.documents import CellDoc
from ..results.store import CellOutcome
from ..runners.base import Runner
from ..runners.job import CellJob
from .budget import Budget
from .estimates import cell_estimates, last_runs, unknown_estimates
from .request import RunRequest
from .sequential import one_cell

if TYPE_CHECKING:
    from ..analysis.runs.noise_model import NoiseHistory


def cells_text(cells: Sequence[Cell], runner: str) -> str:
    """ "3 cells (2 CPU, 1 GPU) with the docker runner"; existing environments, which run as they are whatever the
    runner, counted apart: "2 existing environments (2 GPU) beside 0 cells of the docker runner"."""
    def by_target(group: list[Cell], one: str, many: str) -> str:
        n_gpu = sum(1 for c in group if c.target == "gpu")
        by = ", ".join(f"{n} {t}" for n, t in ((len(group) - n_gpu, "CPU"), (n_gpu, "GPU")) if n)
        return counted(len(group), one, many) + (f" ({by})" if by else "")

    built = by_target([c for c in cells if not c.existing], "cell", "cells")
    existing = [c for c in cells if c.existing]
    if not existing:
        return f"{built} with the {runner} runner"
    ours = by_target(existing, "existing environment", "existing environments")
    return f"{ours} beside {built} of the {runner} runner"


class Schedule(Protocol):
    """How a run's slices are ordered in time: ``interleaved.Interleaved`` (the default) or ``Sequential``."""

    def run(self, jobs: Sequence[CellJob], runner: Runner, request: RunRequest, reports_dir: Path, *, redo: bool,
            console: Console) -> list[CellOutcome]:
        """Run the jobs' cells; every cell ends with a results file (or its earlier one kept)."""
        ...


def execute(cells: Sequence[Cell], runner: Runner, request: RunRequest, reports_dir: Path, *, redo: bool = True,
            console: Console | None = None) -> list[CellOutcome]:
    """Run ``cells`` on the request's schedule; every cell ends with a results file.

    ``request``: as the command made it, stamped with what it runs
    (``RunRequest.stamped``: a cell file's reuse and a journal's resume
    compare the stamps). Each cell's job is made once, here; the opening line
    says what will run and for how long; then the schedule runs the jobs.
    """
    console = console or stderr_console()
    last = last_runs(reports_dir, [c.name for c in cells])     # each cell's file here, read once for the estimates
    if request.schedule == "interleaved" and not (runner.interleaves and runner.slots <= 1):
        console.print("\\[tfmatrix] the %s runner runs whole cells: sequential schedule" % runner.name)
        request = dataclasses.replace(request, schedule="sequential")
    jobs = [request.job(c) for c in cells]        # each cell's request, made once and handed down from here
    skips = {j.name: runner.skip_reason(j.cell) for j in jobs}
    ready = [j for j in jobs if not skips[j.name]]
    each, width = announce(jobs, skips, runner, request, reports_dir, console, last)
    if ready and not unknown_estimates(ready, last):
        request = dataclasses.replace(request, expected_end=time.time() + sum(each.values()))
    room = runner.disk_room([j.cell for j in ready])
    if room is not None and room.need > room.free:
        from ..provision.hygiene import room_line

        raise UserError(room_line(room.need, room.free, room.where, room.what))
    schedule: Schedule
    if request.schedule == "interleaved":
        from .interleaved import Interleaved

        schedule = Interleaved()
    else:
        schedule = Sequential(each, width)
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return schedule.run(jobs, runner, request, reports_dir, redo=redo, console=console)
    finally:
        signal.signal(signal.SIGTERM, previous)


def announce(jobs: Sequence[CellJob], skips: dict[str, str | None], runner: Runner, request: RunRequest,
             reports_dir: Path, console: Console, last: Mapping[str, CellDoc | None]) -> tuple[dict[str, float], int]:
    """The opening line: what runs (and what is skipped, ``skips``: why), on which schedule, and roughly for how
    long (``last``: each cell's results file here). Returns each cell's estimate and how many cells run at once."""
    ready = [j for j in jobs if not skips[j.name]]
    text = cells_text([j.cell for j in jobs], runner.name)
    if len(ready) < len(jobs):
        reasons = sorted({r for r in skips.values() if r})
        text += "; %d will be skipped (%s)" % (len(jobs) - len(ready), "; ".join(reasons))
    if request.schedule == "interleaved" and request.sequential:
        text += ", interleaved in rounds until each claim line is decided (at most %d)" % request.rounds
    elif request.schedule == "interleaved":
        text += ", interleaved in %s" % counted(request.rounds, "round", "rounds")
    elif request.rounds > 1:
        text += ", %d rounds (every cell once, then again)" % request.rounds
    claims = "; " + claims_text(request) if request.claims_only else ""
    ready_cells = [j.cell for j in ready]
    warm = False
    if request.sequential:
        from ..analysis.runs.noise_model import history_at

        kept = history_at(reports_dir)          # read once: what the looks borrow, and what a user's file is judged on
        warm = _history_covers(kept, ready_cells)
        if request.bench_paths and request.judge != "ab":
            claims += "; " + series_text(kept, ready_cells)
    each = cell_estimates(ready, request, last, runner.built, host_reference(), warm)
    width = runner.width(ready_cells) if runner.slots > 1 else 1   # cells at once
    unknown = unknown_estimates(ready, last)
    when = fmt_duration(sum(t for name, t in each.items() if name not in unknown))
    if request.budget_s:    # said before the claims, formatted here beside the estimate's duration
        text += "; within %s (round 1 whole, later rounds where they fit)" % fmt_duration(request.budget_s)
    text += claims
    if width > 1:
        from ..progress.board import makespan

        when = "%s with %d at once (%s one at a time)" % (
            fmt_duration(makespan(list(each.values()), width) * request.rounds), width, when)
    when = "roughly " + when
    if unknown:
        never = "%s never run here" % counted(len(unknown), "existing environment", "existing environments")
        when = "time unknown (%s)" % never if len(unknown) == len(ready) else "%s, and unknown for %s" % (
            when, never)
    console.print("\\[tfmatrix] %s; %d to run, %s" % (escape(text), len(ready), when))   # reasons name [[cell]]
    return each, width


def claims_text(request: RunRequest) -> str:
    """The claims a claims-only run answers, and each built-in family not asked, one flag away: "claims: seeds (13;
    today's questions (2025-26): --claims today)"; a family's words are its file's label."""
    from ..analysis.claims.files import BUILTIN, builtin_family

    families = request.families or BUILTIN[:1]
    own = sum(1 for c in request.claims if c.family not in BUILTIN)
    built = len(request.claims) - own
    text = "claims: %s (%d%s" % (" and ".join(families), built, ", and %d of your own" % own if own else "")
    for name in BUILTIN:
        if name not in families:
            label = builtin_family(name)[0].label
            text += "; %s: --claims %s" % (label[:1].lower() + label[1:], name)
    return text + ")"


def series_text(history: NoiseHistory, cells: Sequence[Cell]) -> str:
    """What a sequential run resolves of the user's benchmark files' variants no claim names (``series.since``):
    their change since the runs kept here, or, the first runs of their series, the rounds later runs need."""
    from ..analysis.runs.kept import history_means
    from ..analysis.series.since import FIRST_ROUNDS, SAME_MARGIN

    names = {c.name for c in cells}
    kept = sum(1 for run in history_means(history) if any(cell in names for cell, _ in run))
    if kept >= 2:
        return ("your benchmarks no claim names: each judged against its %d kept runs, rounds until a change of "
                "%d%% is shown or ruled out" % (kept, round(SAME_MARGIN * 100)))
    return ("your benchmarks no claim names: the first runs of their series here (%d kept), %d rounds for later "
            "runs to be compared with" % (kept, FIRST_ROUNDS))


def _history_covers(history: NoiseHistory, cells: Sequence[Cell]) -> bool:
    """Whether the runs kept here (the archive's noise history) know any of ``cells`` (a sequential run then looks
    at round 1)."""
    from ..analysis.runs.noise_model import pooled

    model = pooled(history)
    return model is not None and any(cell == c.name for cell, _ in model.variances for c in cells)


@dataclass(frozen=True)
class Sequential:
    """Round after round, every cell whole: one at a time, or ``runner.slots`` side by side on a cluster."""

    estimates: dict[str, float]      # each cell's estimate over all its rounds (a cluster's board shows them)
    width: int                       # cells at once

    def run(self, jobs: Sequence[CellJob], runner: Runner, request: RunRequest, reports_dir: Path, *, redo: bool,
            console: Console) -> list[CellOutcome]:
        rounds = request.rounds
        if runner.slots > 1:
            from ..progress.board import ClusterProgress
            from .parallel import run_round

            board = ClusterProgress(len(jobs), console, sum(self.estimates.values()),
                                    {k: v / rounds for k, v in self.estimates.items()}, self.width, rounds)
        progress = Progress(len(jobs), console, live=False if runner.slots > 1 else None)
        latest: dict[str, CellOutcome] = {}
        budget = Budget(request.budget_s) if request.budget_s else None
        t_round = time.monotonic()
        try:
            for round_no in range(1, rounds + 1):
                took, t_round = time.monotonic() - t_round, time.monotonic()   # a round costs what the last took
                if budget is not None and not budget.start_round(took, console):
                    break
                if rounds > 1:
                    console.print("\\[tfmatrix] round %d of %d" % (round_no, rounds))
                if runner.slots > 1:
                    if round_no > 1:
                        board.next_round()
                    latest.update(run_round(jobs, runner, reports_dir, redo, board, latest, runner.slots))
                    continue
                for index, job in enumerate(jobs, start=1):
                    latest[job.name] = one_cell(job, index, runner, reports_dir, redo, progress,
                                                latest.get(job.name))
        finally:
            progress.close()
        return [latest[j.name] for j in jobs]


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt("terminated")
