"""One cell during an interleaved run: its live environment, the slices it measured, its faults, its file.

``interleaved`` (and the duet) drive the turns; this module is what a turn
does to one cell (``run_slice``) and what the cell ends as (``finish``).

A slice that fails without the cell being out of time and without the suite
saying why (its process killed, its container gone, the engine restarted, a
crash) does not end the cell: the environment is made
anew (``LiveCell.renew``: a fresh container or process, the plan written into
it again) and the slice is measured once more after every planned turn, in
its own round. A slice key that failed twice is not tried again in this run;
the cell goes on with its other slices and says in its warnings which
slices failed and why. A cell ends early when it is out of time, when the
suite itself reports an error (a GPU cell without its GPU: the same next
time), or when its environment cannot be made again: then it keeps the
slices it completed.
"""
from __future__ import annotations

import copy
import dataclasses
import errno
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..matrix import Cell
from ..progress import fmt_duration
from ..results.cell_log import CellLog
from ..results.documents import CellRequest, SuiteResults
from ..results.journal import JournalHead
from ..results.rounds import merge_record, pooled_warnings
from ..results.store import (
    CellOutcome,
    cell_paths,
    load_cell,
    now_iso,
    record_outcome,
    write_json_atomic,
)
from ..runners.base import CellEnv
from ..runners.common import read_suite_results
from ..runners.job import CellJob
from ..runners.whole import judge
from .turns import Turn

PLAN_FILE = "plan.json"
SLICE_TRIES = 2          # a slice key that failed this often in a run is not tried again
MIN_FREE_BYTES = 200 * 10**6     # below this, a failed slice is the disk's fault: the run stops, resumable

Renew = Callable[[], "CellEnv | CellOutcome"]


@dataclass
class LiveCell:
    """A provisioned cell during the run: its environment, plan, and the records measured so far."""

    job: CellJob                            # the cell and what the run asks of it (made once per cell)
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
    renew: Renew | None = None               # a fresh environment after a slice failed (None: the cell ends instead)
    broken: bool = False                     # the environment must be made anew before the next slice
    slice_failures: dict[tuple[int, str], list[str]] = field(default_factory=dict)   # (round, slice) -> reasons
    retries: list[tuple[int, str]] = field(default_factory=list)   # (round, slice) to measure again after the turns
    focus: dict[str, list[str]] | None = None   # a sequential round's slices and their open variants (None: all)
    overhead_s: dict[str, float] = field(default_factory=dict)  # slice -> its last run's seconds beyond its variants
    variant_s: dict[str, float] = field(default_factory=dict)   # variant id -> seconds of its last run
    seed: int | None = None                  # the run's seed (journal head): an ab job's processes order by it

    @property
    def cell(self) -> Cell:
        return self.job.cell

    @property
    def asked(self) -> CellRequest:
        return self.job.asked

    def tries(self, key: str) -> int:
        """How often the slice ``key`` failed in this run, over every round."""
        return sum(len(why) for (_, k), why in self.slice_failures.items() if k == key)

    def given_up(self, key: str) -> bool:
        return self.tries(key) >= SLICE_TRIES

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


def wants(lc: LiveCell | None, turn: Turn) -> bool:
    return lc is not None and lc.failure is None and turn.slice in lc.slices \
        and (lc.focus is None or turn.slice in lc.focus) \
        and (turn.round, turn.slice) not in lc.done and not lc.given_up(turn.slice)


def said(lc: LiveCell, turn: Turn) -> str:
    if lc.failure is not None and (turn.round, turn.slice) not in lc.done:
        return "%s FAILED" % lc.cell.name
    if (turn.round, turn.slice) in lc.slice_failures and (turn.round, turn.slice) not in lc.done:
        return "%s slice failed (%s)" % (lc.cell.name, "given up" if lc.given_up(turn.slice) else "tried again later")
    return "%s %.0f s" % (lc.cell.name, lc.slice_s.get(turn.slice, 0.0))


