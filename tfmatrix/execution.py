"""Run cells of a matrix, one at a time, and write their results; then the report.

Cells run one at a time: concurrent cells would disturb each other's timings
(on a 2-core machine, badly). A cell that fails never costs another cell its
results; each cell's file is written as soon as the cell ends, atomically.
A re-run keeps earlier successful results for the same request and inputs
unless asked to redo them.
"""
from __future__ import annotations

import dataclasses
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from .documents import CellDoc
from .errors import UserError
from .progress import Progress, fmt_duration
from .results import (
    CellOutcome,
    cell_document,
    cell_paths,
    keep_previous,
    load_cell,
    reusable,
    suite_fingerprint,
    with_attempt,
    write_cell,
)
from .runners.base import Runner
from .runners.common import CellLog, RunRequest
from .user_benchmarks import files_hash

RUNNERS = ("auto", "docker", "venv", "ray")
# Rough suite run time of one CPU cell per preset on a 2-core machine, and what
# preparing a cell costs the first time (wheels and image build, or virtualenv
# install). Quick, measured on the default matrix's nine CPU cells with Docker
# (2026-11): runs 50-200 s (mean 87 s), wheels + build 35-75 s (mean 55 s).
ESTIMATE_RUN_S = {"quick": 100.0, "seed": 130.0, "standard": 3600.0, "full": 4 * 3600.0}
ESTIMATE_SETUP_S = 60.0


def make_runner(kind: str, registry: str | None, console: Console, address: str | None = None,
                cluster_cpus: int = 2) -> Runner:
    """The runner to use: Docker when an engine answers (auto), else the venv runner; ray: a Ray cluster's."""
    from .runners import docker as docker_runner
    from .runners.venv import VenvRunner

    if kind not in RUNNERS:
        raise UserError("--runner %r: choose one of %s" % (kind, ", ".join(RUNNERS)))
    if kind == "ray":
        from .runners.cluster import connect_runner

        return connect_runner(address, registry, cluster_cpus)
    if kind in ("auto", "docker"):
        client = docker_runner.engine()
        if client is not None:
            return docker_runner.DockerRunner(client, registry)
        if kind == "docker":
            raise UserError("--runner docker: no Docker engine answers (is dockerd running? DOCKER_HOST?)")
        console.print("\\[tfmatrix] no Docker engine answers: using the venv runner (CPU cells only)")
    return VenvRunner()


def cell_estimates(cells: Sequence[Any], request: RunRequest, reports_dir: Path) -> dict[str, float]:
    """Seconds each cell may take: its last run time with the same preset, else a per-preset guess.

    Preparation (image build, virtualenv) is counted only for cells that have
    never completed here; a warm cell costs its run time.
    """
    out = {}
    for cell in cells:
        doc = load_cell(cell_paths(reports_dir, cell.name)[0])
        preset = request.for_cell(cell)["preset"]
        asked = preset_processes(preset)
        wanted = request.processes or asked
        if doc is not None and doc.request.get("preset") == preset and "run_s" in doc.timings:
            had = doc.request.get("processes") or asked
            out[cell.name] = doc.timings["run_s"] / doc.rounds * request.rounds * wanted / had
        else:
            out[cell.name] = (ESTIMATE_RUN_S.get(preset, 600.0) * request.rounds * wanted / asked
                              + ESTIMATE_SETUP_S)
    return out


def preset_processes(preset: str) -> int:
    """The fresh processes per variant a suite preset runs (the estimates scale with them)."""
    from suite.registry import PRESETS

    known = PRESETS.get(preset)
    return known.processes if known else 1


def estimate(cells: Sequence[Any], request: RunRequest, reports_dir: Path) -> float:
    """Seconds the run may take one cell at a time."""
    return sum(cell_estimates(cells, request, reports_dir).values())


def cold_estimate(cells: Sequence[Any]) -> float:
    """Seconds a first run of ``cells`` may take here (nothing built, no earlier results), by preset."""
    return sum(ESTIMATE_RUN_S.get(c.preset, 600.0) + ESTIMATE_SETUP_S for c in cells)


