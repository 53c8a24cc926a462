"""Provisioning: a runner that may build two cells at once does, and an interruption meanwhile leaves no live cell.

The fake runner of test_interleaved.py stands in for Docker (the real engine builds two images at once in
test_e2e_docker.py's matrix runs, whose Docker runner says ``builds_at_once = 2`` on two cores).
"""
from __future__ import annotations

import io
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from test_interleaved import CELLS, FakeEnv, FakeRunner

from tfmatrix.execution.provisioning import provision
from tfmatrix.execution.request import RunRequest
from tfmatrix.results.store import CellOutcome, load_cell
from tfmatrix.runners.job import CellJob


class TwoAtOnce(FakeRunner):
    """Each prepare waits at a barrier for the other: provisioning one after the other breaks it (a timeout)."""

    builds_at_once = 2

    def __init__(self, tmp: Path, interrupt: str | None = None) -> None:
        super().__init__(tmp)
        self.barrier = threading.Barrier(2, timeout=20)
        self.interrupt = interrupt

    def prepare(self, job: Any, log: Any, progress: Any) -> FakeEnv | CellOutcome:
        self.barrier.wait()
        if job.cell.name == self.interrupt:
            raise KeyboardInterrupt
        if self.interrupt:          # the other cell is ready only after the interruption
            time.sleep(0.5)
        return super().prepare(job, log, progress)


def _jobs() -> list[CellJob]:
    request = RunRequest(rounds=1)
    return [request.job(cell) for cell in CELLS]   # type: ignore[arg-type]


def test_two_cells_are_provisioned_at_once_and_each_is_said_when_ready(tmp_path: Path) -> None:
    out = io.StringIO()
    runner = TwoAtOnce(tmp_path)
    live, failed = provision(_jobs(), runner, None, tmp_path / "reports", Console(file=out, width=200))
    assert sorted(live) == ["a", "b"] and failed == {}
    text = out.getvalue()
    assert "provisioning 2 cells" in text and "2 at once" in text
    assert "[1/2]" in text and "[2/2]" in text and text.count("ready in") == 2
    for lc in live.values():
        lc.env.close()


def test_an_interruption_while_two_cells_build_closes_the_one_that_becomes_ready_and_says_so(tmp_path: Path) -> None:
    runner = TwoAtOnce(tmp_path, interrupt="a")
    reports = tmp_path / "reports"
    with pytest.raises(KeyboardInterrupt):
        provision(_jobs(), runner, None, reports, Console(file=io.StringIO()))
    deadline = time.monotonic() + 20
    while "b" not in runner.closed and time.monotonic() < deadline:     # b was still being made: it is closed
        time.sleep(0.05)
    assert runner.closed == ["b"]
    for name in ("a", "b"):
        doc = load_cell(reports / "cells" / f"{name}.json")
        assert doc is not None and (doc.status, doc.reason) == ("failed", "interrupted")
