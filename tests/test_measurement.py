"""Measurement design under synthetic noise: interleaving, pairing, adaptive stopping, the noise floor.

The harness runs against a virtual clock (``harness.timer`` patched): each
fake call advances it by its cost times the host's current slowness, so a
slow phase of the host, a bimodal host or outliers are exact and
deterministic. Each test would fail if the technique it names stopped
working (block sampling, unpaired ratios). The verdicts' statistics are
``test_verdict_acceptance.py``'s; here, what pairing by window does to them.
"""
from __future__ import annotations

import math
import random

import pytest

from suite import harness, stats
from tfmatrix.analysis.statistics.inference import contrast, side_of, verdict
from tfmatrix.analysis.statistics.stats import estimate, same_windows
from tfmatrix.analysis.statistics.words import THIN, UNCLEAR


def per_round(a: list[float], b: list[float]) -> float:
    """The median of the per-round ratios a_i/b_i of two variants sampled in the same rounds."""
    return stats.median([x / y for x, y in zip(a, b, strict=True)])


class Host:
    """A virtual clock and a host whose slowness is a function of (virtual) time."""

    def __init__(self, slowness):
        self.now = 0.0
        self.slowness = slowness

    def timer(self) -> float:
        return self.now

    def work(self, cost: float):
        def call():
            self.now += cost * self.slowness(self.now)
        return call


BUDGET = harness.Budget(warmup=1, repeats=10, min_repeats=3, target_time=0.01, max_number=1000, max_time=100.0)


@pytest.fixture
def step_host(monkeypatch):
    """The host turns 2x slower at t = 0.15 s: a slow phase that starts half-way through."""
    host = Host(lambda t: 1.0 if t < 0.15 else 2.0)
    monkeypatch.setattr(harness, "timer", host.timer)
    return host


@pytest.mark.slow
def test_block_sampling_blames_a_slow_phase_on_one_variant(step_host):
    """The design this replaces: all of A, then all of B. Two identical calls come out 2x apart."""
    a = harness.measure(step_host.work(1e-3), BUDGET)
    b = harness.measure(step_host.work(1e-3), BUDGET)
    assert stats.median(b.samples) / stats.median(a.samples) == pytest.approx(2.0, rel=0.01)


@pytest.mark.slow
def test_interleaved_sampling_spreads_the_slow_phase_and_pairing_cancels_it(step_host):
    sa = harness.Sampler(step_host.work(1e-3), BUDGET)
    sb = harness.Sampler(step_host.work(1e-3), BUDGET)
    rounds = harness.interleave([sa, sb])
    assert rounds == 10 and len(sa.samples) == len(sb.samples) == 10
    # both saw fast and slow rounds: their medians agree far better than block sampling's 2x
    unpaired = stats.median(sb.samples) / stats.median(sa.samples)
    assert 0.9 < unpaired < 1.1
    # round by round, the two sides saw the same host: the paired ratio is exactly 1
    assert per_round(sa.samples, sb.samples) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.slow
def test_interleaving_alternates_direction_so_linear_drift_cancels(monkeypatch):
    """A host slowing down steadily: A then B in even rounds, B then A in odd ones."""
    host = Host(lambda t: 1.0 + 4.0 * t)
    monkeypatch.setattr(harness, "timer", host.timer)
    order: list[int] = []
    sa = harness.Sampler(host.work(1e-3), BUDGET)
    sb = harness.Sampler(host.work(1e-3), BUDGET)
    harness.interleave([sa, sb], before=order.append)
    assert order[:6] == [0, 1, 1, 0, 0, 1]
    assert per_round(sa.samples, sb.samples) == pytest.approx(1.0, abs=0.03)


