"""A run's time budget (``--budget``): round 1 whole, later rounds (or their open lines) only where they fit.

The arithmetic on made-up costs, then the interleaved schedule with the fake
runner of test_interleaved.py, whose slices report how long they took (the
costs a budget plans with) while taking no real time: the budget's clock is
the real one, so what fits is decided by the reported seconds alone.
"""
from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from test_interleaved import SLICES, FakeCell, FakeRunner

from tfmatrix.analysis.stopping import LOOK_ALPHA, MAX_ROUNDS, OPEN, SAME, LineState
from tfmatrix.cli import main
from tfmatrix.execution import dispatch as execution
from tfmatrix.execution.budget import REPORT_RESERVE_S, SliceCosts, affordable, parse_budget
from tfmatrix.execution.request import RunRequest
from tfmatrix.runners.base import SuiteExit

V1, V2 = SLICES["eager:tf"][0], SLICES["graph:tf"][0]
SECONDS = {"eager:tf": 10.0, "graph:tf": 40.0}        # what each slice says it took (its process and variant)


def _line(claim: str, a: tuple[str, str], b: tuple[str, str], state: str = OPEN) -> LineState:
    return LineState(claim, a[0] if a[0] == b[0] else f"{a[0]} vs {b[0]}", a, b, "unclear", state, 1.0)


@pytest.mark.parametrize(("text", "seconds"), [("8m", 480), ("480s", 480), ("480", 480), ("1h", 3600),
                                               ("1.5m", 90), ("1s", 1)])
def test_a_budget_is_read_in_seconds_minutes_or_hours(text: str, seconds: float) -> None:
    assert parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["8 minutes", "0", "0.5s", "-5m", "m", "30d"])
def test_a_budget_that_is_no_duration_or_too_short_is_refused_with_the_fix(text: str) -> None:
    with pytest.raises(ValueError, match="write seconds|out of range"):
        parse_budget(text)


def test_a_bad_budget_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--budget", "8 minutes"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--budget" in err[0] and "8m, 1h" in err[0]


class Table:
    """Costs from a table: each cell's slices cost their fixed part once plus their variants."""

    def __init__(self, overhead: float, each: Mapping[str, float]) -> None:
        slices = {"s1": ["x", "y"], "s2": ["z"]}
        self.costs = SliceCosts({"a": slices, "b": slices}, {"a": {"s1": overhead, "s2": overhead},
                                                              "b": {"s1": overhead, "s2": overhead}},
                                {"a": dict(each), "b": dict(each)})

    def of(self, wanted: Mapping[str, set[str]]) -> float:
        return self.costs.of(wanted)


def test_the_round_keeps_the_cheapest_open_lines_that_fit_and_never_a_decided_one() -> None:
    costs = Table(5.0, {"x": 1.0, "y": 2.0, "z": 30.0})
    cheap = _line("c1", ("a", "x"), ("b", "x"))            # 2 x (5 + 1) = 12
    shares = _line("c2", ("a", "x"), ("a", "y"))           # 5 + 1 + 2 = 8: first, then c1 adds b's 6
    dear = _line("c3", ("a", "z"), ("b", "z"))             # 2 x (5 + 30) = 70
    done = _line("c4", ("a", "y"), ("b", "y"), SAME)
    fit = affordable([dear, cheap, shares, done], costs, 20.0)
    assert [s.claim for s in fit.kept] == ["c2", "c1"] and [s.claim for s in fit.left_out] == ["c3"]
    assert fit.cost_s == pytest.approx(14.0) and fit.alone_s[dear.key] == pytest.approx(70.0)
    assert "budget left 0:20" in fit.why(2, dear) and "~1:10" in fit.why(2, dear)
    everything = affordable([dear, cheap, shares, done], costs, 1000.0)
    assert not everything.left_out and everything.cost_s == pytest.approx(84.0)
    nothing = affordable([dear, cheap], costs, 5.0)
    assert not nothing.kept and len(nothing.left_out) == 2


def test_a_variant_not_timed_yet_costs_its_cells_mean() -> None:
    costs = SliceCosts({"a": {"s1": ["x", "y"]}}, {"a": {"s1": 2.0}}, {"a": {"x": 4.0}})
    assert costs.of({"a": {"y"}}) == pytest.approx(6.0)
    assert costs.of({"b": {"x"}}) == 0.0


