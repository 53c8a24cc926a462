"""The interleaved schedule's run loop: provision every cell, then turn after turn, one slice of each cell.

1. Provision (``provisioning.py``): every selected cell's environment is built and made live
   (``Runner.prepare``: image and container, or virtualenv) and planned once
   (``python -m suite plan``: fingerprint, what cannot run, the slices)
   before anything is measured, so no build or download runs beside a
   measured slice.
2. Measure: ``schedule.plan_turns`` (seeded, recorded); in each turn every
   cell that has the slice runs it in a fresh process, in the turn's order,
   and the host's reference workload (``suite.reference``, in the tfmatrix process) is timed between turns.
   How the cells of one turn run is the loop's one variable part
   (``loop.OneAfterAnother`` here; the duet's ``Together`` runs them at once, one
   CPU each): one loop (``loop.Loop``), so the two schedules cannot drift apart.
   A sequential run's rounds until its lines are decided are ``until_decided``'s.
3. Write: each cell's file pools its rounds (``rounds.merge_record``), with
   the schedule and the host's speed in ``results.config``.

Every complete slice is kept in a journal (``reports/.interleaved/``,
each file atomic) until the run ends: an interrupted run resumes from it
with the same seed and measures only what is missing. A cell that fails in
round 2 keeps the slices it completed (round 1 and any of round 2), says so
in its warnings, and leaves the remaining turns to the other cells. A slice
that fails while its cell has time left (a killed process or container)
does not end the cell: its environment is made anew and the slice measured
again after the planned turns (``live``). A failed or interrupted attempt
never replaces a cell's earlier complete results.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from ..results.journal import JournalHead, read_head, write_head
from ..results.store import (
    CellOutcome,
    cell_paths,
    kept_note,
    kept_outcome,
    load_cell,
    record_outcome,
    reusable,
)
from ..runners.base import Runner
from ..runners.job import CellJob
from .budget import Budget, round_fits
from .live import LiveCell, finish, resume, retry_turns, wants
from .loop import Loop, OneAfterAnother, slice_estimate
from .page import page_after_looks, page_at_start, remove_interim
from .provisioning import provision
from .request import RunRequest
from .turns import new_seed, plan_turns

JOURNAL_DIR = ".interleaved"


def identity(jobs: Sequence[CellJob], runner: Runner) -> str:
    """What a journal's slices were measured under: the cells' requests and inputs; a resume needs the same."""
    text = json.dumps({j.name: [j.asked.to_json(), runner.inputs(j.cell)] for j in jobs}, sort_keys=True,
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def open_journal(reports_dir: Path, key: str, seed: int | None, console: Console) -> tuple[Path, JournalHead]:
    """The journal directory and its header: the interrupted run's (same identity and seed), else a new one."""
    journal = reports_dir / JOURNAL_DIR
    head = read_head(journal)
    if head is not None and head.identity == key and (seed is None or head.seed == seed):
        console.print("\\[tfmatrix] resuming the interrupted run %s (seed %d) from %s"
                      % (head.run, head.seed, journal))
        return journal, head
    shutil.rmtree(journal, ignore_errors=True)
    seed = seed if seed is not None else new_seed()
    head = JournalHead(key, seed, "%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), seed))
    write_head(journal, head)
    return journal, head


def run(jobs: Sequence[CellJob], runner: Runner, request: RunRequest, reports_dir: Path, *, redo: bool,
        console: Console) -> list[CellOutcome]:
    """Run the jobs' cells on the interleaved schedule; every cell ends with a results file (or its earlier one
    kept). ``request``: what the run asks beyond each cell (its seed, rounds, what its looks judge)."""
    outcomes: dict[str, CellOutcome] = {}
    todo: list[CellJob] = []
    for job in jobs:
        cell = job.cell
        why = runner.skip_reason(cell)
        json_path = cell_paths(reports_dir, cell.name)[0]
        earlier = load_cell(json_path)
        if why:
            outcomes[cell.name] = CellOutcome(cell.name, "skipped", why, {"name": runner.name})
            record_outcome(json_path, cell.to_dict(), outcomes[cell.name], job.asked, earlier)
        elif not redo and earlier is not None and reusable(earlier, job.asked, runner.inputs(cell)):
            console.print("\\[tfmatrix] %s: %s" % (cell.name, kept_note(earlier)))
            outcomes[cell.name] = kept_outcome(cell.name, earlier)
        else:
            todo.append(job)
    if todo:
        budget = Budget(request.budget_s) if request.budget_s else None    # provisioning counts against it
        journal, head = open_journal(reports_dir, identity(todo, runner), request.seed, console)
        live, failed = provision(todo, runner, request.claims if request.claims_only else None, reports_dir,
                                 console)
        outcomes.update(failed)
        outcomes.update(measure_and_write(live, request, reports_dir, journal, head, console, OneAfterAnother(),
                                          budget))
    return [outcomes[j.name] for j in jobs]


class Interleaved:
    """The interleaved schedule as the dispatch's ``Schedule``: ``run`` above."""

    def run(self, jobs: Sequence[CellJob], runner: Runner, request: RunRequest, reports_dir: Path, *, redo: bool,
            console: Console) -> list[CellOutcome]:
        return run(jobs, runner, request, reports_dir, redo=redo, console=console)


def measure_and_write(live: dict[str, LiveCell], request: RunRequest, reports_dir: Path, journal: Path,
                      head: JournalHead, console: Console, how: OneAfterAnother,
                      budget: Budget | None = None) -> dict[str, CellOutcome]:
    """Measure the live cells turn by turn (``how``: how one turn's cells run), then write their files;
    ``budget``: rounds after the first only where they fit (``budget.py``).

    Interrupted: every cell's file says so (earlier complete results stay) and
    the journal stays for a resume; else the journal goes.
    """
    for lc in live.values():
        lc.seed = head.seed         # an ab job's processes take turns at going first from it (``CellJob.slice_args``)
    loop = Loop(live, request, journal, head, console, how, budget)
    try:
        if request.sequential:
            from ..analysis.runs.kept import history_means
            from ..analysis.runs.noise_model import history_at, pooled
            from .until_decided import measure_until_decided

            kept = history_at(reports_dir)
            measure_until_decided(loop, pooled(kept, without=[head.run]),
                                  page_after_looks(live, head, request.page, request.rounds, reports_dir, console),
                                  lambda first: page_at_start(live, request.page, request.rounds, first, reports_dir,
                                                              console, request.expected_end),
                                  history_means(kept, without=[head.run]))
        else:
            measure(loop)
    except BaseException:
        for lc in live.values():
            lc.env.close()
            finish(lc, reports_dir, head, interrupted=True)
        raise
    outcomes = {}
    for lc in live.values():
        lc.env.close()
        outcomes[lc.cell.name] = finish(lc, reports_dir, head)
    shutil.rmtree(journal, ignore_errors=True)
    remove_interim(reports_dir)
    return outcomes


def measure(loop: Loop) -> None:
    """The turns, in the seeded order, each run ``how`` says; every complete slice goes to the journal at once.
    ``budget``: a round after the first starts only when all of it fits the time left (a fixed-round run pools
    whole rounds; its later rounds are not cut to lines)."""
    live, head, console, budget = loop.live, loop.head, loop.console, loop.budget
    keys = sorted({k for lc in live.values() for k in lc.slices})
    turns = plan_turns(keys, list(live), loop.request.rounds, head.seed)
    head.turns = [t.to_json() for t in turns]
    head.how.update(loop.how.note())
    write_head(loop.journal, head)
    resume(live, loop.journal, turns)
    loop.t_start = time.monotonic()
    round_no = 1
    for turn in turns:
        if budget is not None and turn.round > round_no:     # a round's first turn: does all of it fit?
            round_no = turn.round
            need = sum(slice_estimate(live[n], t.slice, 0.0) for t in turns if t.round == turn.round
                       for n in t.order if wants(live.get(n), t))
            if not round_fits(budget, turn.round, need, console):
                head.how["budget"] = {"seconds": budget.seconds, "rounds": turn.round - 1}
                return
        loop.turn(turn, turns)
    again = retry_turns(live, len(turns))     # slices that failed, each measured once more (``live.slice_failed``)
    if again:
        console.print("\\[tfmatrix] measuring again %d slice(s) that failed: %s" % (
            len(again), ", ".join("%s round %d %s" % (t.order[0], t.round, t.slice) for t in again)))
        head.turns += [t.to_json() for t in again]
    for turn in again:
        lc = live[turn.order[0]]
        if (turn.round, turn.slice) in lc.retries:
            lc.retries.remove((turn.round, turn.slice))
        loop.turn(turn, turns + again)
