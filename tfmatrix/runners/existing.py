"""Existing environments: the suite run in an interpreter that is already installed, as it is.

A cell with ``python = "/path/bin/python"`` (``matrix.existing``), or ``cell
NAME --python PATH``, is run here whatever ``--runner`` says: nothing is built
or installed, each suite command is a fresh child process of that interpreter
(as the venv runner's, ``venv.VenvCellEnv``) with the checkout's suite on its
path. Its fingerprint says what it holds; a GPU cell whose GPU the suite does
not see is the suite's loud error, as in any cell. The environment's inputs are
its interpreter and the packages installed in it, so results are reused only
while neither changed. ``WithExisting`` puts this runner beside the chosen one.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..matrix.records import Cell
from ..progress import Progress
from ..results.cell_log import CellLog
from ..results.store import CellOutcome
from ..versions import minor_series
from .base import CellEnv, DiskRoom, Runner
from .job import CellJob
from .venv import VenvCellEnv, suite_process_env
from .whole import run_whole

# what is installed, read by the interpreter itself (3.8+: importlib.metadata; older: pkg_resources)
PACKAGES = "\n".join((
    "import sys",
    "try:",
    "    from importlib import metadata as m",
    "    d = sorted('%s==%s' % (x.metadata['Name'], x.version) for x in m.distributions())",
    "except ImportError:",
    "    import pkg_resources as p",
    "    d = sorted('%s==%s' % (x.project_name, x.version) for x in p.working_set)",
    "print(sys.version.split()[0])",
    "print('\\n'.join(d))",
))


def check_release(cell: Cell, packages: str) -> None:
    """``jax = "0.6"`` on an existing environment: it must hold that release (a minor: any of its patches), as its
    installed packages (``PACKAGES``'s output) say; else one line (``UserError``, exit 2)."""
    if not cell.backend_version:
        return
    found = dict(line.split("==", 1) for line in packages.splitlines()[1:] if "==" in line)
    held = {name.lower(): version for name, version in found.items()}.get(cell.backend)
    wanted = cell.backend_version
    if held is None or not (held == wanted or minor_series(held) == wanted):
        raise UserError(f"{cell.origin}: key '{cell.backend}': the existing environment {cell.interpreter} holds "
                        f"{cell.backend + ' ' + held if held else 'no ' + cell.backend}, not {cell.backend} {wanted}; "
                        f"remove {cell.backend}, or point python at an environment that holds {cell.backend} {wanted}")


class ExistingRunner(Runner):
    """Each cell in the interpreter it names, on this host, not isolated."""

    name = "existing"
    interleaves = True

    def __init__(self) -> None:
        self._inputs: dict[str, str] = {}
        self._packages: dict[str, str] = {}

    def skip_reason(self, cell: Cell) -> str | None:
        path = cell.interpreter or ""
        if not os.path.isfile(path) or not os.access(path, os.X_OK):
            return f"the existing environment's interpreter {path} is not an executable file on this host"
        return None

    def inputs(self, cell: Cell) -> str:
        """The interpreter and every package installed in it: results are kept while neither changed. A cell that
        names its backend's release (``jax = "0.6"``) and holds another is refused here, before it runs."""
        path = cell.interpreter or ""
        if path not in self._inputs:
            try:
                out = subprocess.run([path, "-c", PACKAGES], capture_output=True, text=True, timeout=60).stdout
            except (OSError, subprocess.SubprocessError):
                out = ""
            self._inputs[path] = "existing-" + hashlib.sha256((path + "\n" + out).encode()).hexdigest()[:16]
            self._packages[path] = out
        check_release(cell, self._packages.get(path, ""))
        return self._inputs[path]

    def built(self, cell: Cell) -> bool:
        return True

    def disk_room(self, cells: Sequence[Cell]) -> DiskRoom | None:
        return None

    def prepare(self, job: CellJob, log: CellLog, progress: Progress | None) -> VenvCellEnv | CellOutcome:
        cell = job.cell
        runner: dict[str, Any] = {"name": self.name, "interpreter": cell.interpreter, "inputs": self.inputs(cell),
                                  "network": "host (not isolated)", "memory_limit": None}
        why = self.skip_reason(cell)
        if why:
            return CellOutcome(cell.name, "skipped", why, runner, {})
        env = suite_process_env(job, drop=("PYTHON", "TFMATRIX_"))
        log("existing environment %s: run as it is (nothing installed)" % cell.interpreter)
        return VenvCellEnv(Path(cell.interpreter or ""), env, runner, {"build_s": 0.0})

    def run_cell(self, job: CellJob, log: CellLog, progress: Progress | None) -> CellOutcome:
        return run_whole(self, job, log, progress)


class WithExisting(Runner):
    """The chosen runner for the cells it builds, ``ExistingRunner`` for existing environments."""

    def __init__(self, inner: Runner) -> None:
        self.inner = inner
        self.existing = ExistingRunner()
        self.name = inner.name
        self.slots = inner.slots
        self.interleaves = inner.interleaves
        self.builds_at_once = inner.builds_at_once

    def _for(self, cell: Cell) -> Runner:
        return self.existing if cell.existing else self.inner

    def inputs(self, cell: Cell) -> str:
        return self._for(cell).inputs(cell)

    def skip_reason(self, cell: Cell) -> str | None:
        return self._for(cell).skip_reason(cell)

    def built(self, cell: Cell) -> bool:
        return self._for(cell).built(cell)

    def run_cell(self, job: CellJob, log: CellLog, progress: Progress | None) -> CellOutcome:
        return self._for(job.cell).run_cell(job, log, progress)

    def prepare(self, job: CellJob, log: CellLog, progress: Progress | None) -> CellEnv | CellOutcome:
        return self._for(job.cell).prepare(job, log, progress)

    def disk_room(self, cells: Sequence[Cell]) -> DiskRoom | None:
        return self.inner.disk_room([c for c in cells if not c.existing])

    def width(self, cells: Sequence[Cell]) -> int:
        return self.inner.width(cells)

    def cancel(self) -> None:
        self.inner.cancel()

    def sweep(self) -> int:
        return self.inner.sweep()
