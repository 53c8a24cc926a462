"""The runner interface: what ``execution`` needs from anything that runs a cell.

Docker containers (``docker.py``), local virtualenvs (``venv.py``) and a Ray
cluster (``cluster.py``, which runs one of the first two on each node)
implement ``Runner``. Every member ``execution`` and ``interleaved`` use is
declared here, with a default where most runners need nothing (one cell at a
time, nothing to cancel or sweep): runners subclass the Protocol explicitly
to inherit those defaults, and mypy checks each one against it.

Two ways to run a cell:

* ``run_cell``: the whole suite at once (the sequential schedule, and a
  cluster's tasks);
* ``prepare`` → ``CellEnv``: a cell made ready once (image built, container
  or virtualenv live), then any number of suite commands in it: the
  interleaved schedule runs one slice of every cell per round this way.
  Runners that cannot (``interleaves = False``) run the sequential schedule.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..matrix import Cell
    from ..progress import Progress
    from ..provision.hygiene import Stored
    from ..results.cell_log import CellLog
    from ..results.store import CellOutcome
    from .job import CellJob


@dataclass(frozen=True)
class SuiteExit:
    """How one suite command in a prepared cell ended."""

    returncode: int | None
    late: bool = False          # killed at its time limit
    oom: bool = False           # the cell's memory limit killed it
    seconds: float = 0.0
    lost: str | None = None     # the environment itself failed under it (the engine stopped answering): why


@dataclass(frozen=True)
class DiskRoom:
    """What building some cells' environments takes on this host's disk, and what is free there."""

    need: int               # bytes, estimated
    free: int               # bytes free where they go
    where: str              # the directory (Docker's data root, the virtualenvs' root)
    what: str               # "the images of 3 cells not built yet"


class CellEnv(Protocol):
    """A prepared cell: its environment is built and live, ready for suite commands."""

    runner: dict[str, Any]
    """What the cell file records about where it ran (image, interpreter, ...)."""
    timings: dict[str, float]
    """Preparation times (``wheels_s``, ``build_s``)."""
    out_dir: Path
    """The host directory the suite writes its files into."""

    def suite_path(self, name: str) -> str:
        """``out_dir / name`` as the suite sees it (a container's mount point, or the host path)."""
        ...

    def run_suite(self, args: Sequence[str], log: CellLog, timeout_s: float, cpus: str | None = None) -> SuiteExit:
        """``python -m suite ARGS`` in the cell; ``cpus``: pin it to these CPUs (``taskset -c`` syntax)."""
        ...

    def close(self) -> None:
        """Stop what ``prepare`` started (the container) and remove ``out_dir``; safe to call twice."""
        ...


class Runner(Protocol):
    """Runs one cell's suite somewhere isolated and judges the result."""

    name: str
    """Short name written into results (``runner.name``) and shown in progress lines."""

    slots: int = 1
    """How many cells it may have in flight at once: more than 1 places cells on other machines (``parallel``)."""

    interleaves: bool = False
    """``prepare`` works: cells can be made ready once and run slice by slice (the interleaved schedule)."""

    builds_at_once: int = 1
    """How many cells ``prepare`` may make at once on this host while nothing is measured (provisioning): an image
    build waits on the disk about as long as it computes, so two overlap (``prepare`` must then be thread-safe)."""

    def inputs(self, cell: Cell) -> str:
        """A hash of everything this runner installs for ``cell``: equal hashes let a re-run keep results."""
        ...

    def skip_reason(self, cell: Cell) -> str | None:
        """Why this runner cannot serve ``cell`` on this host (it is then ``skipped``), or None."""
        ...

    def built(self, cell: Cell) -> bool:
        """``cell``'s environment exists here already (its image, its virtualenv): a run need not prepare it.

        Only the opening estimate asks; False (unknown) counts the preparation.
        """
        return False

    def run_cell(self, job: CellJob, log: CellLog, progress: Progress | None) -> CellOutcome:
        """Prepare and run the job's cell; every failure comes back as an outcome, never as an exception."""
        ...

    def prepare(self, job: CellJob, log: CellLog, progress: Progress | None) -> CellEnv | CellOutcome:
        """Build the job's cell's environment and make it live (with the user's files it names mounted); a failure
        comes back as an outcome."""
        raise NotImplementedError("the %s runner runs whole cells only" % self.name)

    def disk_room(self, cells: Sequence[Cell]) -> DiskRoom | None:
        """What building ``cells``' environments that do not exist yet needs on this host's disk and what is free
        there; None when there is nothing to build or it cannot say (an engine or machines elsewhere)."""
        return None

    def width(self, cells: Sequence[Cell]) -> int:
        """How many of ``cells`` run at once (a cluster: what its live nodes fit); estimates become a makespan."""
        return 1

    def cancel(self) -> None:
        """Ctrl-C while cells are in flight elsewhere: ask them to stop."""
        return None

    def sweep(self) -> int:
        """After a round: remove what workers that died with their machine left behind; how many."""
        return 0

    # -- what it keeps on this host's disk (``disk`` asks each runner of ``local.LOCAL``) --

    def kept(self) -> list[Stored]:
        """The environments it keeps here (its images, its virtualenvs), each with the bytes only it holds."""
        return []

    def used_by(self, cell: Cell) -> list[str]:
        """The keys of what ``cell`` uses of ``kept`` (an image's tag, a virtualenv's directory name)."""
        return []

    def remove(self, item: Stored) -> None:
        """Remove one of ``kept``'s items; what cannot go (a container still uses an image) raises. A runner that
        keeps nothing is never asked."""
        return None

    def held(self) -> int:
        """The bytes all it keeps takes on disk now, measured (``disk --prune`` says what it freed)."""
        return 0
