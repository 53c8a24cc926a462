"""The interleaved schedule's run loop: provision every cell, then turn after turn, one slice of each cell.

1. Provision: every selected cell's environment is built and made live
   (``Runner.prepare``: image and container, or virtualenv) and planned once
   (``python -m suite plan``: fingerprint, what cannot run, the slices)
   before anything is measured, so no build or download runs beside a
   measured slice.
2. Measure: ``schedule.plan_turns`` (seeded, recorded); in each turn every
   cell that has the slice runs it in a fresh process, in the turn's order,
   and the host's reference workload (``hostspeed``) is timed between turns.
   How the cells of one turn run is the loop's one variable part
   (``OneAfterAnother`` here; the duet's ``Together`` runs them at once, one
   CPU each): one loop, so the two schedules cannot drift apart.
3. Write: each cell's file pools its rounds (``rounds.merge_record``), with
   the schedule and the host's speed in ``results.config``.

Every complete slice is kept in a journal (``reports/.interleaved/``,
each file atomic) until the run ends: an interrupted run resumes from it
with the same seed and measures only what is missing. A cell that fails in
round 2 keeps the slices it completed (round 1 and any of round 2), says so
in its warnings, and leaves the remaining turns to the other cells. A failed
or interrupted attempt never replaces a cell's earlier complete results.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from ..matrix import Cell
from ..progress import fmt_duration
from ..results.documents import CellRequest, SuiteResults
from ..results.store import (
    CellOutcome,
    cell_paths,
    keep_previous,
    kept_note,
    kept_outcome,
    load_cell,
    now_iso,
    record_outcome,
    reusable,
    write_json_atomic,
)
from ..runners.base import CellEnv, Runner
from ..runners.common import CellLog, RunRequest, plan_args, read_suite_results, slice_args
from ..runners.whole import judge
from . import hostspeed
from .rounds import merge_record, pooled_warnings
from .turns import Turn, new_seed, plan_turns

JOURNAL_DIR = ".interleaved"
PLAN_FILE = "plan.json"


@dataclass
class LiveCell:
    """A provisioned cell during the run: its environment, plan, and the records measured so far."""

    cell: Cell
    asked: CellRequest                      # what the run asks of it (made once per cell)
    env: CellEnv
    log: CellLog
    plan: SuiteResults
    slices: dict[str, list[str]]            # slice -> variant ids to measure (the plan's, n/a ones left out)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    done: set[tuple[int, str]] = field(default_factory=set)      # (round, slice) complete
    failure: str | None = None               # "round 2, slice eager:tf: why"
    failed: CellOutcome | None = None        # the slice run that ended the cell (its status and reason)
    run_s: float = 0.0
    used_s: float = 0.0                      # the cell's time so far (plan and slices): its limit is for all of it
    slice_s: dict[str, float] = field(default_factory=dict)     # slice -> seconds of its last run (the ETA)
    reference: list[list[Any]] = field(default_factory=list)    # [round, slice, s before, s after] (suite.reference)

    def complete_rounds(self) -> list[int]:
        """The rounds in which every slice of the cell completed."""
        return [r for r in sorted({r for r, _ in self.done}) if all((r, k) in self.done for k in self.slices)]

    def add(self, round_no: int, key: str, doc: SuiteResults) -> None:
        """One complete slice: its records pooled with the earlier rounds' (process lists in round order)."""
        unstable_cv = float(self.plan.config.get("unstable_cv") or 0.1)
        for rec in doc.records:
            before = self.records.get(rec["id"])
            self.records[rec["id"]] = copy.deepcopy(rec) if before is None else merge_record(before, rec, unstable_cv)
        self.done.add((round_no, key))
        self.run_s += float(doc.wall_s or 0.0)
        timed = doc.config.get("reference_s")
        if isinstance(timed, list) and len(timed) == 2 and all(isinstance(x, (int, float)) for x in timed):
            self.reference.append([round_no, key, float(timed[0]), float(timed[1])])


def slice_file(journal: Path, cell: str, round_no: int, key: str) -> Path:
    return journal / cell / ("r%d-%s.json" % (round_no, key.replace(":", "_").replace("/", "_")))


def requests(cells: Sequence[Cell], request: RunRequest) -> dict[str, CellRequest]:
    """Each cell's request, made once per cell and handed down (journal identity, suite arguments, cell file)."""
    return {c.name: request.for_cell(c) for c in cells}