def run_slice(lc: LiveCell, turn: Turn, journal: Path, cpus: str | None = None) -> None:
    """The turn's slice in one cell (``cpus``: pinned to them): complete, to the journal; failed, tried again
    later (``slice_failed``); out of time, or the environment gone for good, the cell's end."""
    if lc.broken and not renewed(lc):
        return
    cell, env = lc.cell, lc.env
    out = "r%d-%s.json" % (turn.round, turn.slice.replace(":", "_"))
    args = lc.job.slice_args(env.suite_path(PLAN_FILE), turn.slice, turn.round, env.suite_path(out),
                             env.runner.get("image"), env.runner["name"], (lc.focus or {}).get(turn.slice, ()),
                             lc.seed)
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
            timed(lc, turn.slice, ran.seconds, outcome.results)
            return
        said_why = outcome.results is not None and bool(outcome.results.error)    # the suite's own verdict
        if outcome.status != "timeout" and lc.renew is not None and not said_why:
            stop_if_disk_full(journal)
            slice_failed(lc, turn, outcome)
            return
    lc.failure = "round %d, slice %s: %s" % (turn.round, turn.slice, outcome.reason)
    lc.failed = outcome
    lc.log("cell %s in %s" % (outcome.status, lc.failure))
    env.close()


def timed(lc: LiveCell, key: str, seconds: float, doc: SuiteResults) -> None:
    """What the slice's run cost, split into its variants' own time and the rest (the process start, imports):
    the costs a time budget plans the next round with (``budget.SliceCosts``)."""
    spent = 0.0
    for rec in doc.records:
        took = float(rec.get("wall_s") or 0.0)
        lc.variant_s[rec["id"]] = took
        spent += took
    lc.overhead_s[key] = max(0.0, seconds - spent)


def stop_if_disk_full(where: Path) -> None:
    """A slice that failed on a full disk is no fault of the cell: the run stops (ENOSPC), its journal kept."""
    try:
        free = shutil.disk_usage(where if where.exists() else where.parent).free
    except OSError:
        return
    if free < MIN_FREE_BYTES:
        raise OSError(errno.ENOSPC, "No space left on device (%d MB free)" % (free // 10**6), str(where))


def slice_failed(lc: LiveCell, turn: Turn, outcome: CellOutcome) -> None:
    """A slice that failed while the cell had time left: noted, its environment dropped (the next slice gets a
    fresh one), and measured again after the planned turns unless its key has failed ``SLICE_TRIES`` times."""
    why = "%s: %s" % (outcome.status, outcome.reason)
    lc.slice_failures.setdefault((turn.round, turn.slice), []).append(why)
    lc.env.close()
    lc.broken = True
    if lc.given_up(turn.slice):
        lc.retries = [(r, k) for r, k in lc.retries if k != turn.slice]
        lc.log("round %d, slice %s failed (%s): failed %d times in this run, not tried again"
               % (turn.round, turn.slice, why, lc.tries(turn.slice)))
    else:
        lc.retries.append((turn.round, turn.slice))
        lc.log("round %d, slice %s failed (%s): measured again after the planned turns"
               % (turn.round, turn.slice, why))


def renewed(lc: LiveCell) -> bool:
    """A fresh environment for the cell (after a failed slice); False, and the cell's end, when none can be made."""
    assert lc.renew is not None
    env = lc.renew()
    if isinstance(env, CellOutcome):
        lc.failure = "making its environment again after a failed slice: %s" % env.reason
        lc.failed = env
        lc.log("cell %s: %s" % (env.status, lc.failure))
        return False
    lc.env, lc.broken = env, False
    lc.log("a fresh environment after the failed slice")
    return True


def fresh_env(prepare: Callable[[], CellEnv | CellOutcome], plan: SuiteResults) -> CellEnv | CellOutcome:
    """``prepare()`` again, with the cell's plan written into the new environment (its slices read it)."""
    env = prepare()
    if not isinstance(env, CellOutcome):
        write_json_atomic(env.out_dir / PLAN_FILE, plan.to_json())
    return env


def retry_turns(live: dict[str, LiveCell], after: int) -> list[Turn]:
    """A turn for each slice to measure again, numbered on from the last planned turn; each in its own round."""
    out: list[Turn] = []
    for name in sorted(live):
        for round_no, key in live[name].retries:
            out.append(Turn(after + len(out) + 1, round_no, key, (name,)))
    return out


def failure_warnings(lc: LiveCell, unrecovered: bool = False) -> list[str]:
    """What each failed slice came to: measured again, or its variants pooling the other rounds only (a slice that
    never completed: its variants never measured); ``unrecovered``: only the slices not measured again."""
    out = []
    for (round_no, key), why in sorted(lc.slice_failures.items()):
        if (round_no, key) in lc.done:
            if not unrecovered:
                out.append("round %d, slice %s failed (%s) and was measured again after the planned turns"
                           % (round_no, key, why[0]))
            continue
        never = [v for v in lc.slices.get(key, []) if v not in lc.records]
        then = "its %s" % _never_measured(never) if never else "its variants pool the other rounds only"
        out.append("round %d, slice %s failed (%s): %s" % (round_no, key, "; then ".join(why), then))
    return out


def _never_measured(ids: list[str]) -> str:
    """"3 variants were never measured: a, b, c ..." (the first three named)."""
    return "%d variants were never measured: %s" % (len(ids), ", ".join(ids[:3]) + (" ..." if len(ids) > 3 else ""))


def cell_results(lc: LiveCell, head: JournalHead) -> SuiteResults | None:
    """The cell's suite document: the plan's header and n/a records, then every measured variant's pooled record."""
    if not lc.records and lc.slices:       # nothing measured (a cell with nothing to measure has its plan)
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
                                                      "; " + _never_measured(missing) if missing else ""))
    cut = head.how.get("budget")      # a fixed-round run the time budget stopped early (``interleaved.measure``)
    if isinstance(cut, dict):
        failure.append("the time budget (%s) left room for %d of the %d rounds asked"
                       % (fmt_duration(float(cut["seconds"])), int(cut["rounds"]), rounds))
    warnings = pooled_warnings(plan.warnings, records, float(plan.config.get("unstable_cv") or 0.1), *failure,
                               *failure_warnings(lc))
    turns = [t for t in head.turns if lc.cell.name in t[3]]
    schedule = {"kind": "interleaved", "run": head.run, "seed": head.seed, "rounds_asked": rounds,
                "turns": turns}
    if isinstance(cut, dict):
        schedule["budget"] = cut
    ran = max((r for r, _ in lc.done), default=1)
    seq = head.sequential
    if seq is not None:       # rounds: the most any slice ran; each claim line's own rounds and stop
        schedule["sequential"] = {**{k: v for k, v in seq.items() if k != "lines"},
                                  "lines": [row[:6] for row in seq.get("lines", []) if row[6] == lc.cell.name]}
    config = {**plan.config, "rounds": ran if seq is not None else max(1, len(complete)),
              "schedule": schedule,
              "host_speed": [p.to_json() for p in head.host_speed],
              "container_reference": sorted(lc.reference)}
    config.pop("slices", None)
    config.pop("order", None)
    return dataclasses.replace(plan, records=records, warnings=warnings, config=config, wall_s=lc.run_s,
                               finished=now_iso())