def _bimodal_rounds(n: int, seed: int) -> list[float]:
    """Host slowness per round: fast (1.0) or slow (1.8) states, plus a 5x outlier now and then."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        d = 1.0 if rnd.random() < 0.5 else 1.8
        if rnd.random() < 0.05:
            d *= 5.0
        out.append(d * (1 + rnd.uniform(-0.01, 0.01)))
    return out


def test_pairing_recovers_a_ratio_that_a_bimodal_host_hides():
    """B is truly 2x slower than A. Sampled in the same rounds, the paired ratio finds 2.0 with a tight
    interval; sampled in different host states (block design), the unpaired ratio is off by the state."""
    host = _bimodal_rounds(40, seed=3)
    a = [1e-3 * d for d in host]
    b = [2e-3 * d for d in host]
    assert per_round(b, a) == pytest.approx(2.0, rel=0.01)
    # four processes of window-mates (10 rounds each): the verdict pairs them process by process
    keys = [f"w{i}" for i in range(4)]
    c = contrast(side_of([b[i::4] for i in range(4)], keys), side_of([a[i::4] for i in range(4)], keys))
    assert c is not None and c.paired and c.ratio == pytest.approx(2.0, rel=0.01) and verdict(c) == "b"
    # unpaired, B happened to be measured while the host was slow and A while it was fast
    slow_b = [2e-3 * 1.8 * (1 + 0.001 * i) for i in range(20)]
    fast_a = [1e-3 * (1 + 0.001 * i) for i in range(20)]
    assert estimate(slow_b) / estimate(fast_a) == pytest.approx(3.6, rel=0.02)


def test_outliers_do_not_move_the_paired_median():
    host = [1.0] * 30
    host[3] = host[17] = host[25] = 20.0           # three rounds hit by something else on the host
    a = [1e-3 * d for d in host]
    b = [1e-3 * d * (1.5 if i in (3, 17) else 1.0) for i, d in enumerate(host)]   # noise inside the outliers
    assert per_round(b, a) == pytest.approx(1.0)


def test_processes_in_different_states_widen_the_paired_interval():
    """Pairing cancels a slow host, not a process that is slow for one side only: the unit is the process, so two
    processes whose ratios differ by 20% leave a 21% mean ratio unclear (one degree of freedom), while two that
    agree make 10% clear."""
    keys = ["w1", "w2"]
    ci = contrast(side_of([[1.1e-3] * 12, [1.32e-3] * 12], keys), side_of([[1e-3] * 12, [1e-3] * 12], keys))
    assert ci is not None and ci.paired and ci.d == 1
    assert ci.ratio == pytest.approx(math.sqrt(1.1 * 1.32)) and verdict(ci) == UNCLEAR
    agree = contrast(side_of([[1.1e-3] * 12, [1.1e-3] * 12], keys), side_of([[1e-3] * 12, [1e-3] * 12], keys))
    assert agree is not None and verdict(agree) == "b"      # B7: identical processes still have a floor (0.5%)
    assert agree.interval()[0] < agree.ratio < agree.interval()[1]


def test_one_process_is_not_enough_replication_however_many_samples_it_took():
    """The samples of one process share its state: 20 of them are not 20 measurements of the variant."""
    a = [[1.04e-3 * (1 + 0.001 * i) for i in range(20)]]
    b = [[1.00e-3 * (1 + 0.001 * i) for i in range(20)]]
    c = contrast(side_of(a, label="a"), side_of(b, label="b"))
    assert c is not None and not c.replicated and verdict(c) == THIN


def test_same_windows_pairs_only_records_sampled_together():
    assert same_windows(["1:0", "2:0"], ["1:0", "2:0"])
    assert not same_windows(["1:0"], ["1:1"])
    assert not same_windows([], [])
    assert not same_windows([None], [None])
    assert not same_windows(["1:0"], ["1:0", "2:0"])


@pytest.mark.slow
def test_adaptive_stopping_spends_samples_where_the_noise_is(monkeypatch):
    """Quiet: stops as soon as the median's interval is within 2%. Noisy: goes on to max_repeats."""
    budget = harness.Budget(warmup=1, repeats=6, min_repeats=3, target_time=0.01, max_number=1000, max_time=100.0,
                            max_repeats=40, ci=0.02)
    quiet = Host(lambda t: 1.0)
    monkeypatch.setattr(harness, "timer", quiet.timer)
    s = harness.Sampler(quiet.work(1e-3), budget)
    while not s.done():
        s.sample()
    assert s.stopped == "ci" and len(s.samples) == 6

    rnd = random.Random(7)
    noisy = Host(lambda t: rnd.choice((1.0, 1.8)))
    monkeypatch.setattr(harness, "timer", noisy.timer)
    s = harness.Sampler(noisy.work(1e-3), budget)
    while not s.done():
        s.sample()
    assert s.stopped == "max_repeats" and len(s.samples) == 40


@pytest.mark.slow
def test_adaptive_stopping_respects_the_time_budget(monkeypatch):
    budget = harness.Budget(warmup=1, repeats=3, min_repeats=3, target_time=0.01, max_number=1000, max_time=0.2,
                            max_repeats=100, ci=0.001)
    rnd = random.Random(1)
    host = Host(lambda t: rnd.choice((1.0, 2.0)))
    monkeypatch.setattr(harness, "timer", host.timer)
    s = harness.Sampler(host.work(1e-3), budget)
    while not s.done():
        s.sample()
    assert s.stopped == "max_time"
    assert s.spent <= 0.2 + 1e-9 and len(s.samples) < 100


def test_median_interval_covers_the_time_about_95_percent_of_the_time():
    rnd = random.Random(11)
    hits = 0
    trials = 2000
    for _ in range(trials):
        xs = [rnd.lognormvariate(0, 0.3) for _ in range(15)]    # skewed, like timings; true median 1.0
        lo, hi = stats.median_ci(xs)
        hits += lo <= 1.0 <= hi
    assert 0.93 <= hits / trials <= 0.99
    lo, hi = stats.median_ci([1.0, 2.0, 3.0])
    assert lo != lo and hi != hi     # NaN: too few samples for a 95% interval
