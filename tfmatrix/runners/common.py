"""What every runner shares: the cell log and its line reader, results parsing, outcomes (a cell's job and its suite
command lines: ``job.py``)."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from suite.schema import validate

from ..errors import UserError
from ..matrix.records import Cell
from ..provision import wheelhouse
from ..results.cell_log import CellLog
from ..results.documents import SuiteResults
from ..results.foreign import RESULTS_CAP, Refused, read_file
from ..results.store import CellOutcome

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
    """(results, problem): the suite's results file, validated against its schema. The code in a cell writes it
    into a folder the host reads: read as ``foreign`` reads (a regular file, no link followed, at most
    ``RESULTS_CAP``), so a FIFO, a link to a host file or a huge sparse file fails the cell, not the run."""
    try:
        data = read_file(path, RESULTS_CAP)
    except FileNotFoundError:
        return None, "the suite wrote no results file"
    except Refused as e:
        return None, "the suite's results file was refused: %s" % e
    except OSError as e:
        return None, "the suite's results file could not be read: %s" % e
    try:
        doc = json.loads(data)
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
