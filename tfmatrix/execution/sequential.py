"""The sequential schedule: one cell at a time, each one whole suite run, round after round.

Kept beside the interleaved schedule (``interleaved.py``) for comparison
(``--schedule sequential``) and for runners that run whole cells only (a Ray
cluster, ``parallel.py``). A cell that fails never costs another cell its
results; its file is written as soon as it ends, atomically. A re-run keeps
earlier successful results for the same request and inputs unless asked to
redo them.
"""
from __future__ import annotations

import time
from pathlib import Path

from ..progress import Progress
from ..results.cell_log import CellLog
from ..results.rounds import pooled_outcome
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


def one_cell(job: CellJob, index: int, runner: Runner, reports_dir: Path, redo: bool, progress: Progress,
             earlier_round: CellOutcome | None = None) -> CellOutcome:
    """Run one cell (or keep its valid results) and write its file; ``earlier_round``: this run's last round."""
    cell, asked = job.cell, job.asked
    json_path, log_path = cell_paths(reports_dir, cell.name)
    progress.start_cell(cell.name, index)
    t0 = time.monotonic()
    if earlier_round is not None and (earlier_round.kept or earlier_round.status != "ok"):
        # kept results are not measured again, and a cell that failed (or was skipped) in an earlier
        # round is not retried: its file already says why, as the interleaved schedule drops it
        progress.finish_cell(earlier_round.status, earlier_round.reason or "kept", 0)
        return earlier_round
    earlier = load_cell(json_path)
    if not redo and earlier_round is None and earlier is not None and reusable(earlier, asked, runner.inputs(cell)):
        progress.finish_cell("ok", kept_note(earlier), 0)
        return kept_outcome(cell.name, earlier)
    log = CellLog(log_path, progress, after=None if earlier_round is None else "the next round")
    kept_log: Path | None = None       # where the log goes when earlier complete results were kept
    try:
        try:
            outcome = runner.run_cell(job, log, progress)
        except KeyboardInterrupt:
            log("interrupted")
            kept_log = record_outcome(json_path, cell.to_dict(), CellOutcome(
                cell.name, "failed", "interrupted", {"name": runner.name}, {}, None, log.tail()), asked, earlier)
            raise
        except Exception as e:  # a bug or an engine failure: this cell fails, the others go on
            import traceback

            log(traceback.format_exc())
            outcome = CellOutcome(cell.name, "failed", "%s: %s" % (type(e).__name__, e), {"name": runner.name}, {},
                                  None, log.tail())
        # a cluster's cell waits in Ray's queue for a free node (queued_s): not the cell's own time
        outcome.timings["total_s"] = time.monotonic() - t0 - outcome.timings.get("queued_s", 0.0)
        failed_round = earlier_round is not None and earlier_round.status == "ok" and outcome.status != "ok"
        if earlier_round is not None and earlier_round.status == "ok" and outcome.status == "ok":
            outcome = pooled_outcome(earlier_round, outcome)
        # a failed round (or re-run) keeps the complete results on file, the attempt recorded beside them
        kept_log = record_outcome(json_path, cell.to_dict(), outcome, asked, earlier)
    finally:
        log.close(kept_log)
    reason = outcome.reason
    if kept_log is not None:
        reason = "%s; kept the results of %s" % (reason, earlier.finished if earlier else "?")
    progress.finish_cell(outcome.status, reason, time.monotonic() - t0 - outcome.timings.get("queued_s", 0.0))
    if failed_round:          # the rounds that succeeded stand; a later round pools with them
        assert earlier_round is not None
        return earlier_round
    return outcome
