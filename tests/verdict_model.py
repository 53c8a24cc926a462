"""Runs with known variance components, for the verdicts' acceptance tests and ``scripts/bench_verdicts.py``.

The generator of the statistics review (``docs/measurement.md``, "Verdicts"), on the log scale::

    log t[v,s,r,i] = mu_v + delta_v [s=B] + c_s + a[s,r] + w[v,s,r] + e[v,s,r,i]

``c_s`` ~ N(0, run_sd): one per side (a whole cell's run-level move);
``a[s,r]`` ~ N(0, 5%): shared by every variant of that side's round (one
process); ``w`` ~ N(0, sigma_v): each variant's own process-to-process noise,
sigma_v log-normal across variants (median 7%, 90th percentile 17%, as
measured); ``e``: one-sided 1% sample noise, and a x3 outlier with
probability 2%; 4 samples a process. Each process's value is the log of its
10th percentile, as in a cell file.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from host_noise import REVIEW, sds

from tfmatrix.analysis.runs.noise_model import noise_model_of, prior
from tfmatrix.analysis.statistics.inference import Contrast, Side
from tfmatrix.analysis.statistics.moderation import Prior, judge


@dataclass(frozen=True)
class Model:
    variants: int = 200
    benchmarks: int = 10
    samples: int = 4
    process_sd: float = 0.05
    run_sd: float = 0.0
    sigma_median: float = REVIEW[0]
    sigma_p90: float = REVIEW[1]
    sample_sd: float = 0.01
    outlier: float = 0.02

    def sigmas(self, rng: np.random.Generator) -> np.ndarray:
        """Each variant's own process-to-process SD (log scale)."""
        return sds(rng, self.variants, self.sigma_median, self.sigma_p90)

    def benchmark_of(self) -> list[int]:
        return [v % self.benchmarks for v in range(self.variants)]


def side(model: Model, rng: np.random.Generator, sigma: np.ndarray, delta: np.ndarray, rounds: int,
         label: str, processes_per_round: int = 1) -> list[Side]:
    """One side's run: a ``Side`` per variant, ``rounds`` units each (processes of a round averaged)."""
    n, m = model.variants, model.samples
    p = rounds * processes_per_round
    c = rng.normal(0.0, model.run_sd) if model.run_sd else 0.0
    a = rng.normal(0.0, model.process_sd, p)
    w = rng.normal(0.0, 1.0, (n, p)) * sigma[:, None]
    e = np.log1p(np.abs(rng.normal(0.0, model.sample_sd, (n, p, m))))
    e += math.log(3.0) * (rng.random((n, p, m)) < model.outlier)
    logs = (np.log(1e-3) + delta[:, None] + c + a[None, :] + w)[:, :, None] + e
    per = np.log(np.quantile(np.exp(logs), 0.10, axis=2))                  # (n, p): log p10 per process
    units = per.reshape(n, rounds, processes_per_round).mean(axis=2)
    keys = tuple(f"{label}#{r}" for r in range(rounds))
    procs = tuple(f"{label}:{r}" for r in range(rounds))
    return [Side(keys, tuple(float(x) for x in units[v]), procs) for v in range(n)]


def compare_runs(model: Model, rng: np.random.Generator, rounds: int, delta: np.ndarray | None = None,
                 sigma: np.ndarray | None = None, normalise: bool = False,
                 priors: Sequence[tuple[Prior | None, Prior | None]] | None = None) -> list[Contrast | None]:
    """Two runs (A, then B with ``delta`` added), compared as ``compare`` does: B/A per variant."""
    sigma = model.sigmas(rng) if sigma is None else sigma
    delta = np.zeros(model.variants) if delta is None else delta
    a = side(model, rng, sigma, np.zeros(model.variants), rounds, "A")
    b = side(model, rng, sigma, delta, rounds, "B")
    families = [0] * model.variants if normalise else None
    out, _ = judge(list(zip(b, a, strict=True)), model.benchmark_of(), families, priors)
    return out


def noise_model_priors(model: Model, rng: np.random.Generator, sigma: np.ndarray, rounds: int = 3,
                       ) -> list[tuple[Prior | None, Prior | None]]:
    """Per variant, both sides' priors from the noise model of a replicated run (``rounds``) of the same variants."""
    replicated = side(model, rng, sigma, np.zeros(model.variants), rounds, "R")
    found = noise_model_of({("c", str(v)): s for v, s in enumerate(replicated)},
                           {("c", str(v)): "all" for v in range(model.variants)})
    return [(prior(found, ("c", str(v))), prior(found, ("c", str(v)))) for v in range(model.variants)]
