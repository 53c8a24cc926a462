"""The verdicts' figures: the statistics review's acceptance table, with more repetitions than the tests.

Seeded runs with known variance components (``tests/verdict_model.py``: the
review's generator) go through ``analysis.statistics.moderation.judge``, the rule every
verdict uses, and ``analysis.statistics.multiplicity.gate``. Deterministic (fixed seeds):
the numbers in docs/measurement.md ("Verdicts") come from this script.

    python scripts/bench_verdicts.py            # every row, about 3 minutes on 2 cores
    python scripts/bench_verdicts.py A1 G2      # some rows
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from verdict_model import Model, compare_runs, noise_model_priors  # noqa: E402

from tfmatrix.analysis.statistics.inference import verdict  # noqa: E402
from tfmatrix.analysis.statistics.multiplicity import gate  # noqa: E402

MODEL = Model()
HOMOGENEOUS = Model(sigma_p90=0.07)


def aa(rounds: int, normalise: bool, reps: int = 100, seed: int = 1) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    hits, deciles = [], []
    for _ in range(reps):
        sigma = MODEL.sigmas(rng)
        cs = compare_runs(MODEL, rng, rounds, sigma=sigma, normalise=normalise)
        hits.append([verdict(c) in ("a", "b") for c in cs])
        deciles.append(np.argsort(np.argsort(sigma)) * 10 // MODEL.variants)
    h, d = np.concatenate(hits), np.concatenate(deciles)
    return float(h.mean()), max(float(h[d == k].mean()) for k in range(10))


def power(rounds: int, change: float, changed: list[int], reps: int, seed: int, model: Model = HOMOGENEOUS) -> float:
    rng = np.random.default_rng(seed)
    hits: list[bool] = []
    for _ in range(reps):
        delta = np.zeros(model.variants)
        delta[changed] = math.log1p(change)
        cs = compare_runs(model, rng, rounds, delta=delta, normalise=True)
        hits += [verdict(cs[i]) == "b" for i in changed]
    return float(np.mean(hits))


def row(name: str, setting: str, goal: str, value: str) -> None:
    print(f"| {name} | {setting} | {goal} | {value} |", flush=True)


def a1_a2() -> None:
    for normalise in (False, True):
        for r in (2, 3, 5, 10):
            overall, worst = aa(r, normalise)
            row("A1/A2", f"A/A, R={r}, {'per-cell normalised' if normalise else 'as measured'}",
                "2-6%; every noise decile <= 8%", f"{overall:.1%}; worst decile {worst:.1%}")


def a3() -> None:
    for r in (3, 5, 10):
        rng = np.random.default_rng(3)
        delta = np.full(MODEL.variants, math.log(1.2))
        delta[::2] = 0.0
        cover = []
        for _ in range(60):
            for c, d in zip(compare_runs(MODEL, rng, r, delta=delta), delta, strict=True):
                low, high = c.interval()  # type: ignore[union-attr]
                cover.append(low <= math.exp(d) <= high)
        row("A3", f"coverage of the 95% interval, R={r}", "93-97%", f"{np.mean(cover):.1%}")


def p1() -> None:
    for r, change in ((3, 0.20), (10, 0.10)):
        row("P1", f"one variant per benchmark {change:.0%} slower, sigma 7%, R={r}", ">= 80%",
            f"{power(r, change, list(range(0, 200, 20)), 150, 4):.1%}")


def p2() -> None:
    found = [power(r, 0.05, list(range(0, 200, 4)), 30, 5, MODEL) for r in (3, 10, 30)]
    row("P2", "5% slower, R = 3 / 10 / 30", "non-decreasing", " / ".join(f"{x:.0%}" for x in found))


def p3() -> None:
    out = []
    for k in (2, 20, 60):
        changed = list(range(0, 200, 200 // k))[:k]
        out.append(power(3, 0.40, changed, max(10, 600 // k), 6, MODEL))
    row("P3", "40% slower in 1% / 10% / 30% of variants, R=3", "within 5 points", " / ".join(f"{x:.1%}" for x in out))


def g1_g2_g3() -> None:
    gate_model = Model(variants=50, benchmarks=5)
    for r in (3, 10):
        rng = np.random.default_rng(7)
        fails = [any(c.fails for c in gate(compare_runs(gate_model, rng, r, normalise=True), 0.10)) for _ in range(400)]
        row("G1", f"gate slower:10%, 50 variants, A/A, R={r}", "<= 5% of runs", f"{np.mean(fails):.1%}")
    model = Model(variants=50, benchmarks=5, sigma_p90=0.07)
    rng = np.random.default_rng(8)
    fails, mdes = [], []
    for _ in range(400):
        delta = np.zeros(model.variants)
        delta[0] = math.log(1.3)
        call = gate(compare_runs(model, rng, 3, delta=delta, normalise=True), 0.10)[0]
        fails.append(call.fails)
        mdes.append(call.mde)
    row("G2", "one variant 1.3x slower, sigma 7%, R=3", ">= 75%; printed MDE <= 35%",
        f"{np.mean(fails):.1%}; MDE {np.median(mdes):.0%}")
    run_model = Model(variants=50, benchmarks=5, run_sd=0.05)
    rng = np.random.default_rng(9)
    plain, normalised = [], []
    for _ in range(400):
        sigma = run_model.sigmas(rng)
        state = rng.bit_generator.state
        plain.append(np.mean([verdict(c) in ("a", "b") for c in compare_runs(run_model, rng, 3, sigma=sigma)]))
        rng.bit_generator.state = state
        cs = compare_runs(run_model, rng, 3, sigma=sigma, normalise=True)
        normalised.append(any(c.fails for c in gate(cs, 0.10)))
    row("G3", "run-level sd 5% a side, A/A, R=3", "G1 holds when normalised per cell",
        f"gate fails {np.mean(normalised):.1%} of runs normalised; as measured {np.mean(plain):.1%} of variants "
        "called different")


def r1_r2() -> None:
    rng = np.random.default_rng(10)
    cs = compare_runs(MODEL, rng, 1, delta=np.full(MODEL.variants, math.log(1.4)))
    row("R1", "R=1, no noise model, every variant 40% slower", "no verdicts",
        f"{sum(verdict(c) in ('a', 'b') for c in cs)} verdicts of {len(cs)}")
    rng = np.random.default_rng(11)
    hits, deciles = [], []
    for _ in range(60):
        sigma = MODEL.sigmas(rng)
        priors = noise_model_priors(MODEL, rng, sigma)
        cs = compare_runs(MODEL, rng, 1, sigma=sigma, priors=priors, normalise=True)
        hits.append([verdict(c) in ("a", "b") for c in cs])
        deciles.append(np.argsort(np.argsort(sigma)) * 10 // MODEL.variants)
    h, d = np.concatenate(hits), np.concatenate(deciles)
    row("R2", "R=1 with the noise model of a 3-round run, A/A", "A1 and A2 hold",
        f"{h.mean():.1%}; worst decile {max(float(h[d == k].mean()) for k in range(10)):.1%}")


ROWS = {"A1": a1_a2, "A3": a3, "P1": p1, "P2": p2, "P3": p3, "G1": g1_g2_g3, "R1": r1_r2}

if __name__ == "__main__":
    print("| # | setting | goal | measured |\n|---|---|---|---|")
    for name in sys.argv[1:] or ROWS:
        ROWS[name]()
