"""The venv runner: CPU cells in nox-managed virtualenvs, with interpreters found on the host.

Same pins (the cell's requirements, installed from the same wheelhouse with
``--no-index``) and the same suite as the Docker runner, so it is the
embedded default where no Docker engine answers. It cannot isolate the
network or enforce a memory limit the way a container does; results record
that they came from it. A cell it cannot serve (GPU target, no interpreter)
is ``skipped`` with the reason.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from suite.schema import PLUGINS_ENV

from ..matrix.records import Cell
from ..matrix.user_benchmarks import plugins_value
from ..paths import REPO_ROOT
from ..progress import Progress
from ..provision import hygiene, interpreters, wheelhouse
from ..results.cell_log import CellLog
from ..results.store import CellOutcome
from .base import DiskRoom, Runner, SuiteExit
from .common import (
    GPU_WITHOUT_DOCKER,
    LineReader,
    WheelsSource,
    own_wheelhouse,
    requirements_failure,
)
from .job import CellJob
from .whole import run_whole

VENV_ROOT_ENV = "TFMATRIX_VENV_ROOT"
MARKER = "tfmatrix-cell.json"


def venv_root() -> Path:
    env = os.environ.get(VENV_ROOT_ENV)
    return Path(env) if env else REPO_ROOT / ".nox"


def _up_to_date(location: Path, inputs: str) -> bool:
    """Whether the virtualenv at ``location`` was made, completely, from ``inputs`` (its marker says so)."""
    try:
        return bool(json.loads((location / MARKER).read_text()).get("inputs") == inputs)
    except (OSError, ValueError):
        return False


def suite_process_env(job: CellJob, drop: tuple[str, ...] = ("PYTHON", "VIRTUAL_ENV", "TFMATRIX_")) -> dict[str, str]:
    """The environment of a suite process this host starts in a cell's interpreter: the host's without the
    variables starting with ``drop`` (another interpreter's settings, tfmatrix's own), the cell's ``env``, the
    checkout's suite on the path, and the user's benchmark files (loaded by ``suite.plugins``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(dict(job.cell.env))
    env.update({"PYTHONPATH": str(REPO_ROOT), "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    if job.bench_paths:
        env[PLUGINS_ENV] = plugins_value([str(p) for p in job.bench_paths], job.sides)
    return env


class VenvRunner(Runner):
    """Each cell in a local virtualenv, CPU only, not isolated."""

    name = "venv"
    interleaves = True

    def __init__(self, wheels_source: WheelsSource | None = None, root: Path | None = None) -> None:
        self.wheels_source = wheels_source or own_wheelhouse
        self.root = root      # where the cells' virtualenvs live; None: venv_root() (the checkout's .nox)

    def inputs(self, cell: Cell) -> str:
        interp = interpreters.find(cell.python)
        text = json.dumps({"python": cell.python, "interpreter": str(interp.executable) if interp else None,
                           "requirements": list(cell.requirements), "env": list(cell.env)}, sort_keys=True)
        return "venv-" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def built(self, cell: Cell) -> bool:
        """The cell's virtualenv exists and was made from its current inputs."""
        return _up_to_date(self._location(cell), self.inputs(cell))

    def _location(self, cell: Cell) -> Path:
        return (self.root or venv_root()) / ("cell-" + cell.name)

    def kept(self) -> list[hygiene.Stored]:
        return hygiene.venv_stored(self.root or venv_root())

    def used_by(self, cell: Cell) -> list[str]:
        return [self._location(cell).name]

    def remove(self, item: hygiene.Stored) -> None:
        shutil.rmtree(item.ref)

    def held(self) -> int:
        return sum(hygiene.disk_usage(Path(item.ref)) for item in self.kept())

    def skip_reason(self, cell: Cell) -> str | None:
        """Why this runner cannot serve ``cell`` here (it is then ``skipped``), or None."""
        if cell.target != "cpu":
            return ("the venv runner runs CPU cells only; GPU cells need the Docker runner with the NVIDIA runtime, "
                    "or " + GPU_WITHOUT_DOCKER)
        if interpreters.find(cell.python) is None:
            return "no CPython %s on this host (looked on PATH and in pyenv)" % cell.python
        return None

    def disk_room(self, cells: Sequence[Cell]) -> DiskRoom | None:
        """The virtualenvs of ``cells`` not built yet against the free space where they go."""
        todo = [c for c in cells if not self.built(c)]
        if not todo:
            return None
        root = self.root or venv_root()
        where = root if root.exists() else root.parent
        need = sum(hygiene.environment_estimate(c.requirements, c.python) for c in todo)
        return DiskRoom(need, shutil.disk_usage(where).free, str(where),
                        "the virtualenvs of %d cell(s) not built yet" % len(todo))

    def run_cell(self, job: CellJob, log: CellLog, progress: Progress | None) -> CellOutcome:
        return run_whole(self, job, log, progress)

    def prepare(self, job: CellJob, log: CellLog, progress: Progress | None) -> VenvCellEnv | CellOutcome:
        """The cell's virtualenv (made or reused from the wheelhouse), ready for suite commands."""
        cell = job.cell
        runner: dict[str, Any] = {"name": self.name, "network": "host (not isolated)", "memory_limit": None}
        timings: dict[str, float] = {}
        why = self.skip_reason(cell)
        if why:
            return CellOutcome(cell.name, "skipped", why, runner, timings)
        interp = interpreters.find(cell.python)
        assert interp is not None
        runner["interpreter"] = str(interp.executable)
        runner["inputs"] = self.inputs(cell)
        try:
            if _up_to_date(self._location(cell), runner["inputs"]):     # the wheels matter only to a build
                log("virtualenv %s is up to date" % self._location(cell))
                runner["wheels"], timings["build_s"] = {"count": 0, "downloaded": 0, "how": "virtualenv exists"}, 0.0
                python = self._location(cell) / "bin" / "python"
            else:
                if progress:
                    progress.phase("wheels")
                t0 = time.monotonic()
                wheels = self.wheels_source(cell.requirements, cell.python, log)
                timings["wheels_s"] = time.monotonic() - t0
                runner["wheels"] = {"count": len(wheels.files), "downloaded": wheels.downloaded, "how": wheels.how}
                if progress:
                    progress.phase("venv")
                t0 = time.monotonic()
                python = self.ensure_venv(cell, interp, wheels, runner["inputs"], log)
                timings["build_s"] = time.monotonic() - t0
        except (wheelhouse.WheelhouseError, VenvError) as e:
            return CellOutcome(cell.name, "failed", requirements_failure(cell, str(e)), runner, timings, None,
                               log.tail())
        runner["venv"] = str(python.parent.parent)
        return VenvCellEnv(python, suite_process_env(job), runner, timings)

    # -- the environment -----------------------------------------------------

    def ensure_venv(self, cell: Cell, interp: interpreters.Interpreter, wheels: wheelhouse.WheelSet, inputs: str,
                    log: CellLog) -> Path:
        """A virtualenv holding exactly the cell's wheels; reused while its inputs are unchanged."""
        from nox.virtualenv import VirtualEnv

        location = self._location(cell)
        marker = location / MARKER
        if _up_to_date(location, inputs):
            log("virtualenv %s is up to date" % location)
            return location / "bin" / "python"
        if location.exists():
            shutil.rmtree(location)
        log("creating virtualenv %s with %s" % (location, interp.executable))
        env = VirtualEnv(str(location), interpreter=str(interp.executable), reuse_existing=False,
                         venv_backend="venv", download_python="never")
        try:
            env.create()
        except Exception as e:
            raise VenvError("could not create a virtualenv with %s: %s" % (interp.executable, e))
        python = location / "bin" / "python"
        with tempfile.TemporaryDirectory(prefix="tfmatrix-wheels-") as tmp:
            for f in wheels.files:
                try:
                    os.link(f, Path(tmp) / f.name)
                except OSError:
                    shutil.copy2(f, Path(tmp) / f.name)
            req = Path(tmp) / "requirements.txt"
            req.write_text("\n".join(cell.requirements) + "\n")
            cmd = [str(python), "-m", "pip", "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check",
                   "--find-links", tmp, "-r", str(req)]
            log("$ " + " ".join(cmd))
            proc = subprocess.run(cmd, capture_output=True, text=True)
            log(proc.stdout + proc.stderr)
            if proc.returncode != 0:
                raise VenvError("pip could not install the cell's wheels: %s" % _last_line(proc.stdout + proc.stderr))
        marker.write_text(json.dumps({"inputs": inputs, "requirements": list(cell.requirements)}, indent=1) + "\n")
        return python



class VenvCellEnv:
    """A cell's virtualenv and a scratch directory: each suite command is a fresh child process."""

    def __init__(self, python: Path, env: dict[str, str], runner: dict[str, Any], timings: dict[str, float]) -> None:
        self.python = python
        self.env = env
        self.runner = runner
        self.timings = timings
        self.out_dir = Path(tempfile.mkdtemp(prefix="tfmatrix-run-"))

    def suite_path(self, name: str) -> str:
        return str(self.out_dir / name)

    def run_suite(self, args: Sequence[str], log: CellLog, timeout_s: float, cpus: str | None = None) -> SuiteExit:
        cmd = [str(self.python), "-m", "suite", *args]
        if cpus:
            cmd = ["taskset", "-c", cpus, *cmd]
        log("$ " + " ".join(cmd))
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=self.out_dir, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        late = False
        try:
            late = _pump(proc, log, t0 + timeout_s)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        return SuiteExit(None if late else proc.returncode, late=late, seconds=time.monotonic() - t0)

    def close(self) -> None:
        shutil.rmtree(self.out_dir, ignore_errors=True)


class VenvError(Exception):
    """The cell's virtualenv could not be made."""


def _pump(proc: subprocess.Popen[bytes], log: CellLog, deadline: float) -> bool:
    """Copy the child's output to the log until it exits; True when the deadline passed first."""
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    lines = LineReader(log)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        if not sel.select(timeout=min(left, 5.0)):
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        lines.feed(chunk)
    lines.close()
    proc.wait()
    return False


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"
