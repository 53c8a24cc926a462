"""Cells side by side, for runners that place them on other machines (a Ray cluster): one thread per cell in flight.

Each thread runs the sequential schedule's ``one_cell``, so a cell's file is
written exactly as when cells run one at a time: atomically on this host, as
the cell ends, an earlier complete result never replaced by a failure. The
runner decides where and when each cell really runs (Ray queues a cell until a
node has its resources). Ctrl-C (or SIGTERM) in the main thread asks the runner
to cancel every task, waits for the threads to record their cells as
``interrupted``, and re-raises.
"""
from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from ..progress.board import ClusterProgress
from ..results.store import CellOutcome
from ..runners.base import Runner
from ..runners.job import CellJob
from .sequential import one_cell


def run_round(jobs: Sequence[CellJob], runner: Runner, reports_dir: Path, redo: bool, board: ClusterProgress,
              latest: dict[str, CellOutcome], slots: int) -> dict[str, CellOutcome]:
    """Every cell once, up to ``slots`` at a time; their outcomes by name."""
    out: dict[str, CellOutcome] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, min(slots, len(jobs))), thread_name_prefix="tfmatrix-cell")
    futures: dict[Future[CellOutcome], str] = {
        pool.submit(one_cell, job, index, runner, reports_dir, redo, board.view(job.name), latest.get(job.name)):
        job.name for index, job in enumerate(jobs, start=1)}
    pending = set(futures)
    try:
        while pending:
            done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            for f in done:
                out[futures[f]] = f.result()
    except BaseException:
        runner.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    runner.sweep()     # containers left by workers that died with their node
    return out