class TimedRunner(FakeRunner):
    """The fake runner whose slices say they took ``SECONDS`` (half in their variant, half in the process)."""

    def prepare(self, job: Any, log: Any, progress: Any) -> Any:
        env = super().prepare(job, log, progress)
        real = env.run_suite

        def run_suite(args: list[str], *rest: Any, **kw: Any) -> SuiteExit:
            done = real(args, *rest, **kw)
            opts = dict(zip(args[1::2], args[2::2], strict=False))
            key = opts.get("--slice")
            if args[0] == "plan" or key is None or done.returncode != 0:
                return done
            out = Path(opts["--out"])
            doc = json.loads(out.read_text())
            for rec in doc["records"]:
                rec["wall_s"] = SECONDS[key] / 2
            out.write_text(json.dumps(doc))
            return SuiteExit(0, seconds=SECONDS[key])
        env.run_suite = run_suite
        return env


def _run(tmp_path: Path, request: RunRequest) -> tuple[TimedRunner, io.StringIO]:
    runner, said = TimedRunner(tmp_path), io.StringIO()
    outcomes = execution.execute([FakeCell("a"), FakeCell("b")], runner, request, tmp_path / "reports",
                                 console=Console(file=said, width=200))
    assert [o.status for o in outcomes] == ["ok", "ok"]
    return runner, said


def test_a_fixed_round_run_stops_before_a_round_that_does_not_fit_and_each_cell_file_says_so(
        tmp_path: Path) -> None:
    # a round: 2 cells x (10 + 40) s = 100 s; 150 s left after the reserve holds round 1 only (counted from its
    # reported seconds, nothing real)
    runner, said = _run(tmp_path, RunRequest(rounds=3, seed=3, budget_s=REPORT_RESERVE_S + 90.0))
    assert {r for _, _, r in runner.calls} == {1}
    assert "round 2 (~1:40) does not fit" in said.getvalue() and "stopped after round 1" in said.getvalue()
    doc = json.loads((tmp_path / "reports" / "cells" / "a.json").read_text())
    assert doc["results"]["config"]["schedule"]["budget"] == {"seconds": REPORT_RESERVE_S + 90.0, "rounds": 1}
    assert any("left room for 1 of the 3 rounds" in w for w in doc["results"]["warnings"])
    roomy, _ = _run(tmp_path / "roomy", RunRequest(rounds=3, seed=3, budget_s=3600.0))
    assert {r for _, _, r in roomy.calls} == {1, 2, 3}


def test_a_sequential_run_measures_again_the_open_lines_that_fit_and_says_why_the_others_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both lines open at every look; the cheap one (eager:tf, 2 x 10 s) fits what is left, the dear one (graph:tf
    in cell a, 40 s) does not: round 2 runs the cheap one's slices only, and the dear one stops with the budget
    as its why, never measured again."""
    def look(live: Any, head: Any, history: Any, alpha: float = LOOK_ALPHA, claims: Any = None,
             kept: Any = ()) -> list[LineState]:
        return [_line("cheap", ("a", V1), ("b", V1)), _line("dear", ("a", V2), ("a", V2))]

    monkeypatch.setattr("tfmatrix.execution.looks.look", look)
    runner, said = _run(tmp_path, RunRequest(rounds=MAX_ROUNDS, sequential=True, seed=5,
                                             budget_s=REPORT_RESERVE_S + 50.0))
    later = sorted({(c, k) for c, k, r in runner.calls if r > 1})
    assert later == [("a", "eager:tf"), ("b", "eager:tf")]
    assert "round 2 measures 1 of 2 open lines" in said.getvalue()
    doc = json.loads((tmp_path / "reports" / "cells" / "a.json").read_text())
    seq = doc["results"]["config"]["schedule"]["sequential"]
    assert seq["budget_s"] == REPORT_RESERVE_S + 50.0
    lines = {row[0]: row[4:] for row in seq["lines"]}
    assert lines["dear"][0] == 1 and "the budget left" in lines["dear"][1] and "after round 1" in lines["dear"][1]
    assert lines["cheap"][0] > 1 and "budget" not in lines["cheap"][1]


def test_the_whole_cell_schedule_stops_before_a_round_longer_than_what_is_left(tmp_path: Path) -> None:
    """``--schedule sequential`` (whole cells, round after round): a round costs what the last one took; a budget
    of one second leaves nothing after round 1 (30 s are kept for the report), so round 2 never starts."""
    runner, said = TimedRunner(tmp_path), io.StringIO()
    outcomes = execution.execute([FakeCell("a"), FakeCell("b")], runner,
                                 RunRequest(rounds=3, schedule="sequential", seed=3, budget_s=1.0),
                                 tmp_path / "reports", console=Console(file=said, width=200))
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert len(runner.calls) == 2 and "stopped after round 1" in said.getvalue()
    roomy = TimedRunner(tmp_path / "roomy")
    execution.execute([FakeCell("a"), FakeCell("b")], roomy, RunRequest(rounds=3, schedule="sequential", seed=3,
                                                                         budget_s=3600.0),
                      tmp_path / "roomy" / "reports", console=Console(file=io.StringIO()))
    assert len(roomy.calls) == 6
