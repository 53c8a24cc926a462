"""The verdicts' acceptance table (docs/measurement.md, "Verdicts"), one function per scenario, each its figures.

Seeded runs of ``verdict_model`` through ``moderation.judge`` and ``multiplicity.gate``, the rule every verdict
uses. ``test_verdict_acceptance.py`` asserts on these figures with few repetitions; ``scripts/bench_verdicts.py``
prints them with more (the numbers docs/measurement.md quotes). ``reps`` is the one thing they choose: the seeds
are the scenarios', so a scenario gives the same figures every time.
"""
from __future__ import annotations

import math

import numpy as np
from verdict_model import Model, compare_runs, noise_model_priors

from tfmatrix.analysis.statistics.inference import Contrast, verdict
from tfmatrix.analysis.statistics.multiplicity import gate

MODEL = Model()
HOMOGENEOUS = Model(sigma_p90=0.07)            # every variant's process SD 7% (the measured median)
GATE = Model(variants=50, benchmarks=5)
ONE_PER_BENCHMARK = list(range(0, 200, 20))


def called(cs: list[Contrast | None]) -> np.ndarray:
    """Which comparisons were called different (either way)."""
    return np.asarray([verdict(c) in ("a", "b") for c in cs])


def _by_decile(hits: list[np.ndarray], deciles: list[np.ndarray]) -> tuple[float, np.ndarray]:
    h, d = np.concatenate(hits), np.concatenate(deciles)
    return float(h.mean()), np.asarray([h[d == k].mean() for k in range(10)])


def aa_rates(rounds: int, normalise: bool, reps: int, seed: int = 1, model: Model = MODEL) -> tuple[float, np.ndarray]:
    """A1/A2, A/A: the share called different overall and per decile of the variants' own noise."""
    rng = np.random.default_rng(seed)
    hits, deciles = [], []
    for _ in range(reps):
        sigma = model.sigmas(rng)
        hits.append(called(compare_runs(model, rng, rounds, sigma=sigma, normalise=normalise)))
        deciles.append(np.argsort(np.argsort(sigma)) * 10 // model.variants)
    return _by_decile(hits, deciles)


def coverage(rounds: int, reps: int, seed: int = 3) -> float:
    """A3: how often the 95% interval covers the true ratio; half the variants unchanged, half 20% slower."""
    rng = np.random.default_rng(seed)
    delta = np.full(MODEL.variants, math.log(1.2))
    delta[::2] = 0.0
    cover = []
    for _ in range(reps):
        for c, d in zip(compare_runs(MODEL, rng, rounds, delta=delta), delta, strict=True):
            assert c is not None
            low, high = c.interval()
            cover.append(low <= math.exp(d) <= high)
    return float(np.mean(cover))


def power(rounds: int, change: float, changed: list[int], reps: int, seed: int, model: Model = HOMOGENEOUS,
          normalise: bool = True) -> float:
    """P1-P3: the share of the ``changed`` variants, ``change`` slower, that are called slower."""
    rng = np.random.default_rng(seed)
    hits: list[bool] = []
    for _ in range(reps):
        delta = np.zeros(model.variants)
        delta[changed] = math.log1p(change)
        cs = compare_runs(model, rng, rounds, delta=delta, normalise=normalise)
        hits += [verdict(cs[i]) == "b" for i in changed]
    return float(np.mean(hits))


def masking(reps: int, least: int) -> dict[int, float]:
    """P3: a 40% slowdown in 2, 20 or 60 of 200 variants at 3 rounds, found; ``reps // k`` runs each (``least``)."""
    out = {}
    for k in (2, 20, 60):
        changed = list(range(0, 200, 200 // k))[:k]
        out[k] = power(3, 0.40, changed, reps=max(least, reps // k), seed=6, model=MODEL)
    return out


def gate_false_alarms(rounds: int, reps: int) -> float:
    """G1: the share of unchanged runs (50 variants) the gate ``slower:10%`` fails."""
    rng = np.random.default_rng(7)
    return float(np.mean([any(c.fails for c in gate(compare_runs(GATE, rng, rounds, normalise=True), 0.10))
                          for _ in range(reps)]))


def gate_power(reps: int) -> tuple[float, float]:
    """G2: one variant of 50 truly 1.3x slower at 3 rounds: the share of runs the gate fails, its median MDE."""
    model = Model(variants=50, benchmarks=5, sigma_p90=0.07)
    rng = np.random.default_rng(8)
    fails, mdes = [], []
    for _ in range(reps):
        delta = np.zeros(model.variants)
        delta[0] = math.log(1.3)
        call = gate(compare_runs(model, rng, 3, delta=delta, normalise=True), 0.10)[0]
        fails.append(call.fails)
        mdes.append(call.mde)
    return float(np.mean(fails)), float(np.median(mdes))


def run_level(reps: int) -> tuple[float, float]:
    """G3: run-level sd 5% a side, no change: the share of runs the gate fails normalised per cell, and the share
    of variants called different as measured (the same runs)."""
    model = Model(variants=50, benchmarks=5, run_sd=0.05)
    rng = np.random.default_rng(9)
    plain, normalised = [], []
    for _ in range(reps):
        sigma = model.sigmas(rng)
        state = rng.bit_generator.state
        plain.append(called(compare_runs(model, rng, 3, sigma=sigma)).mean())
        rng.bit_generator.state = state
        calls = gate(compare_runs(model, rng, 3, sigma=sigma, normalise=True), 0.10)
        normalised.append(any(c.fails for c in calls))
    return float(np.mean(normalised)), float(np.mean(plain))


def one_process() -> list[Contrast | None]:
    """R1: one process a side, no noise model, every variant 40% slower."""
    rng = np.random.default_rng(10)
    return compare_runs(MODEL, rng, 1, delta=np.full(MODEL.variants, math.log(1.4)))


def one_process_with_noise_model(reps: int) -> tuple[float, np.ndarray]:
    """R2: one process a side judged with the noise model of a 3-round run, A/A: as ``aa_rates``."""
    rng = np.random.default_rng(11)
    hits, deciles = [], []
    for _ in range(reps):
        sigma = MODEL.sigmas(rng)
        priors = noise_model_priors(MODEL, rng, sigma)
        hits.append(called(compare_runs(MODEL, rng, 1, sigma=sigma, priors=priors, normalise=True)))
        deciles.append(np.argsort(np.argsort(sigma)) * 10 // MODEL.variants)
    return _by_decile(hits, deciles)