def finish(lc: LiveCell, reports_dir: Path, head: JournalHead, interrupted: bool = False) -> CellOutcome:
    """Write the cell's file from what it measured; an interrupted cell keeps its earlier file (journal kept)."""
    json_path = cell_paths(reports_dir, lc.cell.name)[0]
    earlier = load_cell(json_path)
    timings = {**lc.env.timings, "run_s": lc.run_s}
    results = None if interrupted else cell_results(lc, head)
    lost = failure_warnings(lc, unrecovered=True)
    if results is not None and (lc.failed is not None or lost) and not lc.complete_rounds():
        # failed before one whole round: the cell's status is the failure's (its slices stay in the file)
        status, why = (lc.failed.status, lc.failed.reason) if lc.failed is not None else ("failed", lost[0])
        outcome = CellOutcome(lc.cell.name, status, why, lc.env.runner, timings, results, lc.log.tail())
    elif results is None:
        status, why = ("failed", "interrupted") if interrupted else (lc.failed.status, lc.failed.reason) \
            if lc.failed is not None else ("failed", lost[0] if lost else "no slice completed")
        outcome = CellOutcome(lc.cell.name, status, why, lc.env.runner, timings, lc.failed.results if lc.failed and
                              not interrupted else None, lc.log.tail())
    else:
        outcome = CellOutcome(lc.cell.name, "ok", None, lc.env.runner, timings, results, lc.log.tail())
    lc.log.close(record_outcome(json_path, lc.cell.to_dict(), outcome, lc.asked, earlier))
    return outcome


def resume(live: Mapping[str, LiveCell], journal: Path, turns: Sequence[Turn]) -> None:
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
