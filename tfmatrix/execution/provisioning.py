"""The interleaved schedule's first step: every cell made live (its environment from ``Runner.prepare``, which
builds what ``provision/`` renders) and planned before anything is measured, so no build or download runs beside
a measured slice. ``interleaved.py`` then measures; the duet shares this step.

A cell whose environment or plan fails ends here with its outcome; an
interruption while provisioning says so in every cell's file, and earlier
complete results stay.
"""
from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path

from rich.console import Console

from ..analysis.claims.records import Claim
from ..progress import counted, fmt_duration
from ..results.cell_log import CellLog
from ..results.store import CellOutcome, cell_paths, load_cell, record_outcome
from ..runners.base import Runner
from ..runners.job import CellJob
from ..runners.whole import judge
from .live import PLAN_FILE, LiveCell, fresh_env


def provision(jobs: Sequence[CellJob], runner: Runner, claims: Sequence[Claim] | None, reports_dir: Path,
              console: Console) -> tuple[dict[str, LiveCell], dict[str, CellOutcome]]:
    """Every cell built, live and planned before the first measurement; the ones that failed, as outcomes
    (``claims``: a claims-only run's, each cell keeps the variants that make their lines there; None: all).

    Up to ``runner.builds_at_once`` cells are made at once (an image build waits on the disk about as long as it
    computes: two overlap), each line printed as its cell is ready. Nothing is measured meanwhile."""
    live: dict[str, LiveCell] = {}
    failed: dict[str, CellOutcome] = {}
    width = max(1, min(runner.builds_at_once, len(jobs)))
    console.print("\\[tfmatrix] provisioning %d cells (images or virtualenvs, then each cell's plan%s) before "
                  "measuring anything" % (len(jobs), ", %d at once" % width if width > 1 else ""))
    logs: dict[str, CellLog] = {}
    starts: dict[str, float] = {}

    def one(job: CellJob) -> LiveCell | CellOutcome:
        starts[job.name] = time.monotonic()
        return _provision_one(job, runner, claims, logs[job.name])

    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="provision") if width > 1 else None
    futures: dict[Future[LiveCell | CellOutcome], CellJob] = {}

    def made() -> Iterator[tuple[CellJob, LiveCell | CellOutcome]]:
        """Each cell as it is ready: one at a time here (an interruption stops it at once), else from the pool."""
        if pool is None:
            for job in jobs:
                yield job, one(job)
            return
        futures.update({pool.submit(one, job): job for job in jobs})
        for future in as_completed(futures):
            yield futures[future], future.result()

    try:
        for job in jobs:
            logs[job.name] = CellLog(cell_paths(reports_dir, job.name)[1])
        for done, (job, outcome) in enumerate(made(), start=1):
            if isinstance(outcome, LiveCell):
                live[job.name] = outcome
                console.print("\\[tfmatrix] [%d/%d] %s ready in %s: %s, %s to measure"
                              % (done, len(jobs), job.name, fmt_duration(time.monotonic() - starts[job.name]),
                                 counted(len(outcome.slices), "slice", "slices"),
                                 counted(sum(len(v) for v in outcome.slices.values()), "variant", "variants")))
                continue
            failed[job.name] = outcome
            console.print("\\[tfmatrix] [%d/%d] %s %s: %s" % (done, len(jobs), job.name, outcome.status,
                                                              outcome.reason))
            json_path = cell_paths(reports_dir, job.name)[0]
            logs[job.name].close(record_outcome(json_path, job.cell.to_dict(), outcome, job.asked,
                                                load_cell(json_path)))
    except BaseException:       # interrupted while provisioning: say so in every cell's file (earlier results stay)
        if pool is not None:    # the cells being made end first (a build cannot be stopped halfway): their logs
            pool.shutdown(wait=True, cancel_futures=True)       # stay open until then, their containers then go
            for future, job in futures.items():
                if future.done() and not future.cancelled() and future.exception() is None:
                    ready = future.result()
                    if isinstance(ready, LiveCell) and job.name not in live:
                        ready.env.close()       # made, not yet taken: its container goes
        for lc in live.values():
            lc.env.close()
        for job in jobs:
            if job.name in failed:
                continue
            json_path = cell_paths(reports_dir, job.name)[0]
            its = logs.get(job.name)
            if its is not None:
                its("interrupted")
            kept_log = record_outcome(json_path, job.cell.to_dict(), CellOutcome(
                job.name, "failed", "interrupted", {"name": runner.name}, {}, None, its.tail() if its else ""),
                job.asked, load_cell(json_path))
            if its is not None:     # beside the complete results it did not replace, or as the cell's log
                its.close(kept_log)
        raise
    if pool is not None:
        pool.shutdown(wait=True)
    return live, failed


def _provision_one(job: CellJob, runner: Runner, claims: Sequence[Claim] | None, log: CellLog
                   ) -> LiveCell | CellOutcome:
    env = runner.prepare(job, log, None)
    if isinstance(env, CellOutcome):
        return env
    cell = job.cell
    ok = False
    try:
        args = job.plan_args(env.suite_path(PLAN_FILE), env.runner.get("image"), runner.name)
        ran = env.run_suite(args, log, cell.timeout_s)
        env.timings["plan_s"] = ran.seconds
        outcome = judge(cell, env, ran, PLAN_FILE, log, dict(env.timings))
        if outcome.status != "ok" or outcome.results is None:
            return outcome
        slices = {k: list(v) for k, v in (outcome.results.config.get("slices") or {}).items() if v}
        if claims is not None:     # the claims decide the rounds: what makes no line here is not measured
            from .looks import claims_here

            slices = claims_here(slices, job.asked.preset, cell, outcome.results, claims)
        ok = True
        renew = functools.partial(fresh_env, functools.partial(runner.prepare, job, log, None), outcome.results)
        return LiveCell(job, env, log, outcome.results, slices, used_s=ran.seconds, renew=renew)
    finally:
        if not ok:
            env.close()
