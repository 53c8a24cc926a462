"""What the user asked of a whole run, and each cell's job made from it once (``RunRequest.job``)."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.claims.files import builtin
from ..analysis.claims.records import Claim
from ..matrix.records import Cell
from ..matrix.user_benchmarks import files_hash
from ..results.documents import CellRequest
from ..results.store import suite_fingerprint
from ..runners.job import CellJob


@dataclass(frozen=True)
class RunRequest:
    """What the user asked of every cell in this run, beyond the cell itself."""

    preset: str | None = None           # None: each cell's own preset
    only: tuple[str, ...] = ()
    repeats: int | None = None
    suite: str = ""                     # hash of the suite's source
    rounds: int = 1                     # every variant is measured in this many rounds of the matrix, pooled
    schedule: str = "interleaved"       # interleaved: slices of every cell in random order per turn; sequential
    seed: int | None = None             # the interleaved order's seed (None: a fresh one, recorded)
    bench_paths: tuple[Path, ...] = ()  # the user's benchmark files and directories (user_benchmarks.py)
    bench: str = ""                     # hash of their content
    processes: int | None = None        # fresh processes per variant; None: the preset's
    sides: tuple[str, ...] = ()         # per bench path, its side: versions of one file measured together (ab)
    sequential: bool = False            # rounds = "auto": ``rounds`` is the cap; only open lines run again
    judge: str = "claims"               # what a sequential run's looks judge: the claims' lines, or "ab"'s cases
    claims_only: bool = False           # ``only`` is the claims' variants: each cell keeps those that make its lines
    claims: tuple[Claim, ...] = field(default_factory=builtin)   # the claims a sequential run's looks judge
    families: tuple[str, ...] = ()      # the built-in claim families asked (``--claims``); () the seeds, as before
    budget_s: float | None = None       # ``--budget``: the run's seconds; later rounds only where they fit (budget.py)
    # the page in progress (``page.py``): the command's report, built from a cells directory with the run's state
    page: Callable[[Path, str], None] | None = field(default=None, compare=False, repr=False)
    # when the opening line's estimate says the run ends (seconds since the epoch; None: unknown), set by
    # ``execute``: the page written once provisioning is done says it, so one who opens it early knows when to return
    expected_end: float | None = field(default=None, compare=False)

    def for_cell(self, cell: Cell) -> CellRequest:
        """What this run asks of ``cell``: stored in its file (``job`` makes it once per cell)."""
        return CellRequest(
            preset=self.preset or cell.preset,
            only=tuple(self.only),
            repeats=self.repeats if self.repeats is not None else cell.repeats,
            suite=self.suite,
            rounds=self.rounds,
            schedule=self.schedule,
            bench=self.bench if self.bench_paths else None,     # absent without user benchmarks
            processes=self.processes,
            sequential=True if self.sequential else None,      # absent from fixed-round requests
            claims=self.families or None,                       # absent when only the seeds' are asked
        )

    def stamped(self) -> RunRequest:
        """The request with the hashes of what it runs now (the suite's source, the user's files): what a cell
        file's reuse and a journal's resume compare."""
        return dataclasses.replace(self, suite=suite_fingerprint(), bench=files_hash(self.bench_paths))

    def job(self, cell: Cell) -> CellJob:
        """``cell``'s job in this run: its request and the user's files, handed to the schedules and the runner."""
        return CellJob(cell, self.for_cell(cell), self.bench_paths, self.sides)