def execute(cells: Sequence[Any], runner: Runner, request: RunRequest, reports_dir: Path, *, redo: bool = True,
            console: Console | None = None) -> list[CellOutcome]:
    """Run ``cells`` one after another; every cell ends with a results file."""
    console = console or Console(stderr=True, highlight=False, soft_wrap=True)
    request = dataclasses.replace(request, suite=suite_fingerprint(), bench=files_hash(request.bench_paths))
    n_gpu = sum(1 for c in cells if c.target == "gpu")
    skips = {c.name: runner.skip_reason(c) for c in cells}
    runnable = [c for c in cells if not skips[c.name]]
    text = "%d cells (%d CPU, %d GPU) with the %s runner" % (len(cells), len(cells) - n_gpu, n_gpu, runner.name)
    if len(runnable) < len(cells):
        reasons = sorted({r for r in skips.values() if r})
        text += "; %d will be skipped (%s)" % (len(cells) - len(runnable), "; ".join(reasons))
    if request.rounds > 1:
        text += ", %d rounds (every cell once, then again)" % request.rounds
    each = cell_estimates(runnable, request, reports_dir)
    slots = int(getattr(runner, "slots", 1))      # a cluster's runner: cells side by side (parallel.py)
    width = int(runner.width(runnable)) if slots > 1 and hasattr(runner, "width") else 1   # cells at once
    when = fmt_duration(sum(each.values()))
    if width > 1:
        from .cluster_progress import makespan

        when = "%s with %d at once (%s one at a time)" % (
            fmt_duration(makespan(list(each.values()), width) * request.rounds), width, when)
    console.print("\\[tfmatrix] %s; %d to run, roughly %s" % (text, len(runnable), when))
    if slots > 1:
        from .cluster_progress import ClusterProgress
        from .parallel import run_round

        board = ClusterProgress(len(cells), console, sum(each.values()),
                                {k: v / request.rounds for k, v in each.items()}, width)
    progress = Progress(len(cells), console, live=False if slots > 1 else None)
    latest: dict[str, CellOutcome] = {}
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        for round_no in range(1, request.rounds + 1):
            if request.rounds > 1:
                console.print("\\[tfmatrix] round %d of %d" % (round_no, request.rounds))
            if slots > 1:
                latest.update(run_round(cells, runner, request, reports_dir, redo, board, latest, slots))
                continue
            for index, cell in enumerate(cells, start=1):
                latest[cell.name] = _one_cell(cell, index, runner, request, reports_dir, redo, progress,
                                              latest.get(cell.name))
    finally:
        signal.signal(signal.SIGTERM, previous)
        progress.close()
    return [latest[c.name] for c in cells]


def pooled(earlier: CellOutcome, later: CellOutcome) -> CellOutcome:
    """Two rounds of one cell as one outcome: results merged (rounds.py), times summed."""
    from .rounds import merge_results, merge_timings

    assert earlier.results is not None and later.results is not None
    return CellOutcome(later.name, "ok", None, later.runner, merge_timings(earlier.timings, later.timings),
                       merge_results(earlier.results, later.results), later.log_tail)


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt("terminated")


def _one_cell(cell: Any, index: int, runner: Runner, request: RunRequest, reports_dir: Path, redo: bool,
              progress: Progress, earlier_round: CellOutcome | None = None) -> CellOutcome:
    """Run one cell (or keep its valid results) and write its file; ``earlier_round``: this run's last round."""
    json_path, log_path = cell_paths(reports_dir, cell.name)
    asked = request.for_cell(cell)
    progress.start_cell(cell.name, index)
    t0 = time.monotonic()
    if earlier_round is not None and (earlier_round.kept or earlier_round.status == "skipped"):
        progress.finish_cell(earlier_round.status, earlier_round.reason or "kept", 0)
        return earlier_round
    earlier = load_cell(json_path)
    if not redo and earlier_round is None and earlier is not None and reusable(earlier, asked, runner.inputs(cell)):
        progress.finish_cell("ok", "kept the results of %s (use --redo to run again)" % earlier.finished, 0)
        return CellOutcome(cell.name, "ok", None, earlier.runner, earlier.timings, earlier.results, earlier.log_tail,
                           kept=True)
    log = CellLog(log_path, progress)
    attempt_log = log_path.with_name(cell.name + ".attempt.log")
    kept_log = False
    try:
        try:
            outcome = runner.run_cell(cell, request, log, progress)
        except KeyboardInterrupt:
            log("interrupted")
            kept_log = _record(json_path, cell.to_dict(), CellOutcome(
                cell.name, "failed", "interrupted", {"name": runner.name}, {}, None, log.tail()), asked, earlier,
                attempt_log)
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
            outcome = pooled(earlier_round, outcome)
        elif earlier_round is None and outcome.status == "ok":
            keep_previous(earlier, json_path.name, reports_dir)
        # a failed round (or re-run) keeps the complete results on file, the attempt recorded beside them
        kept_log = _record(json_path, cell.to_dict(), outcome, asked, earlier, attempt_log)
    finally:
        log.close(attempt_log if kept_log else None)
    reason = outcome.reason
    if kept_log:
        reason = "%s; kept the results of %s" % (reason, earlier.finished if earlier else "?")
    progress.finish_cell(outcome.status, reason, time.monotonic() - t0 - outcome.timings.get("queued_s", 0.0))
    if failed_round:          # the rounds that succeeded stand; a later round pools with them
        assert earlier_round is not None
        return earlier_round
    return outcome


def _record(json_path: Path, cell: dict[str, Any], outcome: CellOutcome, asked: dict[str, Any],
            earlier: CellDoc | None, attempt_log: Path) -> bool:
    """Write the cell's file; True when an earlier complete result was kept instead (the attempt beside it).

    A failed, timed-out, skipped or interrupted attempt never replaces a cell's
    last complete results: they stay, with ``last_attempt`` saying what happened.
    """
    if outcome.status != "ok" and earlier is not None and earlier.complete:
        write_cell(json_path, with_attempt(earlier, outcome, attempt_log.name))
        return True
    write_cell(json_path, cell_document(cell, outcome, asked))
    return False
