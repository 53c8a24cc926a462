"""What every runner shares: the run request, the cell log and its line reader, results parsing, outcomes."""
from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from suite.schema import validate

from ..errors import UserError
from ..matrix.records import Cell
from ..progress import Progress
from ..provision import wheelhouse
from ..results.documents import CellRequest, SuiteResults
from ..results.store import CellOutcome, read_tail

# Where no runner can give a built cell a GPU: the way that needs neither Docker nor its NVIDIA runtime.
GPU_WITHOUT_DOCKER = ("an environment that already sees the GPU runs as it is: `nox -s cell -- NAME --python "
                      "/path/to/env/bin/python --target gpu`, or python = \"/path/to/env/bin/python\" with "
                      "target = \"gpu\" in a [[cell]] of the matrix file (docs/gpu-without-docker.md)")

WheelsSource = Callable[[Sequence[str], str, Callable[[str], None]], wheelhouse.WheelSet]
"""(requirements, python, log) -> the wheel set to install: ``own_wheelhouse``, or a Ray node's ``HeadWheels``."""


def own_wheelhouse(requirements: Sequence[str], python: str, log: Callable[[str], None]) -> wheelhouse.WheelSet:
    """This host's wheelhouse, downloading what it lacks (a single host's runners' source of wheels); runners ask
    only to build, so every file is checked against the hash it was fetched with first."""
    return wheelhouse.ensure(requirements, python, log=log, verify=True)


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

    def for_cell(self, cell: Cell) -> CellRequest:
        """What this run asks of ``cell``: made once per cell, handed down, stored in its file."""
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
        )

    def suite_args(self, cell: Cell, out: str, image: str | None, runner: str) -> list[str]:
        """``suite_args`` for a whole run of ``cell`` (its request made here)."""
        return suite_args(self.for_cell(cell), cell, out, image, runner)

    def slice_args(self, cell: Cell, plan: str, key: str, round_no: int, out: str, image: str | None,
                   runner: str) -> list[str]:
        """``slice_args`` for ``cell`` (its request made here)."""
        return slice_args(self.for_cell(cell), cell, plan, key, round_no, out, image, runner)


def suite_args(asked: CellRequest, cell: Cell, out: str, image: str | None, runner: str) -> list[str]:
    """``python -m suite`` arguments: the one way the cell's facts (name, target, image, runner) reach the suite."""
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


def plan_args(asked: CellRequest, cell: Cell, out: str, image: str | None, runner: str) -> list[str]:
    """``python -m suite plan`` arguments: the fingerprint and the slices, once per cell and run."""
    return ["plan", *suite_args(asked, cell, out, image, runner)[1:]]


SEQUENTIAL_SHARE = 2    # a sequential run's process takes half the preset's samples (3-6 at seed), whatever the cap:
#                         how many rounds a line gets is not known when its first process runs


def slice_args(asked: CellRequest, cell: Cell, plan: str, key: str, round_no: int, out: str, image: str | None,
               runner: str, ids: Sequence[str] = ()) -> list[str]:
    """``python -m suite run`` arguments for one slice of a planned cell in one round (``ids``: only these)."""
    share = SEQUENTIAL_SHARE if asked.sequential else asked.rounds
    return [*suite_args(asked, cell, out, image, runner), "--plan", plan, "--slice", key, "--pass", str(round_no),
            "--of", str(share), *(a for vid in ids for a in ("--variant", vid))]


class CellLog:
    """The cell's log file; written as ``.partial`` and renamed when complete."""

    def __init__(self, path: Path, progress: Progress | None = None, after: str | None = None) -> None:
        """``after``: a heading for a later round of the same run; the log goes on from the file on disk."""
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f: TextIO = open(self.partial, "w", encoding="utf-8", errors="replace")  # noqa: SIM115 (closed by close())
        if after is not None:
            if path.is_file():
                self._f.write(path.read_text(encoding="utf-8", errors="replace"))
            self._f.write("--- %s ---\n" % after)
        self.progress = progress
        self._lock = threading.Lock()   # the docker runner streams logs from a thread

    def __call__(self, line: str) -> None:
        self.write(line)

    def write(self, text: str) -> None:
        with self._lock:
            for line in text.splitlines() or [""]:
                self._f.write(line + "\n")
                if self.progress is not None:
                    self.progress.suite_output(line)
            self._f.flush()

    def tail(self) -> str:
        self._f.flush()
        return read_tail(self.partial)

    def close(self, to: Path | None = None) -> None:
        """Finish the log as ``path`` (or ``to``: a failed attempt's log, beside the results it did not replace)."""
        if not self._f.closed:
            self._f.close()
            os.replace(self.partial, to or self.path)


class LineReader:
    """The suite's output, in byte chunks as they arrive, to the log one whole line at a time.

    Chunks split lines anywhere (a container's log stream, a pipe read), and a
    progress line must reach ``tfmatrix.progress`` whole; ``close`` passes on a
    last line that had no newline, so the log tail shows what the suite said last.
    """

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self._buf = b""

    def feed(self, chunk: bytes) -> None:
        self._buf += chunk
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            self.log(line.decode("utf-8", "replace"))

    def close(self) -> None:
        if self._buf:
            self.log(self._buf.decode("utf-8", "replace"))
            self._buf = b""


def timed_out(cell: Cell, runner: dict[str, Any], timings: dict[str, float], log: CellLog) -> CellOutcome:
    """The outcome of a cell killed at its time limit, with the log's tail for the report."""
    return CellOutcome(cell.name, "timeout", "the cell ran past its %d s limit" % cell.timeout_s,
                       runner, timings, None, log.tail())


def read_suite_results(path: Path) -> tuple[SuiteResults | None, str | None]:
    """(results, problem): the suite's results file, validated against its schema."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return None, "the suite wrote no results file"
    except ValueError as e:
        return None, "the suite's results file is not JSON: %s" % e
    try:
        results = SuiteResults.from_json(doc, path)
    except UserError as e:
        return None, "results do not match the schema: %s" % e
    problems = validate(doc)
    if problems:
        return results, "results do not match the schema: %s" % "; ".join(problems[:3])
    return results, None


def outcome_from_suite(name: str, results: SuiteResults | None, problem: str | None, exit_code: int | None,
                       runner: dict[str, Any], timings: dict[str, float], log: CellLog) -> CellOutcome:
    """Judge a finished suite run: results valid and status ok, or why not."""
    if problem is None and results is not None and results.status == "ok" and exit_code == 0:
        return CellOutcome(name, "ok", None, runner, timings, results, log.tail())
    if results is not None and results.error:
        reason = results.error
    elif problem is not None:
        reason = "%s (exit code %s)" % (problem, exit_code)
    else:
        reason = "the suite exited with code %s" % exit_code
    return CellOutcome(name, "failed", reason, runner, timings, results, log.tail())


def requirements_failure(cell: Cell, message: str) -> str:
    """A cell's build/install failure, naming ``[suite] requirements`` when the cell has any (they may be why)."""
    extra = cell.user_requirements
    if not extra:
        return message
    return (f"{message} (this cell also installs [suite] requirements {', '.join(extra)}: check that they exist "
            f"for Python {cell.python} and agree with TF {cell.tf}'s pins; other cells are not affected)")
