"""Cells side by side, for runners that place them on other machines (a Ray cluster): one thread per cell in flight.

Each thread runs ``execution``'s own ``_one_cell``, so a cell's file is
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
from typing import Any

from .cluster_progress import ClusterProgress
from .results import CellOutcome
from .runners.base import Runner
from .runners.common import RunRequest


def run_round(cells: Sequence[Any], runner: Runner, request: RunRequest, reports_dir: Path, redo: bool,
              board: ClusterProgress, latest: dict[str, CellOutcome], slots: int) -> dict[str, CellOutcome]:
    """Every cell once, up to ``slots`` at a time; their outcomes by name."""
    from .execution import _one_cell

    out: dict[str, CellOutcome] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, min(slots, len(cells))), thread_name_prefix="tfmatrix-cell")
    futures: dict[Future[CellOutcome], str] = {
        pool.submit(_one_cell, cell, index, runner, request, reports_dir, redo, board.view(cell.name),
                    latest.get(cell.name)): cell.name
        for index, cell in enumerate(cells, start=1)}
    pending = set(futures)
    try:
        while pending:
            done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            for f in done:
                out[futures[f]] = f.result()
    except BaseException:
        cancel = getattr(runner, "cancel", None)
        if cancel is not None:
            cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    sweep = getattr(runner, "sweep", None)     # containers left by workers that died with their node
    if sweep is not None:
        sweep()
    return out
