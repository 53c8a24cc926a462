"""The crossover sweep on a seeded simulation of this host's noise: a known crossover, few sizes, an honest bracket.

The simulated pair is one environment in two settings whose times follow
time = fixed + per-unit cost x n^3 (a matmul), with a known crossing n0. Each
round draws both settings' times with the between-process noise measured on
this 2-core VM (``../shared/probes/``: processes differ by 10-30%; 8% a side
log-SD here, so a round's ratio wanders by about 11%), pairs them, and reads
the ratio's 95% Student t interval: the verdict the Devices section gives.
"""
from __future__ import annotations

import math
import random

import pytest
from scipy import stats

from tfmatrix.analysis.devices import SizePoint
from tfmatrix.analysis.sweep import WORK, Line, Probe, crossing, predict, sweep

SIDE_SD = 0.08        # log-SD of one process's time, each setting


def _verdict(low: float, high: float) -> str:
    return "faster" if high < 1 else "slower" if low > 1 else "no clear difference"


def simulated(cpu: Line, gpu: Line, rng: random.Random, power: float = 3.0):
    """A ``Measure`` of the pair: ``rounds`` paired rounds at a size, times with the host's noise."""
    def measure(size: float, rounds: int) -> Probe:
        w = size ** power
        ta, tb = cpu.fixed + cpu.per_unit * w, gpu.fixed + gpu.per_unit * w
        la = [math.log(ta) + rng.gauss(0, SIDE_SD) for _ in range(rounds)]
        lb = [math.log(tb) + rng.gauss(0, SIDE_SD) for _ in range(rounds)]
        d = [y - x for x, y in zip(la, lb, strict=True)]
        mean = sum(d) / rounds
        if rounds < 2:
            point = SizePoint(size, math.exp(mean), math.nan, math.nan, "", "not enough replication")
        else:
            sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (rounds - 1))
            half = float(stats.t.ppf(0.975, rounds - 1)) * sd / math.sqrt(rounds)
            low, high = math.exp(mean - half), math.exp(mean + half)
            point = SizePoint(size, math.exp(mean), low, high, "", _verdict(low, high))
        return Probe(size, math.exp(sum(la) / rounds), math.exp(sum(lb) / rounds), point, rounds)
    return measure


def _pair(n0: float) -> tuple[Line, Line]:
    """A CPU and a GPU line crossing at n0: the GPU 2 ms to start, 50x cheaper per multiply-add."""
    gpu_fixed, cpu_fixed = 2e-3, 2e-5
    cpu_unit = (gpu_fixed - cpu_fixed) / n0 ** 3 / (1 - 1 / 50)
    return Line(cpu_fixed, cpu_unit), Line(gpu_fixed, cpu_unit / 50)


def test_two_sizes_fix_each_line_and_predict_where_they_cross() -> None:
    cpu, gpu = _pair(300)
    w = WORK["n"]
    a = Line.through(w.of(64), cpu.fixed + cpu.per_unit * w.of(64), w.of(2048), cpu.fixed + cpu.per_unit * w.of(2048))
    assert a.fixed == pytest.approx(cpu.fixed) and a.per_unit == pytest.approx(cpu.per_unit)
    assert w.size(predict(cpu, gpu) or 0) == pytest.approx(300)
    assert predict(gpu, cpu) is None                   # the other way round: A is never the cheaper to start


@pytest.mark.parametrize("n0", [90, 300, 1100])
def test_the_bracket_holds_the_known_crossover_in_95_percent_of_trials_with_six_sizes(n0: float) -> None:
    cpu, gpu = _pair(n0)
    trials, inside, within_2 = 200, 0, 0
    for seed in range(trials):
        found = sweep(simulated(cpu, gpu, random.Random(seed)), 16, 4096, WORK["n"])
        assert len(found.probes) <= 6 and found.sizes == sorted(set(found.sizes))
        assert found.bracket is not None, found.text()
        low, high = found.bracket
        inside += low <= n0 <= high
        within_2 += high / low <= 2
    assert inside >= 0.95 * trials, (inside, trials)
    assert within_2 >= 0.9 * trials, (within_2, trials)


