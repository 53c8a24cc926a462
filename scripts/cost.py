"""Where a run's time goes and where its noise comes from, level by level; how many samples a process should take.

Kalibera & Jones ("Rigorous benchmarking in reasonable time", ISMM 2013):
an experiment repeated at two levels (processes, and samples inside each)
has, for a fixed cost, the most precise mean when each process takes

    n* = sqrt(c_process / c_sample * s2_sample / s2_process)

samples, where ``c_process`` is what starting a process costs a variant
(its share of the import, its build, first call and warm-up), ``c_sample``
one sample's time, ``s2_sample`` the variance between one process's samples
and ``s2_process`` the variance the processes add on top of their samples'
(the between-process variance of a process's estimate less what its own
samples explain). Both variances are of log times; a process's estimate is
the p10 of its samples (``stats.estimate``), whose sampling variance is
found by resampling the process's own samples rather than assumed.

Pure functions over loaded cells (``analysis.cells``); ``scripts/bench_cost.py``
prints them for a run.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tfmatrix.analysis.cells import CellResult
from tfmatrix.analysis.statistics.stats import estimate
from tfmatrix.analysis.variant import Variant

RESAMPLES = 200


@dataclass(frozen=True)
class Spent:
    """Seconds one variant spent, summed over its processes, by what they went to."""

    build: float
    first_call: float
    warmup: float         # warm-up and calibration calls
    samples: float
    other: float          # the rest of its wall time: garbage collections, bookkeeping

    @property
    def total(self) -> float:
        return self.build + self.first_call + self.warmup + self.samples + self.other


def spent(v: Variant) -> Spent:
    """What ``v``'s processes spent on it, from its record (``wall_s`` is the whole, the rest is itemised)."""
    build = sum(float(x) for x in v.build_s if x is not None)
    first = sum(float(x) for x in v.first_call_s if x is not None)
    samples = warm = 0.0
    for i, process in enumerate(v.per_process):
        values = [float(x) for x in process if x is not None]
        if not values:
            continue
        calls = float(v.calls[i]) if i < len(v.calls) and v.calls[i] else 1.0
        samples += sum(values) * calls * v.inner
        warmups = float(v.warmup_calls[i]) if i < len(v.warmup_calls) and v.warmup_calls[i] else 0.0
        warm += warmups * min(values) * v.inner
    wall = float(v.wall_s) if v.wall_s else build + first + warm + samples
    return Spent(build, first, warm, samples, max(0.0, wall - build - first - warm - samples))


@dataclass(frozen=True)
class Levels:
    """One variant's variance at each level (log times) and its costs, with Kalibera & Jones's sample count."""

    id: str
    benchmark: str
    processes: int
    samples_now: float          # samples per process it took (median)
    s2_sample: float            # between one process's samples
    s2_estimate: float          # of one process's p10 through its own samples alone (resampled)
    s2_between: float           # between its processes' p10s
    c_process: float            # seconds a process spends on it before its first sample
    c_sample: float             # seconds one sample takes

    @property
    def s2_process(self) -> float:
        """What the processes add on top of their samples (never below 1% of the between-process variance)."""
        return max(self.s2_between - self.s2_estimate, 0.01 * self.s2_between, 1e-12)

    @property
    def best_samples(self) -> float:
        """n* = sqrt(c_process / c_sample * s2_sample / s2_process)."""
        if self.c_sample <= 0 or self.s2_sample <= 0:
            return math.nan
        return math.sqrt(self.c_process / self.c_sample * self.s2_sample / self.s2_process)


def _resampled_var(values: Sequence[float], rng: np.random.Generator) -> float:
    if len(values) < 2:
        return math.nan
    draws = rng.choice(np.asarray(values), size=(RESAMPLES, len(values)), replace=True)
    logs = np.log(np.percentile(draws, 10, axis=1))
    return float(np.var(logs, ddof=1))


def levels(v: Variant, per_process_overhead: float = 0.0, seed: int = 0) -> Levels | None:
    """``v``'s levels when it ran in two or more processes with two or more samples each; else None.

    ``per_process_overhead``: its share of each process's start (the import,
    spread over the variants the process measured).
    """
    processes = [[float(x) for x in p if x is not None and float(x) > 0] for p in v.per_process]
    processes = [p for p in processes if len(p) >= 2]
    if len(processes) < 2:
        return None
    rng = np.random.default_rng(seed)
    logs = [np.log(p) for p in processes]
    s2_sample = float(np.mean([np.var(x, ddof=1) for x in logs]))
    s2_estimate = float(np.nanmean([_resampled_var(p, rng) for p in processes]))
    s2_between = float(np.var([math.log(estimate(p)) for p in processes], ddof=1))
    cost = spent(v)
    n_samples = sum(len(p) for p in processes)
    c_sample = cost.samples / n_samples if n_samples else 0.0
    c_process = (cost.build + cost.first_call + cost.warmup + cost.other) / len(processes) + per_process_overhead
    return Levels(str(v.id), v.benchmark, len(processes), float(np.median([len(p) for p in processes])), s2_sample,
                  s2_estimate, s2_between, c_process, c_sample)


@dataclass(frozen=True)
class BenchmarkLevels:
    """A benchmark's medians over its variants: what its next run should do per process."""

    benchmark: str
    variants: int
    samples_now: float
    best_samples: float
    sd_sample: float
    sd_process: float
    c_process: float
    c_sample: float


def _median(values: Sequence[float]) -> float:
    clean = [x for x in values if math.isfinite(x)]
    return float(np.median(clean)) if clean else math.nan


def by_benchmark(found: Sequence[Levels]) -> list[BenchmarkLevels]:
    """Per benchmark, the median of each quantity over its variants (most expensive first)."""
    groups: dict[str, list[Levels]] = defaultdict(list)
    for x in found:
        groups[x.benchmark].append(x)
    out = []
    for name, xs in groups.items():
        out.append(BenchmarkLevels(name, len(xs), _median([x.samples_now for x in xs]),
                                   _median([x.best_samples for x in xs]),
                                   math.sqrt(_median([x.s2_sample for x in xs])),
                                   math.sqrt(_median([x.s2_process for x in xs])),
                                   _median([x.c_process for x in xs]), _median([x.c_sample for x in xs])))
    return sorted(out, key=lambda b: -(b.c_process + b.c_sample * b.samples_now) * b.variants)


def cell_spent(cell: CellResult) -> Spent:
    """Every ok variant's ``spent``, summed."""
    parts = [spent(v) for v in cell.variants if v.ok]
    return Spent(sum(p.build for p in parts), sum(p.first_call for p in parts), sum(p.warmup for p in parts),
                 sum(p.samples for p in parts), sum(p.other for p in parts))
