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
   (``OneAfterAnother`` here; the duet's ``Together`` runs them at once, one
   CPU each): one loop, so the two schedules cannot drift apart.
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

import dataclasses
import functools
import hashlib
import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from suite.reference import probe as host_reference

from ..analysis.runs.prior import shipped
from ..analysis.stopping import (
    DECIDED,
    LOOK_ALPHA,
    OPEN,
    SAME,
    LineState,
    first_look,
    first_look_words,
    is_look,
    look_rounds,
    open_variants,
    same_margin,
    why_stopped,
)
from ..progress import fmt_duration
from ..results.documents import HostSpeedPoint
from ..results.journal import JournalHead, read_head, write_head
from ..results.noise_history import NoiseModel
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
from .budget import Budget, cut_to_budget, round_fits
from .live import LiveCell, finish, resume, retry_turns, run_slice, said, wants
from .page import LookHook, page_after_looks, page_at_start, remove_interim
from .provisioning import provision
from .request import RunRequest
from .turns import Turn, new_seed, plan_turns

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
    try:
        if request.sequential:
            from ..analysis.runs.noise_model import pooled
            from ..results.noise_history import noise_history_at

            measure_until_decided(live, request, journal, head, console, how,
                                  pooled(noise_history_at(reports_dir), without=[head.run]), budget,
                                  page_after_looks(live, head, request.page, request.rounds, reports_dir, console),
                                  lambda first: page_at_start(live, request.page, request.rounds, first, reports_dir,
                                                              console, request.expected_end))
        else:
            measure(live, request, journal, head, console, how, budget)
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


Job = tuple[LiveCell, str | None]
"""A cell that runs this turn's slice, and the CPUs its process is pinned to (None: not pinned)."""


class OneAfterAnother:
    """How the cells of one turn run in the interleaved schedule: one after another, in the turn's order.

    The turn loop's one variable part (``measure``); the duet's ``Together``
    is the other: both cells at once, one CPU each.
    """

    def note(self) -> dict[str, Any]:
        """What the journal's header records about how turns run, beside the turns."""
        return {}

    def jobs(self, live: dict[str, LiveCell], turn: Turn) -> list[Job]:
        """The cells that run the turn's slice (still wanting it), in the order they run."""
        return [(live[name], None) for name in turn.order if wants(live.get(name), turn)]

    def run(self, jobs: Sequence[Job], turn: Turn, journal: Path) -> None:
        for lc, cpus in jobs:
            run_slice(lc, turn, journal, cpus)

    def line(self, jobs: Sequence[Job], turn: Turn, turns: Sequence[Turn], live: dict[str, LiveCell],
             elapsed_s: float) -> str:
        """The turn's line on the console, once it ran."""
        asked = jobs[0][0].asked                    # asked of every cell alike
        return "turn %d/%d (round %d of %s%d, slice %s): %s; %s so far, ~%s left" % (
            turn.number, turns[-1].number, turn.round, "up to " if asked.sequential else "", asked.rounds,
            slice_words(turn.slice, [lc for lc, _ in jobs]),
            ", ".join(said(lc, turn) for lc, _ in jobs), fmt_duration(elapsed_s),
            fmt_duration(_seconds_left(live, turns, turn)))


def slice_words(key: str, cells: Sequence[LiveCell]) -> str:
    """A slice as the console names it: its key, the catalogue's process group (the same in every cell, so that
    rounds pair), and "(NumPy only here)" where these cells run nothing else in it: on a JAX or PyTorch cell the
    ``eager:tf.keras`` group holds only the NumPy control, and its name alone said TensorFlow ran."""
    ids = [vid for lc in cells for vid in lc.slices.get(key, [])]
    return key + " (NumPy only here)" if ids and all("api=numpy" in vid for vid in ids) else key


