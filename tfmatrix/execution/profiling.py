"""Profiled runs for ``explain``: the chosen variants of one cell profiled in that cell (``python -m suite profile``).

A profiled run is never a measured one: it runs in the cell's own
environment (the same image, the same suite, the same sizes) but into its
own file under ``reports/profiles/`` (``<cell>.json`` and its log), and
nothing reads it as a time. A cell that cannot be prepared, or a suite that
writes no file, is that cell's "could not profile: <reason>", never a crash.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from ..matrix import Cell
from ..results.store import CellOutcome
from ..runners.base import Runner
from ..runners.common import CellLog, RunRequest

PROFILES_DIR = "profiles"
PROFILES_FILE = "profiles.json"


def profile_args(cell: Cell, variant_ids: Sequence[str], out: str, image: str | None, runner: str, calls: int,
                 preset: str | None = None) -> list[str]:
    """``python -m suite profile`` arguments for ``variant_ids`` of ``cell`` (ids are exact: plain text matches)."""
    args = ["profile", "--preset", preset or cell.preset, "--out", out, "--cell", cell.name, "--target", cell.target,
            "--runner", runner, "--calls", str(calls)]
    if image:
        args += ["--image", image]
    for vid in variant_ids:
        args += ["--only", vid]
    return args


def profile_in_cell(cell: Cell, runner: Runner, variant_ids: Sequence[str], reports: Path, calls: int,
                    preset: str | None = None) -> Path | str:
    """Profile ``variant_ids`` in ``cell``: the profiles file, or why there is none ("could not profile: ...")."""
    where = reports / PROFILES_DIR
    where.mkdir(parents=True, exist_ok=True)
    log = CellLog(where / f"{cell.name}.log")
    try:
        env = runner.prepare(cell, RunRequest(preset=preset, only=tuple(variant_ids)), log, None)
        if isinstance(env, CellOutcome):
            return f"could not profile: {env.status}: {env.reason}"
        try:
            args = profile_args(cell, variant_ids, env.suite_path(PROFILES_FILE), env.runner.get("image"),
                                runner.name, calls, preset)
            ran = env.run_suite(args, log, cell.timeout_s)
            made = env.out_dir / PROFILES_FILE
            if ran.late:
                return f"could not profile: the profiled run passed the cell's {cell.timeout_s} s limit"
            if ran.oom:
                return "could not profile: the profiled run ran out of memory"
            if not made.is_file():
                return (f"could not profile: the suite wrote no profiles file (exit code {ran.returncode}; see "
                        f"{log.path})")
            target = where / f"{cell.name}.json"
            partial = target.with_name(target.name + ".partial")
            shutil.copyfile(made, partial)
            os.replace(partial, target)
            return target
        finally:
            env.close()
    finally:
        log.close()
