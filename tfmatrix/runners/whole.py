"""A prepared cell's suite command judged, and the sequential schedule's whole cell (prepare, run, judge, close).

Apart from ``common`` because it needs the runner interface (``base``),
which itself names ``common``'s records.
"""
from __future__ import annotations

from ..matrix.records import Cell
from ..progress import Progress
from ..results.cell_log import CellLog
from ..results.store import CellOutcome
from .base import CellEnv, Runner, SuiteExit
from .common import outcome_from_suite, read_suite_results, timed_out
from .job import CellJob


def judge(cell: Cell, env: CellEnv, ran: SuiteExit, results_file: str, log: CellLog,
          timings: dict[str, float]) -> CellOutcome:
    """The outcome of a suite command that wrote ``results_file`` in ``env.out_dir``."""
    if ran.late:
        return timed_out(cell, env.runner, timings, log)
    if ran.lost:
        return CellOutcome(cell.name, "failed", "its environment failed under it: %s" % ran.lost, env.runner,
                           timings, None, log.tail())
    if ran.oom:
        return CellOutcome(cell.name, "failed", "out of memory (container limit %s)" % cell.memory, env.runner,
                           timings, None, log.tail())
    doc, problem = read_suite_results(env.out_dir / results_file)
    return outcome_from_suite(cell.name, doc, problem, ran.returncode, env.runner, timings, log)


def run_whole(runner: Runner, job: CellJob, log: CellLog, progress: Progress | None) -> CellOutcome:
    """The sequential schedule's cell: prepare it, run the whole suite once, judge, close."""
    env = runner.prepare(job, log, progress)
    if isinstance(env, CellOutcome):
        return env
    try:
        if progress:
            progress.phase("run")
        args = job.suite_args(env.suite_path("results.json"), env.runner.get("image"), runner.name)
        ran = env.run_suite(args, log, job.cell.timeout_s)
        timings = {**env.timings, "run_s": ran.seconds}
        return judge(job.cell, env, ran, "results.json", log, timings)
    finally:
        env.close()
