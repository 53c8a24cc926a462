"""One cell's job in a run: the cell, what the run asks of it, the user's files; and the suite command lines from it.

Made once per cell in ``execution.dispatch.execute`` (``execution.request.RunRequest.job``) and handed to the
estimates, both schedules and every runner (``Runner.prepare``/``run_cell``), so nothing below the dispatch
re-derives a cell's request from the run-wide one. A cluster ships it to its nodes as it is.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..matrix.records import Cell
from ..results.documents import CellRequest

SEQUENTIAL_SHARE = 2    # a sequential run's process takes half the preset's samples (3-6 at seed), whatever the cap:
#                         how many rounds a line gets is not known when its first process runs


@dataclass(frozen=True)
class CellJob:
    """A cell and its request (stored in its file), with the files a runner mounts for it."""

    cell: Cell
    asked: CellRequest
    bench_paths: tuple[Path, ...] = ()  # the user's benchmark files and directories (user_benchmarks.py)
    sides: tuple[str, ...] = ()         # per bench path, its side: versions of one file measured together (ab)

    @property
    def name(self) -> str:
        return self.cell.name

    def suite_args(self, out: str, image: str | None, runner: str) -> list[str]:
        """``python -m suite`` arguments: the one way the cell's facts (name, target, image, runner) reach the
        suite."""
        asked, cell = self.asked, self.cell
        args = ["run", "--preset", asked.preset, "--out", out, "--cell", cell.name, "--target", cell.target,
                "--runner", runner]
        if image:
            args += ["--image", image]
        for pattern in asked.only:
            args += ["--only", pattern]
        if asked.repeats is not None:
            args += ["--repeats", str(asked.repeats)]
        if asked.processes is not None:
            args += ["--processes", str(asked.processes)]
        return args

    def plan_args(self, out: str, image: str | None, runner: str) -> list[str]:
        """``python -m suite plan`` arguments: the fingerprint and the slices, once per cell and run."""
        return ["plan", *self.suite_args(out, image, runner)[1:]]

    def slice_args(self, plan: str, key: str, round_no: int, out: str, image: str | None, runner: str,
                   ids: Sequence[str] = (), seed: int | None = None) -> list[str]:
        """``python -m suite run`` arguments for one slice of the planned cell in one round (``ids``: only these).
        ``seed``: the run's; a job of two sides (``ab``) passes it on, and its processes take turns at going first
        from it (``suite.sides.lead_side``)."""
        share = SEQUENTIAL_SHARE if self.asked.sequential else self.asked.rounds
        order = ["--order-seed", str(seed)] if self.sides and seed is not None else []
        return [*self.suite_args(out, image, runner), "--plan", plan, "--slice", key, "--pass", str(round_no),
                "--of", str(share), *(a for vid in ids for a in ("--variant", vid)), *order]