def measure(live: dict[str, LiveCell], request: RunRequest, journal: Path, head: JournalHead,
            console: Console, how: OneAfterAnother, budget: Budget | None = None) -> None:
    """The turns, in the seeded order, each run ``how`` says; every complete slice goes to the journal at once.
    ``budget``: a round after the first starts only when all of it fits the time left (a fixed-round run pools
    whole rounds; its later rounds are not cut to lines)."""
    keys = sorted({k for lc in live.values() for k in lc.slices})
    turns = plan_turns(keys, list(live), request.rounds, head.seed)
    head.turns = [t.to_json() for t in turns]
    head.how.update(how.note())
    write_head(journal, head)
    resume(live, journal, turns)
    t_start = time.monotonic()
    round_no = 1
    for turn in turns:
        if budget is not None and turn.round > round_no:     # a round's first turn: does all of it fit?
            round_no = turn.round
            need = sum(slice_estimate(live[n], t.slice, 0.0) for t in turns if t.round == turn.round
                       for n in t.order if wants(live.get(n), t))
            if not round_fits(budget, turn.round, need, console):
                head.how["budget"] = {"seconds": budget.seconds, "rounds": turn.round - 1}
                return
        _turn(live, turn, turns, journal, head, console, how, t_start)
    again = retry_turns(live, len(turns))     # slices that failed, each measured once more (``live.slice_failed``)
    if again:
        console.print("\\[tfmatrix] measuring again %d slice(s) that failed: %s" % (
            len(again), ", ".join("%s round %d %s" % (t.order[0], t.round, t.slice) for t in again)))
        head.turns += [t.to_json() for t in again]
    for turn in again:
        lc = live[turn.order[0]]
        if (turn.round, turn.slice) in lc.retries:
            lc.retries.remove((turn.round, turn.slice))
        _turn(live, turn, turns + again, journal, head, console, how, t_start)


def measure_until_decided(live: dict[str, LiveCell], request: RunRequest, journal: Path, head: JournalHead,
                          console: Console, how: OneAfterAnother, history: NoiseModel | None,
                          budget: Budget | None = None, after_look: LookHook | None = None,
                          before_rounds: Callable[[int], None] | None = None) -> None:
    """Sequential rounds (``analysis.stopping``): round after round, judged at each look; after a look only the
    open claim lines' variants run again, until none is open or the cap (``request.rounds``) is reached.
    ``budget``: after a look, only the open lines whose round fits the time left (``budget.affordable``), the others
    stopped with the budget as their why. ``after_look``: called after each look that another round follows (the
    page in progress); ``before_rounds``: called once before round 1 with the round of the first look.

    Each round's turns are planned when it starts (seeded by the run's seed and the round, recorded); a resumed
    run replays the rounds its journal holds and, its data being the same, looks the same way.
    """
    from .looks import ab_look, covers, live_keys, look

    judged = ab_look if request.judge == "ab" else functools.partial(look, claims=request.claims)
    margin = same_margin(request.judge)
    cap = request.rounds
    if request.judge != "ab":       # ab's looks lend no history a variance (round 2), nor the shipped prior
        history = shipped().lend(history, live_keys(live))
    warm = request.judge != "ab" and covers(history, live)
    said = history.source if warm and history else ""
    lent = history.lent_source if history is not None and history.lent else ""
    head.sequential = seq = {"cap": cap, "alpha": LOOK_ALPHA, "judge": request.judge, "looks": look_rounds(warm, cap),
                          "first_look": first_look(warm), "lines": [], "prior": bool(lent),
                          "history": " ".join(s for s in (said, lent) if s)}
    if budget is not None:
        seq["budget_s"] = budget.seconds
    head.turns = []
    first: dict[tuple[str, str, str, str], tuple[int, str]] = {}    # each line's first stop: (round, why)
    cut: set[tuple[str, str, str, str]] = set()     # lines the budget stopped: never measured again in this run
    last: dict[tuple[str, str, str, str], LineState] = {}
    t_start = time.monotonic()
    if before_rounds is not None:
        before_rounds(min(first_look(warm), cap))
    console.print("\\[tfmatrix] sequential rounds: up to %d; lines judged after rounds %s at %.2f%% each (%s)" % (
        cap, ", ".join(str(r) for r in look_rounds(warm, cap)), 100 * LOOK_ALPHA,
        first_look_words(said, request.judge, bool(lent))))
    round_no = 0
    for round_no in range(1, cap + 1):
        turns = plan_round(live, round_no, head.seed, len(head.turns))
        head.turns += [t.to_json() for t in turns]
        write_head(journal, head)
        resume(live, journal, turns)
        for turn in turns:
            _turn(live, turn, turns, journal, head, console, how, t_start)
        again = [t for t in retry_turns(live, len(head.turns)) if t.round == round_no]
        head.turns += [t.to_json() for t in again]
        for turn in again:
            live[turn.order[0]].retries.remove((turn.round, turn.slice))
            _turn(live, turn, turns + again, journal, head, console, how, t_start)
        if not is_look(round_no, warm, cap):
            if budget is None or round_no >= cap:
                continue
            # no look here, yet the next round must fit: its lines, all open, cut to the budget like a look's
            states = [dataclasses.replace(st, state=OPEN) for st in judged(live, head, history) if st.key not in cut]
            for st in states:
                last[st.key] = st
            fits = cut_to_budget(states, live, budget, round_no, first, cut, console)
            if fits is None:
                continue
            still = fits
        else:
            states = judged(live, head, history)
            for st in states:           # a line stopped at its first look not open since (rounds for a neighbour
                last[st.key] = st       # can reopen it: it is then open again, and its stop is its later one)
            states = [st for st in states if st.key not in cut]     # stopped by the budget: not measured again
            for st in states:
                if st.state == OPEN:
                    first.pop(st.key, None)
                else:
                    first.setdefault(st.key, (round_no, why_stopped(st.state, round_no, cap, margin)))
            still = open_variants(states)
            console.print("\\[tfmatrix] look after round %d: %d lines decided, %d the same, %d open%s%s" % (
                round_no, sum(s.state == DECIDED for s in states), sum(s.state == SAME for s in states),
                sum(s.state == OPEN for s in states), ", %d left open by the budget" % len(cut) if cut else "",
                "" if still and round_no < cap else "; done"))
            if not still or round_no >= cap:
                break
            if after_look is not None:
                after_look(states, round_no, time.monotonic() - t_start)
            fits = cut_to_budget(states, live, budget, round_no, first, cut, console) if budget else None
            still = still if fits is None else fits
        if not still:
            break
        for name, lc in live.items():
            wanted = still.get(name, set())
            lc.focus = {k: [v for v in ids if v in wanted] for k, ids in lc.slices.items() if wanted & set(ids)}
    seq["lines"] = [
        [*key, _rounds_of(live, st), *first.get(key, (round_no, why_stopped(OPEN, round_no, cap, margin)))[1:],
         st.a[0]]
        for key, st in sorted(last.items())]
    for lc in live.values():
        lc.focus = None


