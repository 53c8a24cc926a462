"""A sequential run's series lines (``analysis.series.since``): the variants no claim names, against their kept runs.

Synthetic sides and kept means (log times, 2% a round): a variant 20%
slower is decided, an unchanged one shown the same, a whole cell 50% slower (the host's day) moves nothing, and
the first runs of a series take their rounds.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from tfmatrix.analysis.runs.noise_model import CONTROL
from tfmatrix.analysis.series.since import FIRST_ROUNDS, SERIES, series_states
from tfmatrix.analysis.statistics.inference import Side
from tfmatrix.analysis.stopping import DECIDED, FIRST, LOOK_ALPHA, OPEN, SAME

CASES = [f"case{i}" for i in range(8)]


def _side(rng: np.random.Generator, level: float, rounds: int, sd: float = 0.02) -> Side:
    return Side(tuple(f"r#{i}" for i in range(rounds)), tuple(level + rng.normal(0, sd, rounds)))


def _kept(rng: np.random.Generator, runs: int, sd: float = 0.02, rounds: int = 3) -> list[dict]:
    """Kept runs of cell c: each case's run mean (its level 0 plus the run's wander) and that mean's variance."""
    return [{("c", case): (float(rng.normal(0, sd)), sd ** 2 / rounds) for case in CASES} for _ in range(runs)]


def _states(sides: dict, kept: list[dict], claimed: set = frozenset(), lent: dict | None = None) -> dict:
    return {s.a: s for s in series_states(sides, kept, claimed, lent or {}, LOOK_ALPHA)}


def test_a_variant_20_percent_slower_is_decided_and_the_rest_are_the_same() -> None:
    rng = np.random.default_rng(4)
    sides = {("c", case): _side(rng, math.log(1.2) if case == "case3" else 0.0, 4) for case in CASES}
    got = _states(sides, _kept(rng, 4))
    assert got[("c", "case3")].state == DECIDED and got[("c", "case3")].ratio == pytest.approx(1.2, rel=0.05)
    assert {got[("c", c)].state for c in CASES if c != "case3"} == {SAME}
    assert {s.claim for s in got.values()} == {SERIES} and all(s.a == s.b for s in got.values())


def test_a_host_50_percent_slower_all_over_moves_no_line() -> None:
    """The whole cell's move is the series' question for the cell (judged with its control there), not each
    variant's: none is decided, and they are read as the same (the cell's move out), not 50% slower."""
    rng = np.random.default_rng(5)
    sides = {("c", case): _side(rng, math.log(1.5), 4) for case in CASES}
    got = _states(sides, _kept(rng, 4))
    assert DECIDED not in {s.state for s in got.values()}
    assert sum(s.state == SAME for s in got.values()) >= len(CASES) - 2
    assert all(abs(math.log(s.ratio)) < 0.05 for s in got.values())


def test_a_noisy_variant_stays_open_until_its_rounds_tell() -> None:
    rng = np.random.default_rng(6)
    sides = {("c", case): _side(rng, 0.0, 2) for case in CASES}
    sides[("c", "case0")] = Side(("r#0", "r#1"), (0.08, -0.08))            # 8% either way: neither side nor same
    got = _states(sides, _kept(rng, 4))
    assert got[("c", "case0")].state == OPEN


def test_the_first_runs_of_a_series_take_their_rounds() -> None:
    rng = np.random.default_rng(7)
    for runs in (0, 1):                     # no kept run, or one: no wander to judge a change against
        for rounds in range(1, FIRST_ROUNDS + 1):
            sides = {("c", case): _side(rng, 0.0, rounds) for case in CASES}
            got = _states(sides, _kept(rng, runs))
            assert {s.state for s in got.values()} == {FIRST if rounds >= FIRST_ROUNDS else OPEN}, (runs, rounds)
            assert all(math.isnan(s.ratio) for s in got.values())


def test_claimed_variants_and_the_control_are_no_series_line_and_one_round_borrows_its_noise() -> None:
    rng = np.random.default_rng(8)
    sides = {("c", case): _side(rng, 0.0, 1) for case in CASES}
    sides[("c", CONTROL)] = _side(rng, 0.0, 1)
    lent = {("c", case): (0.02 ** 2, 20.0) for case in CASES}
    got = _states(sides, _kept(rng, 4), claimed={("c", "case0")}, lent=lent)
    assert set(got) == {("c", c) for c in CASES[1:]}
    assert all(s.state != FIRST and not math.isnan(s.ratio) for s in got.values())
    # without the lent variance one round cannot be judged: the line waits for its rounds
    assert {s.state for s in _states(sides, _kept(rng, 4)).values()} == {OPEN}
