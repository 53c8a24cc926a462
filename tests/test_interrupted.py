"""An interrupted, failed or timed-out re-run never replaces a cell's last complete results.

A fake runner stands in for Docker (the real-Docker version is in
test_e2e_docker.py): it writes a little log, then succeeds, fails, or is
stopped by SIGINT (KeyboardInterrupt) or SIGTERM half-way through.
"""
from __future__ import annotations

import io
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from report_docs import noisy, record, results_doc, training_params
from rich.console import Console

from tfmatrix.execution import dispatch as execution
from tfmatrix.execution.request import RunRequest
from tfmatrix.matrix import load
from tfmatrix.paths import DEFAULT_MATRIX
from tfmatrix.report.build import build
from tfmatrix.results.documents import SuiteResults
from tfmatrix.results.store import CellOutcome
from tfmatrix.runners.base import Runner

CELL = load(DEFAULT_MATRIX).cell("tf2.1-cpu")


class FakeRunner(Runner):
    name = "fake"

    def __init__(self, how: str) -> None:
        self.how = how
        self.ran = 0

    def skip_reason(self, cell: Any) -> str | None:
        return None

    def inputs(self, cell: Any) -> str:
        return "inputs-1"

    def run_cell(self, job: Any, log: Any, progress: Any) -> CellOutcome:
        cell = job.cell
        self.ran += 1
        log("attempt %d (%s) started" % (self.ran, self.how))
        if self.how == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
        if self.how == "sigint":
            raise KeyboardInterrupt
        runner = {"name": self.name, "inputs": "inputs-1"}
        if self.how in ("failed", "timeout"):
            return CellOutcome(cell.name, self.how, "the suite exited with code 1", runner, {}, None, log.tail())
        results = SuiteResults.from_json(results_doc([record("training.question", training_params(), noisy(0.002))],
                                                     tf="2.1.4"), Path("tf2.1-cpu.json"))
        return CellOutcome(cell.name, "ok", None, runner, {"run_s": 1.0}, results, log.tail())


def run(reports: Path, how: str, redo: bool = True) -> FakeRunner:
    runner = FakeRunner(how)
    execution.execute([CELL], runner, RunRequest(), reports, redo=redo, console=Console(file=io.StringIO()))
    return runner


def files(reports: Path) -> list[str]:
    return sorted(p.name for p in (reports / "cells").iterdir())


@pytest.mark.parametrize("how", ["sigint", "sigterm", "failed", "timeout"])
def test_a_failed_re_run_keeps_the_complete_results_and_records_the_attempt(tmp_path: Path, how: str) -> None:
    run(tmp_path, "ok")
    path = tmp_path / "cells" / "tf2.1-cpu.json"
    before = json.loads(path.read_text())
    if how in ("sigint", "sigterm"):
        with pytest.raises(KeyboardInterrupt):
            run(tmp_path, how)
    else:
        run(tmp_path, how)
    after = json.loads(path.read_text())
    attempt = after.pop("last_attempt")
    assert after == before                                     # the complete results, untouched
    assert attempt["status"] == ("failed" if how.startswith("sig") else how)
    assert attempt["reason"] == ("interrupted" if how.startswith("sig") else "the suite exited with code 1")
    assert attempt["log"] == "tf2.1-cpu.attempt.log"
    assert files(tmp_path) == ["tf2.1-cpu.attempt.log", "tf2.1-cpu.json", "tf2.1-cpu.log"]   # nothing half-written
    assert "attempt 1 (ok)" in (tmp_path / "cells" / "tf2.1-cpu.log").read_text()          # the results' own log
    assert f"attempt 1 ({how})" in (tmp_path / "cells" / "tf2.1-cpu.attempt.log").read_text()
    summary = build(tmp_path / "cells", tmp_path, generated="2026-01-01T00:00:00+00:00")
    html = (tmp_path / "index.html").read_text()
    assert summary.statuses == {"ok": 1}
    assert f"last attempt {attempt['status']} ({attempt['reason']}) on {attempt['finished']}, showing the results of " \
           f"{before['finished']}" in html


def test_the_next_run_resumes_keeping_the_kept_results(tmp_path: Path) -> None:
    run(tmp_path, "ok")
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, "sigterm")
    assert run(tmp_path, "ok", redo=False).ran == 0               # still valid: nothing to do
    assert run(tmp_path, "ok").ran == 1                           # a successful re-run replaces them, cleanly
    assert "last_attempt" not in json.loads((tmp_path / "cells" / "tf2.1-cpu.json").read_text())


def test_an_interrupted_first_run_leaves_a_failed_record_that_the_next_run_redoes(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, "sigint")
    doc = json.loads((tmp_path / "cells" / "tf2.1-cpu.json").read_text())
    assert doc["status"] == "failed" and doc["reason"] == "interrupted" and "last_attempt" not in doc
    assert files(tmp_path) == ["tf2.1-cpu.json", "tf2.1-cpu.log"]
    assert run(tmp_path, "ok", redo=False).ran == 1
