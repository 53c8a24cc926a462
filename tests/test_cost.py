"""``scripts/cost.py``: where a variant's time went, its noise by level, and Kalibera & Jones's samples per process."""
from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from report_docs import record
from scripts_loader import load_script

from tfmatrix.analysis.variant import Variant

ROOT = Path(__file__).resolve().parent.parent


cost = load_script("cost")
by_benchmark, levels, spent = cost.by_benchmark, cost.levels, cost.spent


def _variant(per_process: list[list[float]], calls: int = 10, build: float = 2.0, first: float = 1.0,
             warmups: int = 3, wall: float | None = None, name: str = "b.x", i: int = 0) -> Variant:
    rec = record(name, {"i": i, "api": "tf", "mode": "eager"}, per_process=per_process)
    rec["iterations"] = {"per_repeat": [calls] * len(per_process), "repeats": [len(p) for p in per_process],
                         "inner": 1, "warmup_calls": [warmups] * len(per_process)}
    rec["setup"] = {"build_s": [build] * len(per_process), "first_call_s": [first] * len(per_process)}
    rec["wall_s"] = wall
    return Variant.of(rec)


def test_a_variants_time_is_split_into_build_first_call_warm_up_samples_and_the_rest() -> None:
    v = _variant([[0.01] * 4, [0.01] * 4, [0.01] * 4], wall=12.0)
    s = spent(v)
    assert s.build == 6.0 and s.first_call == 3.0
    assert s.samples == pytest.approx(3 * 4 * 0.01 * 10)        # samples x calls a sample
    assert s.warmup == pytest.approx(3 * 3 * 0.01)
    assert s.total == pytest.approx(12.0) and s.other == pytest.approx(12.0 - 9.0 - 1.2 - 0.09)


def _noisy(rng: random.Random, processes: int, samples: int, sd_process: float, sd_sample: float) -> list[list[float]]:
    out = []
    for _ in range(processes):
        state = math.exp(rng.gauss(0, sd_process))
        out.append([1e-3 * state * math.exp(rng.gauss(0, sd_sample)) for _ in range(samples)])
    return out


def test_noisy_samples_and_costly_processes_ask_for_more_samples_a_process() -> None:
    """n* = sqrt(c_process / c_sample * s2_sample / s2_process): a costly process and sample noise well above
    the processes' raise it; cheap processes that differ a lot lower it."""
    rng = random.Random(3)
    costly = [levels(_variant(_noisy(rng, 10, 8, 0.02, 0.10), calls=1, build=3.0, first=2.0, i=i)) for i in range(20)]
    cheap = [levels(_variant(_noisy(rng, 10, 8, 0.10, 0.02), calls=1, build=0.01, first=0.01, name="b.y", i=i))
             for i in range(20)]
    (c,), (k,) = by_benchmark([x for x in costly if x]), by_benchmark([x for x in cheap if x])
    assert c.sd_sample == pytest.approx(0.10, rel=0.25) and k.sd_process == pytest.approx(0.10, rel=0.35)
    assert c.best_samples > 20 and k.best_samples < 3
    assert c.c_process == pytest.approx(5.0, rel=0.05)


def test_one_process_has_no_levels() -> None:
    assert levels(_variant([[0.01] * 4])) is None
