"""The runner interface: what ``execution`` needs from anything that runs a cell.

Docker containers (``docker.py``), local virtualenvs (``venv.py``) and a Ray
cluster (``cluster.py``, which runs one of the first two on each node) implement
the same four members; a runner that places cells on other machines also says
how many it may have in flight (``slots``), and ``execution`` then runs that
many side by side (``parallel.py``). A ``Protocol``, not a base class: the runners share
helpers (``common.py``), not behaviour, and mypy checks each one against it
where ``execution.make_runner`` returns it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..matrix import Cell
    from ..progress import Progress
    from ..results import CellOutcome
    from .common import CellLog, RunRequest


class Runner(Protocol):
    """Runs one cell's suite somewhere isolated and judges the result."""

    name: str
    """Short name written into results (``runner.name``) and shown in progress lines."""

    def inputs(self, cell: Cell) -> str:
        """A hash of everything this runner installs for ``cell``: equal hashes let a re-run keep results."""
        ...

    def skip_reason(self, cell: Cell) -> str | None:
        """Why this runner cannot serve ``cell`` on this host (it is then ``skipped``), or None."""
        ...

    def run_cell(self, cell: Cell, request: RunRequest, log: CellLog, progress: Progress | None) -> CellOutcome:
        """Prepare and run ``cell``; every failure comes back as an outcome, never as an exception."""
        ...
