"""Run the cells of a matrix on a schedule and write their results: the runner, the estimates, the dispatch.

Cells never run side by side on one host: concurrent cells would disturb
each other's timings (on a 2-core machine, badly). The default schedule is
interleaved (``interleaved.py``: every cell provisioned first, then one slice
of each cell per turn in a random order); ``--schedule sequential`` runs
whole cells one after another (``sequential.py``), as a cluster's runner
always does (``parallel.py``).
"""
from __future__ import annotations

import dataclasses
import functools
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from ..errors import UserError
from ..matrix import Cell
from ..matrix.user_benchmarks import files_hash
from ..progress import Progress, fmt_duration, stderr_console
from ..results.store import CellOutcome, cell_paths, load_cell, suite_fingerprint
from ..runners.base import Runner
from ..runners.common import RunRequest
from ..runners.existing import WithExisting
from ..runners.local import local_runner
from .sequential import one_cell

RUNNERS = ("auto", "docker", "venv", "ray")
# Rough suite run time of one CPU cell per preset and round on a 2-core machine,
# and what preparing a cell costs the first time (wheels and image build, or
# virtualenv install). Quick, measured on the default matrix's nine CPU cells
# with Docker (2026-11): runs 50-200 s (mean 87 s), wheels + build 35-75 s
# (mean 55 s). Seed: the default matrix's 12 CPU cells, 3 interleaved rounds, warm
# 68.8 min on 2026-11-26 (38-46 min the day before): 112 s a cell and round, from
# 23 s (keras3-torch-cpu) to 283 s (tf2.16-tf_keras-cpu).
ESTIMATE_RUN_S = {"quick": 100.0, "seed": 110.0, "standard": 3600.0, "full": 4 * 3600.0}
ESTIMATE_SETUP_S = 60.0


def make_runner(kind: str, registry: str | None, console: Console, address: str | None = None,
                cluster_cpus: int = 2, cells: Sequence[Cell] | None = None) -> Runner:
    """The runner to use: Docker when an engine answers (auto), else the venv runner; ray: a Ray cluster's. On this
    host, existing environments (``python = "/path"``) run in themselves beside it (``runners.existing``).

    ``cells``: what will run; when every one is an existing environment, the fallback's note (venv: CPU cells
    only) says nothing about them and is not printed."""
    if kind not in RUNNERS:
        raise UserError("--runner %r: choose one of %s" % (kind, ", ".join(RUNNERS)))
    if kind == "ray":
        from ..runners.cluster import connect_runner

        return connect_runner(address, registry, cluster_cpus)
    runner, note = local_runner(kind, registry)
    if note and not (cells and all(_is_existing(c) for c in cells)):
        console.print("\\[tfmatrix] " + note)
    return WithExisting(runner)       # existing environments (python = "/path") run as they are, whatever the runner


def cell_estimates(cells: Sequence[Cell], request: RunRequest, reports_dir: Path,
                   built: Callable[[Cell], bool] | None = None) -> dict[str, float]:
    """Seconds each cell may take: its last run time with the same preset, else a per-preset guess.

    Preparation (image build, virtualenv) is counted only for cells that have
    never completed here and whose environment the runner has not ``built``
    (a first run into a new reports directory on a warm host once said 54
    minutes for 40); a warm cell costs its run time. Both scale with the
    share of the preset's variants ``--bench``/``only`` selects (a bisect probe
    runs 2 of 120: its estimate once said 2:40 for a 20-second run).
    """
    out = {}
    for cell in cells:
        doc = _last_run(cell, request, reports_dir)
        preset = request.for_cell(cell).preset
        asked = preset_processes(preset)
        wanted = request.processes or asked
        share = selected_share(preset, request.only)
        if doc is not None:
            then_asked = doc.cell_request
            had = then_asked.processes or asked
            then = selected_share(preset, then_asked.only)
            out[cell.name] = doc.timings["run_s"] / doc.rounds * request.rounds * wanted / had * share / then
        else:
            setup = 0.0 if built is not None and built(cell) else ESTIMATE_SETUP_S
            out[cell.name] = ESTIMATE_RUN_S.get(preset, 600.0) * request.rounds * wanted / asked * share + setup
    return out


def _last_run(cell: Cell, request: RunRequest, reports_dir: Path) -> Any:
    """The cell's last results here with the preset asked for and a run time, or None."""
    doc = load_cell(cell_paths(reports_dir, cell.name)[0])
    ok = doc is not None and doc.cell_request.preset == request.for_cell(cell).preset and "run_s" in doc.timings
    return doc if ok else None


def unknown_estimates(cells: Sequence[Cell], request: RunRequest, reports_dir: Path) -> list[str]:
    """Existing environments with no earlier run here: their time is unknown (a per-preset guess would be a
    built cell's, and an environment on a GPU is nothing like one)."""
    return [c.name for c in cells if _is_existing(c) and _last_run(c, request, reports_dir) is None]


def _is_existing(cell: Any) -> bool:
    """An existing environment (a stand-in cell without the attribute is a built one)."""
    return bool(getattr(cell, "existing", False))


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def cells_text(cells: Sequence[Cell], runner: str) -> str:
    """ "3 cells (2 CPU, 1 GPU) with the docker runner"; existing environments, which run as they are whatever the
    runner, counted apart: "2 existing environments (2 GPU) beside 0 cells of the docker runner"."""
    def counted(group: list[Cell], one: str, many: str) -> str:
        n_gpu = sum(1 for c in group if c.target == "gpu")
        by = ", ".join(f"{n} {t}" for n, t in ((len(group) - n_gpu, "CPU"), (n_gpu, "GPU")) if n)
        return _count(len(group), one, many) + (f" ({by})" if by else "")

    built = counted([c for c in cells if not _is_existing(c)], "cell", "cells")
    existing = [c for c in cells if _is_existing(c)]
    if not existing:
        return f"{built} with the {runner} runner"
    return f"{counted(existing, 'existing environment', 'existing environments')} beside {built} of the {runner} runner"


