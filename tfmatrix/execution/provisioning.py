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
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from ..analysis.claim_records import Claim
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
    (``claims``: a claims-only run's, each cell keeps the variants that make their lines there; None: all)."""
    live: dict[str, LiveCell] = {}
    failed: dict[str, CellOutcome] = {}
    console.print("\\[tfmatrix] provisioning %d cells (images or virtualenvs, then each cell's plan) before "
                  "measuring anything" % len(jobs))
    logs: dict[str, CellLog] = {}
    try:
        for index, job in enumerate(jobs, start=1):
            json_path, log_path = cell_paths(reports_dir, job.name)
            log = logs[job.name] = CellLog(log_path)
            t0 = time.monotonic()
            outcome = _provision_one(job, runner, claims, log)
            if isinstance(outcome, LiveCell):
                live[job.name] = outcome
                console.print("\\[tfmatrix] [%d/%d] %s ready in %s: %s, %s to measure"
                              % (index, len(jobs), job.name, fmt_duration(time.monotonic() - t0),
                                 counted(len(outcome.slices), "slice", "slices"),
                                 counted(sum(len(v) for v in outcome.slices.values()), "variant", "variants")))
                continue
            failed[job.name] = outcome
            console.print("\\[tfmatrix] [%d/%d] %s %s: %s" % (index, len(jobs), job.name, outcome.status,
                                                            outcome.reason))
            log.close(record_outcome(json_path, job.cell.to_dict(), outcome, job.asked, load_cell(json_path)))
    except BaseException:       # interrupted while provisioning: say so in every cell's file (earlier results stay)
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