def identity(cells: Sequence[Cell], runner: Runner, asks: Mapping[str, CellRequest]) -> str:
    """What a journal's slices were measured under: the cells' requests and inputs; a resume needs the same."""
    text = json.dumps({c.name: [asks[c.name].to_json(), runner.inputs(c)] for c in cells}, sort_keys=True,
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def open_journal(reports_dir: Path, key: str, seed: int | None, console: Console) -> tuple[Path, dict[str, Any]]:
    """The journal directory and its header: the interrupted run's (same identity and seed), else a new one."""
    journal = reports_dir / JOURNAL_DIR
    head_path = journal / "run.json"
    try:
        head = json.loads(head_path.read_text())
    except (OSError, ValueError):
        head = None
    if head and head.get("identity") == key and (seed is None or head.get("seed") == seed):
        console.print("\\[tfmatrix] resuming the interrupted run %s (seed %d) from %s"
                      % (head["run"], head["seed"], journal))
        return journal, head
    shutil.rmtree(journal, ignore_errors=True)
    seed = seed if seed is not None else new_seed()
    head = {"identity": key, "seed": seed, "run": "%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), seed),
            "host_speed": []}
    write_json_atomic(head_path, head)
    return journal, head


def run(cells: Sequence[Cell], runner: Runner, request: RunRequest, reports_dir: Path, *, redo: bool,
        console: Console) -> list[CellOutcome]:
    """Run ``cells`` on the interleaved schedule; every cell ends with a results file (or its earlier one kept)."""
    asks = requests(cells, request)
    outcomes: dict[str, CellOutcome] = {}
    todo: list[Cell] = []
    for cell in cells:
        why = runner.skip_reason(cell)
        json_path = cell_paths(reports_dir, cell.name)[0]
        earlier = load_cell(json_path)
        if why:
            outcomes[cell.name] = CellOutcome(cell.name, "skipped", why, {"name": runner.name})
            record_outcome(json_path, cell.to_dict(), outcomes[cell.name], asks[cell.name], earlier)
        elif not redo and earlier is not None and reusable(earlier, asks[cell.name], runner.inputs(cell)):
            console.print("\\[tfmatrix] %s: %s" % (cell.name, kept_note(earlier)))
            outcomes[cell.name] = kept_outcome(cell.name, earlier)
        else:
            todo.append(cell)
    if todo:
        journal, head = open_journal(reports_dir, identity(todo, runner, asks), request.seed, console)
        live, failed = provision(todo, runner, request, asks, reports_dir, console)
        outcomes.update(failed)
        outcomes.update(measure_and_write(live, request, reports_dir, journal, head, console, OneAfterAnother()))
    return [outcomes[c.name] for c in cells]


def measure_and_write(live: dict[str, LiveCell], request: RunRequest, reports_dir: Path, journal: Path,
                      head: dict[str, Any], console: Console, how: OneAfterAnother) -> dict[str, CellOutcome]:
    """Measure the live cells turn by turn (``how``: how one turn's cells run), then write their files.

    Interrupted: every cell's file says so (earlier complete results stay) and
    the journal stays for a resume; else the journal goes.
    """
    try:
        measure(live, request, journal, head, console, how)
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
    return outcomes


def provision(cells: Sequence[Cell], runner: Runner, request: RunRequest, asks: Mapping[str, CellRequest],
              reports_dir: Path, console: Console) -> tuple[dict[str, LiveCell], dict[str, CellOutcome]]:
    """Every cell built, live and planned before the first measurement; the ones that failed, as outcomes."""
    live: dict[str, LiveCell] = {}
    failed: dict[str, CellOutcome] = {}
    console.print("\\[tfmatrix] provisioning %d cells (images or virtualenvs, then each cell's plan) before "
                  "measuring anything" % len(cells))
    logs: dict[str, CellLog] = {}
    try:
        for index, cell in enumerate(cells, start=1):
            json_path, log_path = cell_paths(reports_dir, cell.name)
            log = logs[cell.name] = CellLog(log_path)
            t0 = time.monotonic()
            outcome = _provision_one(cell, asks[cell.name], runner, request, log)
            if isinstance(outcome, LiveCell):
                live[cell.name] = outcome
                console.print("\\[tfmatrix] [%d/%d] %s ready in %s: %d slices, %d variants to measure"
                              % (index, len(cells), cell.name, fmt_duration(time.monotonic() - t0),
                                 len(outcome.slices), sum(len(v) for v in outcome.slices.values())))
                continue
            failed[cell.name] = outcome
            console.print("\\[tfmatrix] [%d/%d] %s %s: %s" % (index, len(cells), cell.name, outcome.status,
                                                            outcome.reason))
            log.close(record_outcome(json_path, cell.to_dict(), outcome, asks[cell.name], load_cell(json_path)))
    except BaseException:       # interrupted while provisioning: say so in every cell's file (earlier results stay)
        for lc in live.values():
            lc.env.close()
        for cell in cells:
            if cell.name in failed:
                continue
            json_path = cell_paths(reports_dir, cell.name)[0]
            its = logs.get(cell.name)
            if its is not None:
                its("interrupted")
            kept_log = record_outcome(json_path, cell.to_dict(), CellOutcome(
                cell.name, "failed", "interrupted", {"name": runner.name}, {}, None, its.tail() if its else ""),
                asks[cell.name], load_cell(json_path))
            if its is not None:     # beside the complete results it did not replace, or as the cell's log
                its.close(kept_log)
        raise
    return live, failed


def _provision_one(cell: Cell, asked: CellRequest, runner: Runner, request: RunRequest, log: CellLog
                   ) -> LiveCell | CellOutcome:
    env = runner.prepare(cell, request, log, None)
    if isinstance(env, CellOutcome):
        return env
    ok = False
    try:
        args = plan_args(asked, cell, env.suite_path(PLAN_FILE), env.runner.get("image"), runner.name)
        ran = env.run_suite(args, log, cell.timeout_s)
        env.timings["plan_s"] = ran.seconds
        outcome = judge(cell, env, ran, PLAN_FILE, log, dict(env.timings))
        if outcome.status != "ok" or outcome.results is None:
            return outcome
        slices = {k: list(v) for k, v in (outcome.results.config.get("slices") or {}).items() if v}
        ok = True
        return LiveCell(cell, asked, env, log, outcome.results, slices, used_s=ran.seconds)
    finally:
        if not ok:
            env.close()


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
        rounds = jobs[0][0].asked.rounds            # asked of every cell alike
        return "turn %d/%d (round %d of %d, slice %s): %s; %s so far, ~%s left" % (
            turn.number, len(turns), turn.round, rounds, turn.slice,
            ", ".join(said(lc, turn) for lc, _ in jobs), fmt_duration(elapsed_s),
            fmt_duration(_seconds_left(live, turns, turn)))


def measure(live: dict[str, LiveCell], request: RunRequest, journal: Path, head: dict[str, Any],
            console: Console, how: OneAfterAnother) -> None:
    """The turns, in the seeded order, each run ``how`` says; every complete slice goes to the journal at once."""
    keys = sorted({k for lc in live.values() for k in lc.slices})
    turns = plan_turns(keys, list(live), request.rounds, int(head["seed"]))
    head["turns"] = [t.to_json() for t in turns]
    head.update(how.note())
    write_json_atomic(journal / "run.json", head)
    resume(live, journal, turns)
    t_start = time.monotonic()
    for turn in turns:
        jobs = how.jobs(live, turn)
        if not jobs:
            continue
        head["host_speed"].append([turn.number, round(time.time(), 3), hostspeed.probe()])
        write_json_atomic(journal / "run.json", head)
        how.run(jobs, turn, journal)
        console.print("\\[tfmatrix] " + how.line(jobs, turn, turns, live, time.monotonic() - t_start))


def wants(lc: LiveCell | None, turn: Turn) -> bool:
    return lc is not None and lc.failure is None and turn.slice in lc.slices \
        and (turn.round, turn.slice) not in lc.done


def said(lc: LiveCell, turn: Turn) -> str:
    if lc.failure is not None and (turn.round, turn.slice) not in lc.done:
        return "%s FAILED" % lc.cell.name
    return "%s %.0f s" % (lc.cell.name, lc.slice_s.get(turn.slice, 0.0))


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


def resume(live: dict[str, LiveCell], journal: Path, turns: Sequence[Turn]) -> None:
    """Slices an interrupted run completed, pooled in turn order, as if they had just run."""
    for turn in turns:
        for name in turn.order:
            lc = live.get(name)
            if lc is None or turn.slice not in lc.slices:
                continue
            path = slice_file(journal, name, turn.round, turn.slice)
            if path.exists():
                doc, problem = read_suite_results(path)
                if doc is not None and problem is None and doc.status == "ok":
                    lc.add(turn.round, turn.slice, doc)
                    lc.log("resumed: round %d, slice %s from %s" % (turn.round, turn.slice, path))


def run_slice(lc: LiveCell, turn: Turn, journal: Path, cpus: str | None = None) -> None:
    """The turn's slice in one cell (``cpus``: pinned to them); complete, to the journal, else the cell's end."""
    cell, env = lc.cell, lc.env
    out = "r%d-%s.json" % (turn.round, turn.slice.replace(":", "_"))
    args = slice_args(lc.asked, cell, env.suite_path(PLAN_FILE), turn.slice, turn.round, env.suite_path(out),
                      env.runner.get("image"), env.runner["name"])
    lc.log("== turn %d: round %d, slice %s" % (turn.number, turn.round, turn.slice))
    budget = cell.timeout_s - lc.used_s      # the cell's limit is for its whole measurement, as in a whole run
    if budget <= 0:
        outcome = CellOutcome(cell.name, "timeout", "the cell ran past its %d s limit" % cell.timeout_s, env.runner,
                              {}, None, lc.log.tail())
    else:
        ran = env.run_suite(args, lc.log, budget, cpus)
        lc.used_s += ran.seconds
        lc.slice_s[turn.slice] = ran.seconds
        outcome = judge(cell, env, ran, out, lc.log, {})
        if outcome.status == "ok" and outcome.results is not None:
            write_json_atomic(slice_file(journal, cell.name, turn.round, turn.slice), outcome.results.to_json())
            lc.add(turn.round, turn.slice, outcome.results)
            return
    lc.failure = "round %d, slice %s: %s" % (turn.round, turn.slice, outcome.reason)
    lc.failed = outcome
    lc.log("cell %s in %s" % (outcome.status, lc.failure))
    env.close()


def cell_results(lc: LiveCell, head: dict[str, Any]) -> SuiteResults | None:
    """The cell's suite document: the plan's header and n/a records, then every measured variant's pooled record."""
    if not lc.records:
        return None
    plan = lc.plan
    records = list(plan.records)
    order = [vid for ids in lc.slices.values() for vid in ids]
    records += [lc.records[vid] for vid in order if vid in lc.records]
    rank = {vid: i for i, vid in enumerate(plan.config.get("order") or [])}
    records.sort(key=lambda r: rank.get(r["id"], len(rank)))  # catalogue order, as a sequential cell writes it
    complete = lc.complete_rounds()
    rounds = lc.asked.rounds
    failure = []
    if lc.failure:
        missing = [vid for vid in order if vid not in lc.records]
        failure.append("this cell failed in %s; its results pool the %d slices it completed before that "
                       "(%d of %d rounds whole)%s" % (lc.failure, len(lc.done), len(complete), rounds,
                                                      "; %d variants were never measured: %s" % (
                                                          len(missing), ", ".join(missing[:3])
                                                          + (" ..." if len(missing) > 3 else ""))
                                                      if missing else ""))
    warnings = pooled_warnings(plan.warnings, records, float(plan.config.get("unstable_cv") or 0.1), *failure)
    turns = [t for t in head.get("turns", []) if lc.cell.name in t[3]]
    config = {**plan.config, "rounds": max(1, len(complete)),
              "schedule": {"kind": "interleaved", "run": head["run"], "seed": head["seed"],
                           "rounds_asked": rounds, "turns": turns},
              "host_speed": list(head.get("host_speed", [])),
              "container_reference": sorted(lc.reference)}
    config.pop("slices", None)
    config.pop("order", None)
    return dataclasses.replace(plan, records=records, warnings=warnings, config=config, wall_s=lc.run_s,
                               finished=now_iso())


def finish(lc: LiveCell, reports_dir: Path, head: dict[str, Any], interrupted: bool = False) -> CellOutcome:
    """Write the cell's file from what it measured; an interrupted cell keeps its earlier file (journal kept)."""
    json_path = cell_paths(reports_dir, lc.cell.name)[0]
    earlier = load_cell(json_path)
    timings = {**lc.env.timings, "run_s": lc.run_s}
    results = None if interrupted else cell_results(lc, head)
    if results is not None and lc.failed is not None and not lc.complete_rounds():
        # failed before one whole round: the cell's status is the failure's (its slices stay in the file)
        outcome = CellOutcome(lc.cell.name, lc.failed.status, lc.failed.reason, lc.env.runner, timings, results,
                              lc.log.tail())
    elif results is None:
        status, why = ("failed", "interrupted") if interrupted or lc.failed is None else \
            (lc.failed.status, lc.failed.reason)
        outcome = CellOutcome(lc.cell.name, status, why, lc.env.runner, timings, lc.failed.results if lc.failed and
                              not interrupted else None, lc.log.tail())
    else:
        outcome = CellOutcome(lc.cell.name, "ok", None, lc.env.runner, timings, results, lc.log.tail())
        keep_previous(earlier, json_path.name, reports_dir)
    lc.log.close(record_outcome(json_path, lc.cell.to_dict(), outcome, lc.asked, earlier))
    return outcome