def _rounds_of(live: Mapping[str, LiveCell], st: LineState) -> int:
    """The rounds a line rests on: those in which both its sides were measured."""
    def rounds(cell: str, vid: str) -> set[int]:
        lc = live.get(cell)
        rec = lc.records.get(vid) if lc is not None else None
        return set(((rec or {}).get("schedule") or {}).get("passes") or [])
    return len(rounds(*st.a) & rounds(*st.b))


def plan_round(live: Mapping[str, LiveCell], round_no: int, seed: int, before: int) -> list[Turn]:
    """One round's turns over the slices the live cells still want (their focus), numbered on from ``before``."""
    keys = sorted({k for lc in live.values() for k in (lc.focus if lc.focus is not None else lc.slices)})
    turns = plan_turns(keys, sorted(live), 1, seed * 1009 + round_no)
    return [Turn(before + i + 1, round_no, t.slice, t.order) for i, t in enumerate(turns)]


def _turn(live: dict[str, LiveCell], turn: Turn, turns: Sequence[Turn], journal: Path, head: JournalHead,
          console: Console, how: OneAfterAnother, t_start: float) -> None:
    """One turn: the host's speed timed, the cells that want its slice run as ``how`` says, its line printed."""
    jobs = how.jobs(live, turn)
    if not jobs:
        return
    head.host_speed.append(HostSpeedPoint(turn.number, round(time.time(), 3), host_reference()))
    write_head(journal, head)
    how.run(jobs, turn, journal)
    console.print("\\[tfmatrix] " + how.line(jobs, turn, turns, live, time.monotonic() - t_start))


def _seconds_left(live: dict[str, LiveCell], turns: Sequence[Turn], after: Turn) -> float:
    """Each remaining (cell, slice) at the time that slice last took in that cell; a slice not yet run there at
    the cell's seconds per variant so far (else every cell's) times its variants. Round 1 has unseen slices:
    counting them as 0 said '~0:00 left' after the first turn."""
    timed = [(lc.slice_s[k], len(lc.slices[k])) for lc in live.values() for k in lc.slice_s if k in lc.slices]
    overall = sum(s for s, _ in timed) / max(1, sum(n for _, n in timed))
    return sum(slice_estimate(live[n], t.slice, overall) for t in turns if t.number > after.number
               for n in t.order if wants(live.get(n), t))


def slice_estimate(lc: LiveCell, key: str, fallback_rate: float) -> float:
    """Seconds the slice ``key`` will take in this cell: its last run, else its variants at the cell's rate so far
    (seconds per variant over the slices it ran), else at ``fallback_rate``."""
    if key in lc.slice_s:
        return lc.slice_s[key]
    ran = [k for k in lc.slice_s if k in lc.slices]
    variants = sum(len(lc.slices[k]) for k in ran)
    rate = sum(lc.slice_s[k] for k in ran) / variants if variants else fallback_rate
    return rate * len(lc.slices.get(key, []))
