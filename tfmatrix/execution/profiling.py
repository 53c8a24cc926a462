"""Profiled runs for ``explain``: the chosen variants of one cell profiled in that cell (``python -m suite profile``).

A profiled run is never a measured one: it runs in the cell's own
environment (the same image, the same suite, the same sizes) but into its
own file under ``reports/profiles/`` (``<cell>.json`` and its log), and
nothing reads it as a time. A cell that cannot be prepared, or a suite that
writes no file, is that cell's "could not profile: <reason>", never a crash;
the reason is also kept in the cell's file, as each variant's error record,
so that the report's why panel says it.

Each run adds to the cell's file (``keep``): its records replace the same
variants' earlier ones, and the earlier records of other variants stay while
they come from the same environment (image and preset), so every claim
explained in a cell keeps its panel.
"""
from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence
from pathlib import Path

from suite.schema import PROFILES_SCHEMA_NAME, PROFILES_SCHEMA_VERSION

from ..matrix import Cell
from ..results.cell_log import CellLog
from ..results.profile_docs import PROFILES_DIR, ProfilesDoc, peek_profiles, write_profiles
from ..results.store import CellOutcome
from ..runners.base import Runner
from .request import RunRequest

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


def _same_environment(a: ProfilesDoc, b: ProfilesDoc) -> bool:
    return (a.preset, a.image) == (b.preset, b.image)


def failed_doc(cell: Cell, reason: str, preset: str | None) -> ProfilesDoc:
    """A profiles file for a cell that could not profile at all: its header, no records yet."""
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    return ProfilesDoc(cell.name, {}, {
        "schema": PROFILES_SCHEMA_NAME, "schema_version": PROFILES_SCHEMA_VERSION, "suite_version": "",
        "status": "error", "error": reason, "preset": preset or cell.preset, "config": {},
        "cell": {"name": cell.name, "target": cell.target}, "environment": {}, "gpu": {}, "warnings": [],
        "started": now, "finished": now, "wall_s": 0.0})


def keep(target: Path, new: ProfilesDoc, variant_ids: Sequence[str]) -> None:
    """Write ``new``'s records to ``target`` (atomically) beside the earlier file's: a failed profile never
    replaces an earlier good one of the same variant, earlier records stay while they come from the same
    environment (image and preset; a failed run keeps them all), and a variant with no record at all gets an
    error record saying why."""
    earlier = peek_profiles(target)
    failed = not new.ok
    base = earlier if earlier is not None and (failed or _same_environment(earlier, new)) else None
    records = dict(base.records) if base is not None else {}
    for vid, r in new.records.items():
        if r.get("status") == "ok" or records.get(vid, {}).get("status") != "ok":
            records[vid] = r
    for vid in variant_ids:
        if vid not in records:
            records[vid] = {"id": vid, "status": "error",
                            "reason": new.error or "the profiled run wrote no record of it"}
    header = base if failed and base is not None else new
    write_profiles(target, dataclasses.replace(header, records=records))


def profiled_before(target: Path, cell: Cell, runner: Runner, variant_ids: Sequence[str], calls: int,
                    preset: str) -> bool:
    """Whether ``target`` already holds good profiles of every one of ``variant_ids``, taken with the same number
    of calls and preset in the same image (the cell's inputs as the runner would build them now)."""
    doc = peek_profiles(target)
    if doc is None or doc.calls != calls or doc.preset != preset:
        return False
    if not doc.image or doc.image != runner.inputs(cell):
        return False
    ok = {vid for vid, r in doc.records.items() if r.get("status") == "ok"}
    return all(v in ok for v in variant_ids)


def profile_in_cell(cell: Cell, runner: Runner, variant_ids: Sequence[str], reports: Path, calls: int,
                    preset: str | None = None, reuse: bool = False, bench_paths: Sequence[Path] = ()) -> Path | str:
    """Profile ``variant_ids`` in ``cell``: the cell's profiles file, or why not ("could not profile: ...");
    ``reuse``: profiles of the same variants from the same image are taken as they are (a bisect run again);
    ``bench_paths``: the user's benchmark files, mounted as a run mounts them (a claim over their variants)."""
    where = reports / PROFILES_DIR
    where.mkdir(parents=True, exist_ok=True)
    target = where / f"{cell.name}.json"
    if reuse and profiled_before(target, cell, runner, variant_ids, calls, preset or cell.preset):
        return target
    made = _profile(cell, runner, variant_ids, where, calls, preset, tuple(bench_paths))
    if isinstance(made, str):
        keep(target, failed_doc(cell, made, preset), variant_ids)
        return "could not profile: " + made
    keep(target, made, variant_ids)
    return target


def _profile(cell: Cell, runner: Runner, variant_ids: Sequence[str], where: Path, calls: int,
             preset: str | None, bench_paths: tuple[Path, ...] = ()) -> ProfilesDoc | str:
    """The suite's profiles document for ``variant_ids``, or why there is none."""
    log = CellLog(where / f"{cell.name}.log")
    try:
        env = runner.prepare(RunRequest(preset=preset, only=tuple(variant_ids), bench_paths=bench_paths).job(cell),
                             log, None)
        if isinstance(env, CellOutcome):
            return f"{env.status}: {env.reason}"
        try:
            args = profile_args(cell, variant_ids, env.suite_path(PROFILES_FILE), env.runner.get("image"),
                                runner.name, calls, preset)
            ran = env.run_suite(args, log, cell.timeout_s)
            made = env.out_dir / PROFILES_FILE
            if ran.late:
                return f"the profiled run passed the cell's {cell.timeout_s} s limit"
            if ran.oom:
                return "the profiled run ran out of memory"
            doc = peek_profiles(made) if made.is_file() else None
            if doc is None:
                return f"the suite wrote no profiles file (exit code {ran.returncode}; see {log.path})"
            return doc
        finally:
            env.close()
    finally:
        log.close()