@functools.lru_cache(maxsize=64)
def selected_share(preset: str, only: tuple[str, ...]) -> float:
    """The share of the preset's built-in variants the patterns select (1.0 for none; at least one variant's)."""
    if not only:
        return 1.0
    from suite.registry import PRESETS, all_variants, select

    known = PRESETS.get(preset)
    if known is None:
        return 1.0
    variants = all_variants(known)
    return max(1, len(select(variants, only))) / max(1, len(variants))


def preset_processes(preset: str) -> int:
    """The fresh processes per variant a suite preset runs (the estimates scale with them)."""
    from suite.registry import PRESETS

    known = PRESETS.get(preset)
    return known.processes if known else 1


def estimate(cells: Sequence[Cell], request: RunRequest, reports_dir: Path) -> float:
    """Seconds the run may take one cell at a time."""
    return sum(cell_estimates(cells, request, reports_dir).values())


def cold_estimate(cells: Sequence[Cell], rounds: int = 1) -> float:
    """Seconds a first run of ``cells`` in ``rounds`` rounds may take here (nothing built, no earlier results)."""
    return sum(ESTIMATE_RUN_S.get(c.preset, 600.0) * rounds + ESTIMATE_SETUP_S for c in cells)


def execute(cells: Sequence[Cell], runner: Runner, request: RunRequest, reports_dir: Path, *, redo: bool = True,
            console: Console | None = None) -> list[CellOutcome]:
    """Run ``cells`` on the request's schedule; every cell ends with a results file."""
    console = console or stderr_console()
    request = dataclasses.replace(request, suite=suite_fingerprint(), bench=files_hash(request.bench_paths))
    if request.schedule == "interleaved" and not (runner.interleaves and runner.slots <= 1):
        console.print("\\[tfmatrix] the %s runner runs whole cells: sequential schedule" % runner.name)
        request = dataclasses.replace(request, schedule="sequential")
    skips = {c.name: runner.skip_reason(c) for c in cells}
    runnable = [c for c in cells if not skips[c.name]]
    text = cells_text(cells, runner.name)
    if len(runnable) < len(cells):
        reasons = sorted({r for r in skips.values() if r})
        text += "; %d will be skipped (%s)" % (len(cells) - len(runnable), "; ".join(reasons))
    if request.schedule == "interleaved":
        text += ", interleaved in %s" % _count(request.rounds, "round", "rounds")
    elif request.rounds > 1:
        text += ", %d rounds (every cell once, then again)" % request.rounds
    each = cell_estimates(runnable, request, reports_dir, runner.built)
    width = runner.width(runnable) if runner.slots > 1 else 1   # cells at once
    unknown = unknown_estimates(runnable, request, reports_dir)
    when = fmt_duration(sum(t for name, t in each.items() if name not in unknown))
    if width > 1:
        from .cluster_progress import makespan

        when = "%s with %d at once (%s one at a time)" % (
            fmt_duration(makespan(list(each.values()), width) * request.rounds), width, when)
    when = "roughly " + when
    if unknown:
        never = "%s never run here" % _count(len(unknown), "existing environment", "existing environments")
        when = "time unknown (%s)" % never if len(unknown) == len(runnable) else "%s, and unknown for %s" % (
            when, never)
    console.print("\\[tfmatrix] %s; %d to run, %s" % (text, len(runnable), when))
    room = runner.disk_room(runnable)
    if room is not None and room.need > room.free:
        from ..provision.hygiene import room_line

        raise UserError(room_line(room.need, room.free, room.where, room.what))
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        if request.schedule == "interleaved":
            from . import interleaved

            return interleaved.run(cells, runner, request, reports_dir, redo=redo, console=console)
        return _sequential(cells, runner, request, reports_dir, redo, console, each, width)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _sequential(cells: Sequence[Cell], runner: Runner, request: RunRequest, reports_dir: Path, redo: bool,
                console: Console, each: dict[str, float], width: int) -> list[CellOutcome]:
    """Round after round, every cell whole: one at a time, or ``runner.slots`` side by side on a cluster."""
    if runner.slots > 1:
        from .cluster_progress import ClusterProgress
        from .parallel import run_round

        board = ClusterProgress(len(cells), console, sum(each.values()),
                                {k: v / request.rounds for k, v in each.items()}, width, request.rounds)
    progress = Progress(len(cells), console, live=False if runner.slots > 1 else None)
    latest: dict[str, CellOutcome] = {}
    try:
        for round_no in range(1, request.rounds + 1):
            if request.rounds > 1:
                console.print("\\[tfmatrix] round %d of %d" % (round_no, request.rounds))
            if runner.slots > 1:
                if round_no > 1:
                    board.next_round()
                latest.update(run_round(cells, runner, request, reports_dir, redo, board, latest, runner.slots))
                continue
            for index, cell in enumerate(cells, start=1):
                latest[cell.name] = one_cell(cell, index, runner, request, reports_dir, redo, progress,
                                             latest.get(cell.name))
    finally:
        progress.close()
    return [latest[c.name] for c in cells]


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt("terminated")
