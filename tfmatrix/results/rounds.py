"""Rounds across cells: every cell once, then every cell again, merged into one result per cell.

TF 1.x and TF 2.x cannot share a process, so a cross-version ratio divides
numbers measured minutes apart; on a shared host that is a comparison of two
moods of the machine as much as of two TensorFlows. With ``rounds = N`` the
matrix runs all cells once, then all again, N times, and each cell's result
pools its rounds as independent processes: both sides of a cross-cell ratio
saw every period of the run, and the spread between rounds is the measured
run-to-run noise that the report's verdicts must beat (``analysis.statistics``).

Pure functions over two suite results documents (or two rounds' outcomes); the schedules call them.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any

from suite import stats

from .documents import SuiteResults
from .store import CellOutcome

UNSTABLE = "variants are unstable"      # the words of the warning each round writes, replaced when pooled

# Lists in a record that hold one entry per process, concatenated across rounds.
PER_PROCESS_LISTS = (("iterations", "per_repeat"), ("iterations", "repeats"), ("iterations", "warmup_calls"),
                     ("setup", "build_s"), ("setup", "first_call_s"), ("schedule", "windows"),
                     ("schedule", "rounds"), ("schedule", "stopped"), ("schedule", "passes"), ("schedule", "leads"))


def merge_results(earlier: SuiteResults, later: SuiteResults) -> SuiteResults:
    """One suite results document from two rounds of the same cell and request.

    Records are matched by id. Both ok: samples and per-process lists are
    concatenated and the statistics recomputed from the raw samples, as the
    suite computes them. Not ok in either round: the failing round's record,
    its reason saying in which round. ``later`` wins for everything about the
    environment (it is the newest look at the cell).
    """
    unstable_cv = float(later.config.get("unstable_cv") or 0.1)
    old = {r["id"]: r for r in earlier.records}
    records = [rec if old.get(rec["id"]) is None else merge_record(old[rec["id"]], rec, unstable_cv)
               for rec in later.records]
    config = {**later.config, "rounds": int(earlier.config.get("rounds") or 1) + 1}
    warnings = pooled_warnings(later.warnings, records, unstable_cv)
    return dataclasses.replace(copy.deepcopy(later), records=records, started=earlier.started or later.started,
                               wall_s=float(earlier.wall_s or 0.0) + float(later.wall_s or 0.0), config=config,
                               warnings=warnings)


def pooled_warnings(warnings: list[str], records: list[dict[str, Any]], unstable_cv: float,
                    *also: str) -> list[str]:
    """A cell's warnings for its pooled ``records``: the suite's (each round said which variants were unstable
    in it: that one is said again, over the pooled rounds, last), then ``also``."""
    out = [w for w in warnings if UNSTABLE not in w]
    out += also
    unstable = [r for r in records if r.get("unstable")]
    if unstable:
        out.append("%d of %d %s (CV within or between rounds above %.0f%%)"
                   % (len(unstable), len(records), UNSTABLE, unstable_cv * 100))
    return out


def merge_record(earlier: dict[str, Any], later: dict[str, Any], unstable_cv: float) -> dict[str, Any]:
    """One record from the same variant measured in two rounds."""
    if later.get("status") != "ok" or earlier.get("status") != "ok":
        bad, when = (later, "the last round") if later.get("status") != "ok" else (earlier, "an earlier round")
        out = copy.deepcopy(bad)
        if bad.get("status") != "n/a" and (later.get("status") == "ok" or earlier.get("status") == "ok"):
            out["reason"] = "%s in %s: %s" % (bad.get("status"), when, bad.get("reason"))
        return out
    out = copy.deepcopy(later)
    per_process = [list(p) for p in earlier.get("per_process") or []] + [list(p) for p in later.get("per_process")
                                                                          or []]
    samples = stats.all_samples(per_process)
    out["per_process"] = per_process
    out["samples"] = samples
    for outer, inner in PER_PROCESS_LISTS:
        a = (earlier.get(outer) or {}).get(inner)
        b = (later.get(outer) or {}).get(inner)
        if isinstance(a, list) and isinstance(b, list):
            out.setdefault(outer, {})[inner] = a + b
    figures = merged_figures(earlier.get("figures"), later.get("figures"), len(earlier.get("per_process") or []),
                             len(later.get("per_process") or []))
    if figures:
        out["figures"] = figures
    out["stats"] = stats.summarize(samples)
    out["between_process"] = stats.between_processes(per_process)
    out["unstable"] = stats.is_unstable(per_process, unstable_cv)
    out["wall_s"] = float(earlier.get("wall_s") or 0.0) + float(later.get("wall_s") or 0.0)
    peaks = [p for p in (earlier.get("peak_rss_mb"), later.get("peak_rss_mb")) if p is not None]
    out["peak_rss_mb"] = max(peaks) if peaks else None
    return out


def merged_figures(earlier: Any, later: Any, n_earlier: int, n_later: int) -> dict[str, Any]:
    """Two rounds' figures (``suite.schema.FIGURE_KEYS``): per name, the values of both rounds' processes in order
    (None for a round's processes that measured none)."""
    a, b = earlier if isinstance(earlier, dict) else {}, later if isinstance(later, dict) else {}
    out: dict[str, Any] = {}
    for name in list(a) + [n for n in b if n not in a]:
        fa, fb = a.get(name) or {}, b.get(name) or {}
        va = list(fa.get("values") or [None] * n_earlier)
        vb = list(fb.get("values") or [None] * n_later)
        out[name] = {"unit": fb.get("unit") or fa.get("unit") or "", "values": va + vb}
    return out


def merge_timings(earlier: dict[str, float], later: dict[str, float]) -> dict[str, float]:
    """Time spent over the rounds: sums of each phase."""
    keys = set(earlier) | set(later)
    return {k: float(earlier.get(k) or 0.0) + float(later.get(k) or 0.0) for k in sorted(keys)}


def pooled_outcome(earlier: CellOutcome, later: CellOutcome) -> CellOutcome:
    """Two rounds of one cell (a sequential run's) as one outcome: results merged, times summed."""
    assert earlier.results is not None and later.results is not None
    return CellOutcome(later.name, "ok", None, later.runner, merge_timings(earlier.timings, later.timings),
                       merge_results(earlier.results, later.results), later.log_tail)
