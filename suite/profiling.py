"""Where a variant's time goes, function by function: ``python -m suite profile``, the raw material of ``explain``.

Profiling is never measuring. A profiled run is a run of its own, in its own
worker processes (``worker.profile_window``): each variant is built, called once (its first call:
tracing, compiling) and warmed up exactly as a measured run does it
(``harness.Sampler``), then its step is called ``calls`` times the calibrated
number of calls a sample takes, under ``cProfile``: the standard library's
deterministic profiler, in every Python the cells use (3.6-3.13), needing no
capability inside the container (a sampling profiler that reads another
process's memory needs CAP_SYS_PTRACE, which cells do not have). Its records
hold a function table, never samples, and are written to their own file
(``schema.PROFILES_SCHEMA_NAME``); nothing reads them as times.

Per function: where it is defined (file, line, name), how often it was
called, its own time and its time with callees, and its costliest callers
(enough to draw a caller tree). Functions whose own and cumulative time are
both under ``MIN_SHARE`` of the profiled time are summed into ``rest``, so a
TensorFlow profile stays a few hundred rows.
"""
from __future__ import annotations

import cProfile
import pstats
import sys
import time
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, Tuple

from .definitions import Benchmark, Preset, Variant
from .harness import timer
from .registry import all_variants, load_benchmarks, select
from .schema import PROFILES_SCHEMA_NAME, PROFILES_SCHEMA_VERSION

PROFILER = "cProfile"
DEFAULT_CALLS = 20
MIN_SHARE = 0.0005       # rows under this share of the profiled time (own and cumulative) go to ``rest``
CALLERS = 5              # callers kept per function, costliest first


def function_table(stats: "pstats.Stats", total_s: float) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """(rows, rest): the profile's functions, costliest own time first, and what was left out."""
    rows: List[Dict[str, Any]] = []
    rest = {"functions": 0, "self_s": 0.0}
    floor = MIN_SHARE * max(total_s, 1e-12)
    for (file, line, name), (_prim, calls, self_s, cum_s, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if self_s < floor and cum_s < floor:
            rest["functions"] += 1
            rest["self_s"] += self_s
            continue
        top = sorted(callers.items(), key=lambda kv: -kv[1][3])[:CALLERS]
        rows.append({"file": file, "line": int(line), "name": name, "calls": int(calls), "self_s": float(self_s),
                     "cum_s": float(cum_s),
                     "callers": [[cf, int(cl), cn, int(c[1]), float(c[3])] for (cf, cl, cn), c in top]})
    rows.sort(key=lambda r: -r["self_s"])
    return rows, rest


def profile_calls(step: Callable[[], Any], calls: int) -> Dict[str, Any]:
    """``step`` called ``calls`` times under cProfile: the record's profile fields."""
    profiler = cProfile.Profile()
    t0 = timer()
    profiler.enable()
    try:
        for _ in range(calls):
            step()
    finally:
        profiler.disable()
    wall = timer() - t0
    stats = pstats.Stats(profiler)
    rows, rest = function_table(stats, wall)
    return {"profiler": PROFILER, "step_calls": calls, "wall_s": wall, "functions": rows, "rest": rest}


def new_record(variant: Variant) -> Dict[str, Any]:
    """A profile record for ``variant`` before it ran: ok, no function table yet."""
    return {"id": variant.id, "benchmark": variant.benchmark, "params": variant.as_dict(), "status": "ok",
            "reason": None, "extra": {}, "info": {}, "first_call_s": None}


def profile(preset: Preset, only: Sequence[str], out_path: str, cell: Dict[str, Any], calls: int = DEFAULT_CALLS,
            log: IO[str] = sys.stderr, benchmarks: Optional[Sequence[Benchmark]] = None) -> int:
    """``python -m suite profile --only ID``: fingerprint, then each selected variant profiled in its mode's worker."""
    from .document import finish, header, take_fingerprint
    from .isolation import run_group
    from .run import plan_groups, settle

    t0 = time.monotonic()
    benchmarks = list(benchmarks) if benchmarks is not None else load_benchmarks()
    variants = select(all_variants(preset, benchmarks), only)
    doc = header(preset, only, cell, variants)
    doc.update(schema=PROFILES_SCHEMA_NAME, schema_version=PROFILES_SCHEMA_VERSION)
    doc["config"]["profile_calls"] = calls
    facts = take_fingerprint(doc, log, preset)
    if facts is None:
        return finish(doc, out_path, t0, log, code=3)
    by_id = {v.id: v for v in variants}
    records: Dict[str, Dict[str, Any]] = {}
    for vid, rec in settle(facts, variants).items():
        records[vid] = dict(new_record(by_id[vid]), status=rec["status"], reason=rec["reason"])
    for group, members in plan_groups([v for v in variants if v.id not in records]).items():
        log.write("[suite] profiling group %s: %d variants, %d calls a sample each\n" % (group, len(members), calls))
        for vid, rec in run_group(members[0].mode, members, preset, log, profile=calls).items():
            # the worker's own records are complete; a crash or a hang comes back as a bare failure record
            records[vid] = rec if "benchmark" in rec else dict(new_record(by_id[vid]), status=rec["status"],
                                                                reason=rec["reason"], traceback=rec.get("traceback"))
    doc["records"] = [records[v.id] for v in variants if v.id in records]
    return finish(doc, out_path, t0, log, code=0)
