"""Rounds across cells (every cell once, then again, pooled) and the previous run kept for the report."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from report_docs import noisy, record, results_doc

from suite.schema import validate
from tfmatrix.execution import dispatch as execution
from tfmatrix.execution.request import RunRequest
from tfmatrix.results.documents import SuiteResults
from tfmatrix.results.rounds import merge_results
from tfmatrix.results.store import CellOutcome, load_cell
from tfmatrix.runners.base import Runner

PARAMS = {"model": "tiny", "path": "predict", "stage": "compiled", "api": "tf.keras", "mode": "eager"}


def _results(center: float, seed: int, status: str = "ok") -> SuiteResults:
    rec = record("inference.tiny", PARAMS, per_process=[noisy(center, n=6, seed=seed)], status=status,
                 reason=None if status == "ok" else "broken")
    rec["schedule"] = {"windows": [f"{seed}:0"], "rounds": [6], "stopped": ["repeats"]}
    return SuiteResults.from_json(results_doc([rec], tf="2.15.1", cell="tf2.15-cpu"), Path("tf2.15-cpu.json"))


def test_merge_pools_rounds_as_processes_and_recomputes_statistics():
    merged = merge_results(_results(1e-3, 1), _results(1.3e-3, 2))
    assert validate(merged.to_json()) == []
    (rec,) = merged.records
    assert len(rec["per_process"]) == 2 and len(rec["samples"]) == 12
    assert rec["schedule"]["windows"] == ["1:0", "2:0"]
    assert rec["between_process"]["processes"] == 2
    assert rec["unstable"]                          # 30% apart between rounds
    assert rec["stats"]["median"] == pytest.approx(sorted(rec["samples"])[5] / 2 + sorted(rec["samples"])[6] / 2)
    assert merged.config["rounds"] == 2
    assert any("between rounds" in w for w in merged.warnings)
    again = merge_results(merged, _results(1e-3, 3))
    assert again.config["rounds"] == 3 and len(again.records[0]["per_process"]) == 3


def test_merge_keeps_a_failure_and_says_in_which_round():
    merged = merge_results(_results(1e-3, 1), _results(1e-3, 2, status="error"))
    (rec,) = merged.records
    assert rec["status"] == "error" and rec["reason"] == "error in the last round: broken"


class ScriptedRunner(Runner):
    """A runner whose outcomes are scripted per call: enough to test the execution loop's bookkeeping."""

    name = "scripted"

    def __init__(self, script: list[str]) -> None:
        self.script = list(script)
        self.calls: list[str] = []

    def inputs(self, cell: Any) -> str:
        return "inputs-v1"

    def skip_reason(self, cell: Any) -> str | None:
        return "no GPU here" if cell.target == "gpu" else None

    def run_cell(self, job: Any, log: Any, progress: Any) -> CellOutcome:
        cell = job.cell
        if self.skip_reason(cell):
            return CellOutcome(cell.name, "skipped", self.skip_reason(cell), {"name": "scripted"}, {}, None)
        self.calls.append(cell.name)
        what = self.script.pop(0)
        if what == "fail":
            return CellOutcome(cell.name, "failed", "scripted failure", {"name": "scripted"}, {"run_s": 1.0}, None)
        results = _results(1e-3 * (1 + 0.1 * len(self.calls)), len(self.calls))
        return CellOutcome(cell.name, "ok", None, {"name": "scripted", "inputs": "inputs-v1"}, {"run_s": 1.0},
                           results)


class FakeCell:
    def __init__(self, name: str, target: str = "cpu") -> None:
        self.name, self.target, self.preset, self.repeats = name, target, "quick", None
        self.existing = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tf": "2.15", "target": self.target, "preset": "quick"}


def _run(tmp_path: Path, cells: list[FakeCell], runner: ScriptedRunner, rounds: int, redo: bool = False) -> list:
    return execution.execute(cells, runner, RunRequest(rounds=rounds), tmp_path, redo=redo)


def test_two_rounds_run_every_cell_once_then_again_and_pool_them(tmp_path):
    cells = [FakeCell("a"), FakeCell("b"), FakeCell("g", "gpu")]
    runner = ScriptedRunner(["ok"] * 4)
    outcomes = _run(tmp_path, cells, runner, rounds=2)
    assert runner.calls == ["a", "b", "a", "b"]                 # interleaved across cells, GPU cell skipped
    assert [o.status for o in outcomes] == ["ok", "ok", "skipped"]
    doc = load_cell(tmp_path / "cells" / "a.json")
    assert doc is not None and doc.results is not None and doc.request["rounds"] == 2
    assert doc.results.config["rounds"] == 2
    assert len(doc.results.records[0]["per_process"]) == 2
    assert doc.timings["run_s"] == pytest.approx(2.0)
    # complete for this request: a second matrix run keeps it; a run asking for 3 rounds does not
    again = ScriptedRunner([])
    _run(tmp_path, cells, again, rounds=2)
    assert again.calls == []
    more = ScriptedRunner(["ok"] * 6)
    _run(tmp_path, cells, more, rounds=3)
    assert more.calls == ["a", "b", "a", "b", "a", "b"]


def test_a_failed_round_keeps_the_rounds_that_succeeded(tmp_path):
    runner = ScriptedRunner(["ok", "fail"])
    (outcome,) = _run(tmp_path, [FakeCell("a")], runner, rounds=2)
    assert outcome.status == "ok"
    doc = load_cell(tmp_path / "cells" / "a.json")
    assert doc is not None and doc.results is not None and doc.status == "ok" and doc.rounds == 1