def test_a_model_that_is_not_a_line_still_brackets_honestly() -> None:
    """Times that grow as n^2.6 (cache effects): the prediction misses, the verification and bisection recover."""
    cpu, gpu = _pair(300)
    cpu, gpu = Line(cpu.fixed, cpu.per_unit * 300 ** 0.4), Line(gpu.fixed, gpu.per_unit * 300 ** 0.4)  # same n0
    inside = 0
    for seed in range(200):
        found = sweep(simulated(cpu, gpu, random.Random(seed), power=2.6), 16, 4096, WORK["n"])
        assert found.bracket is not None and len(found.probes) <= 6
        inside += found.bracket[0] <= 300 <= found.bracket[1]
    assert inside >= 190


def test_no_crossover_within_the_sizes_says_why() -> None:
    cpu, gpu = _pair(10000)                            # the GPU pays only beyond the largest size swept
    found = sweep(simulated(cpu, gpu, random.Random(1)), 16, 4096, WORK["n"])
    assert found.bracket is None and "not shown faster at the largest measured size, 4096 (slower)" in found.why
    assert found.text().startswith("no crossover shown (matrix size n (n^3 multiply-adds)): B is not shown faster")
    cpu, gpu = _pair(4)                                # faster from below the smallest size
    found = sweep(simulated(cpu, gpu, random.Random(2)), 16, 4096, WORK["n"])
    assert found.bracket is None and "the crossover lies below it" in found.why and len(found.probes) == 2


def test_crossing_needs_a_decided_slower_size_below_and_faster_sizes_above() -> None:
    def probe(size: float, verdict: str) -> Probe:
        return Probe(size, 1.0, 1.0, SizePoint(size, 1.0, 0.9, 1.1, "", verdict), 3)

    assert crossing([probe(64, "slower"), probe(128, "no clear difference"), probe(256, "faster")])[0] == (64, 256)
    same = crossing([probe(64, "no clear difference"), probe(256, "faster")])       # the same, then it pays
    assert same == ((64, 256), "the same from the smallest size, 64, up to 64")
    assert "open" in crossing([probe(64, "not enough replication"), probe(256, "faster")])[1]
    assert crossing([probe(64, "slower"), probe(256, "faster"), probe(512, "no clear difference")])[0] is None
    assert "one measured size" in crossing([probe(64, "faster")])[1]


def test_a_gentle_crossing_on_the_batch_axis() -> None:
    """Work linear in the batch: the ratio moves slowly near the crossing (26.7), so rounds are added there."""
    cpu, gpu = Line(1e-3, 2e-4), Line(5e-3, 5e-5)
    n0 = (gpu.fixed - cpu.fixed) / (cpu.per_unit - gpu.per_unit)
    inside = within_2 = 0
    for seed in range(200):
        found = sweep(simulated(cpu, gpu, random.Random(seed), power=1.0), 1, 1024, WORK["batch"])
        assert found.bracket is not None and len(found.probes) <= 6
        inside += found.bracket[0] <= n0 <= found.bracket[1]
        within_2 += found.bracket[1] / found.bracket[0] <= 2
    assert inside >= 190 and within_2 >= 180
    found = sweep(simulated(cpu, gpu, random.Random(3), power=1.0), 1, 1024, WORK["batch"])
    assert found.text() == "GPU starts to pay between 20 and 40 (batch size; predicted 28; 4 sizes, 2-8 rounds each)"


def test_a_threshold_the_same_then_faster_is_answered_where_it_starts_to_pay() -> None:
    """NumPy's BLAS runs one thread below a size (the same in both settings), then pays with two: the line model
    misses such a step, the verdicts still find it; a size shown within 5% of 1 gets no more rounds."""
    def measure(size: float, rounds: int) -> Probe:
        ratio = 1.0 if size < 120 else 0.6
        low, high = (0.99, 1.01) if ratio == 1.0 else (0.57, 0.63)
        verdict = "no clear difference" if ratio == 1.0 else "faster"
        return Probe(size, 1e-3, 1e-3 * ratio, SizePoint(size, ratio, low, high, "", verdict), rounds)

    found = sweep(measure, 16, 1024, WORK["n"])
    assert found.pays is not None and found.pays[0] < 120 <= found.pays[1] and found.pays[1] / found.pays[0] <= 2
    assert found.bracket == found.pays and all(p.rounds == 2 for p in found.probes)     # the same at once: 2 rounds
    assert "the same at 16" in found.text() and len(found.probes) <= 6
