"""The Docker runner: build each cell's image from its rendered directory and run the suite in it.

Containers run with no network, as the image's non-root user (uid 10001), the
suite bind-mounted read-only at /opt/tfmatrix/suite and only an output
directory writable, under the cell's memory and time limits; the container is
removed whatever happens (error, timeout, Ctrl-C). GPU cells ask for all GPUs
and are ``skipped`` when the engine has no NVIDIA runtime: never silently run
on the CPU.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from suite.schema import PLUGINS_ENV

from ..matrix.records import Cell
from ..matrix.user_benchmarks import container_paths, plugins_value
from ..paths import SUITE_DIR
from ..progress import Progress
from ..provision import base_images, hygiene, render, wheelhouse
from ..results.cell_log import CellLog
from ..results.store import CellOutcome
from .base import DiskRoom, Runner, SuiteExit
from .common import (
    LineReader,
    WheelsSource,
    own_wheelhouse,
    requirements_failure,
)
from .engine import (
    ENGINE_WAIT_S,
    OWNER_LABEL,
    RUN_LABEL,
    CellFailure,
    build_image,
    gpu_support,
    leftover_containers,
    owner,
    ping,
    wait_for_engine,
)
from .job import CellJob
from .whole import run_whole

SUITE_MOUNT = "/opt/tfmatrix/suite"
# Processes and threads a cell's container may hold at once: TensorFlow starts two pools of one
# thread per core in each of the suite's two processes (plus XLA's and Eigen's), so this leaves
# room for a 256-core host while stopping a fork bomb.
PIDS_LIMIT = 4096
TMPFS_OPTIONS = "rw,exec,nosuid,nodev,mode=1777"   # exec: compilers (torch inductor) load what they build
IDLE = ["sleep", "infinity"]     # the container's own process: suite commands come by docker exec
OUT_MOUNT = "/out"
BENCH_USER = "10001:10001"


def run_request(cell: Cell, image: str, out_dir: Path, command: list[str],
                bench_paths: Sequence[Path] = (), gpu_ids: Sequence[str] | None = None,
                suite_dir: Path = SUITE_DIR, sides: Sequence[str] = ()) -> dict[str, Any]:
    """Everything ``containers.run`` is asked for one cell (pure: the tests inspect it).

    ``bench_paths``: the user's benchmark files, each mounted read-only under
    /opt/tfmatrix/bench and named in $TFMATRIX_SUITE_PLUGINS.
    ``gpu_ids``: the devices a scheduler gave the cell (``--gpus device=0,1``); None: every GPU.
    ``sides``: each path's side, when they are versions of one file (``ab``).
    """
    from docker.types import DeviceRequest, Mount

    env = {**dict(cell.env), "HOME": "/tmp", "PYTHONUNBUFFERED": "1"}   # cell facts travel as flags (suite_args)
    bench = container_paths(bench_paths)
    if bench:
        env[PLUGINS_ENV] = plugins_value([target for _, target in bench], sides)
    request: dict[str, Any] = {
        "image": image,
        "command": list(command),
        "detach": True,
        "network_mode": "none",
        "user": BENCH_USER,
        "working_dir": "/tmp",
        "environment": env,
        "mounts": [Mount(target=SUITE_MOUNT, source=str(suite_dir), type="bind", read_only=True),
                   Mount(target=OUT_MOUNT, source=str(out_dir), type="bind", read_only=False),
                   *(Mount(target=target, source=str(host), type="bind", read_only=True) for host, target in bench)],
        "mem_limit": cell.memory,
        "memswap_limit": cell.memory,
        "labels": {RUN_LABEL: cell.name, OWNER_LABEL: owner()},
        "init": True,
        # least privilege beyond no network and a non-root user: the suite needs no capability, never
        # gains one (setuid binaries included), and a runaway fork cannot take the host's process table
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "pids_limit": PIDS_LIMIT,
        # the image as built, unchanged by what runs in it: its root read-only, and a fresh /tmp (the suite's HOME
        # and working directory, where frameworks keep their caches) in memory, counted in the cell's limit
        "read_only": True,
        "tmpfs": {"/tmp": TMPFS_OPTIONS},
    }
    if cell.target == "gpu":
        request["device_requests"] = [
            DeviceRequest(count=-1, capabilities=[["gpu"]]) if gpu_ids is None
            else DeviceRequest(device_ids=[str(i) for i in gpu_ids], capabilities=[["gpu"]])]
    return request


class DockerRunner(Runner):
    """Each cell in its own image and container."""

    name = "docker"
    interleaves = True
    # two cells' images at once where the host has two cores: 2 builds of tf2.15-cpu and tf2.21-keras3-cpu took
    # 77 s together and 101 s one after the other (docs/measurements-log.md)
    builds_at_once = 2 if (os.cpu_count() or 1) >= 2 else 1
    _bases = threading.Lock()       # one local base image built once when two cells want it at the same time

    def __init__(self, client: Any, registry: str | None = None, gpu_ids: Sequence[str] | None = None,
                 suite_dir: Path = SUITE_DIR, wheels_source: WheelsSource | None = None) -> None:
        self.client = client
        self.wheels_source = wheels_source or own_wheelhouse   # a cluster node's: its own, else the head's
        self.registry = registry     # explicit base registry (matrix/env); None: automatic
        self.gpu_ids = gpu_ids       # GPU cells get these devices (a Ray task's); None: all of them
        self.suite_dir = suite_dir   # mounted read-only in every container (a cluster node's hash-keyed copy)
        for c in leftover_containers(client):   # from a run that was killed hard
            try:
                c.remove(force=True)
            except Exception:   # another runner on this host (a cluster node's other cell) removes it now
                pass

    # -- preparation ---------------------------------------------------------

    def inputs(self, cell: Cell) -> str:
        """The content-hashed image tag: what goes into the image (after any local-base redirect)."""
        return render.render_cell(self.effective_cell(cell)).tag

    def built(self, cell: Cell) -> bool:
        """The cell's image exists in this engine (its content-hashed tag)."""
        try:
            return self._image_exists(self.inputs(cell))
        except Exception:   # the estimate must never cost a run: unknown is "not built"
            return False

    def disk_room(self, cells: Sequence[Cell]) -> DiskRoom | None:
        """The images of ``cells`` not built yet against the free space of the engine's data root (when it is on
        this host)."""
        todo = [c for c in cells if not self.built(c)]
        try:
            root = str((self.client.info() or {}).get("DockerRootDir") or "")
        except Exception:
            return None
        if not todo or not root or not os.path.isdir(root):
            return None
        need = sum(hygiene.environment_estimate(render.build_requirements(c), c.python) for c in todo)
        return DiskRoom(need, shutil.disk_usage(root).free, root,
                        "the images of %d cell(s) not built yet" % len(todo))

    def kept(self) -> list[hygiene.Stored]:
        return hygiene.docker_stored(self.client)

    def used_by(self, cell: Cell) -> list[str]:
        return [self.inputs(cell), self.effective_cell(cell).base.ref]

    def remove(self, item: hygiene.Stored) -> None:
        self.client.images.remove(image=item.ref, noprune=False)

    def held(self) -> int:
        return int((self.client.df() or {}).get("LayersSize") or 0)

    def effective_cell(self, cell: Cell) -> Any:
        """The cell with the base a run would use, decided without pulling anything."""
        if self.registry is not None or self._image_exists(cell.base.ref):
            return cell
        minor = base_images.buildable_python(cell.base.upstream)
        if minor and self._image_exists(base_images.python_ref(minor)):
            return dataclasses.replace(cell, base=dataclasses.replace(cell.base, ref=base_images.python_ref(minor),
                                                                      digest=None))
        return cell

    def _image_exists(self, ref: str) -> bool:
        return base_images.image_exists(self.client, ref)

    def ensure_base(self, cell: Cell, log: CellLog) -> Any:
        """The cell, possibly redirected to a locally built base when no registry answers."""
        with self._bases:
            return self._ensure_base(cell, log)

    def _ensure_base(self, cell: Cell, log: CellLog) -> Any:
        ref = cell.base.ref
        if self._image_exists(ref):
            return cell
        if ref.startswith(base_images.LOCAL_REGISTRY + "/"):
            base_images.ensure_for(self.client, [cell.base.upstream], log)
            return cell
        try:
            log("pulling %s" % ref)
            self.client.images.pull(ref)
            return cell
        except Exception as e:
            pull_error = str(e).splitlines()[0][:200]
        if self.registry is None and base_images.buildable_python(cell.base.upstream):
            log("cannot pull %s (%s): building a local stand-in (air-gapped mode)" % (ref, pull_error))
            local = base_images.ensure_for(self.client, [cell.base.upstream], log)[cell.base.upstream]
            return dataclasses.replace(cell, base=dataclasses.replace(cell.base, ref=local, digest=None))
        raise CellFailure("base image %s is not available and cannot be pulled (%s); mirror it and set "
                          "TFMATRIX_BASE_REGISTRY, or run `nox -s base-images` for python bases" % (ref, pull_error))

    def build(self, cell: Cell, wheels: wheelhouse.WheelSet, log: CellLog) -> tuple[str, float]:
        """Build the cell's image unless its content-hashed tag exists; (tag, seconds)."""
        rendered = render.prepare(cell)
        if self._image_exists(rendered.tag):
            log("image %s exists: not rebuilding" % rendered.tag)
            return rendered.tag, 0.0
        return rendered.tag, build_image(self.client, rendered, wheels, log)

    # -- the run -------------------------------------------------------------

    def skip_reason(self, cell: Cell) -> str | None:
        """Why this runner cannot serve ``cell`` here (it is then ``skipped``), or None."""
        return gpu_support(self.client) if cell.target == "gpu" else None

    def run_cell(self, job: CellJob, log: CellLog, progress: Progress | None) -> CellOutcome:
        return run_whole(self, job, log, progress)

    def prepare(self, job: CellJob, log: CellLog, progress: Progress | None) -> DockerCellEnv | CellOutcome:
        """Base image, wheels and image build as needed, then the cell's container, idle, for suite commands.

        An engine that goes away while this runs (a restart that began just after it answered) is waited for
        and the environment made once more, rather than failing the cell on a race."""
        made = self._prepare(job, log, progress)
        if isinstance(made, CellOutcome) and made.status == "failed" and ping(self.client) is not None \
                and wait_for_engine(self.client, ENGINE_WAIT_S, log) is None:
            made = self._prepare(job, log, progress)
        return made

    def _prepare(self, job: CellJob, log: CellLog, progress: Progress | None) -> DockerCellEnv | CellOutcome:
        cell = job.cell
        timings: dict[str, float] = {}
        runner: dict[str, Any] = {"name": self.name}
        why = self.skip_reason(cell)
        if why:
            return CellOutcome(cell.name, "skipped", why, runner, timings)
        gone = wait_for_engine(self.client, ENGINE_WAIT_S, log)
        if gone is not None:
            return CellOutcome(cell.name, "failed", gone, runner, timings, None, log.tail())
        try:
            if progress:
                progress.phase("base image")
            cell = self.ensure_base(cell, log)
            tag = render.prepare(cell).tag
            if self._image_exists(tag):      # the wheels matter only to a build
                log("image %s exists: not rebuilding" % tag)
                runner["wheels"], timings["build_s"] = {"count": 0, "downloaded": 0, "how": "image exists"}, 0.0
            else:
                if progress:
                    progress.phase("wheels")
                t0 = time.monotonic()
                wheels = self.wheels_source(render.build_requirements(cell), cell.python, log)
                timings["wheels_s"] = time.monotonic() - t0
                runner["wheels"] = {"count": len(wheels.files), "downloaded": wheels.downloaded, "how": wheels.how}
                if progress:
                    progress.phase("build")
                tag, timings["build_s"] = self.build(cell, wheels, log)
        except (CellFailure, base_images.BaseImageError, wheelhouse.WheelhouseError) as e:
            return CellOutcome(cell.name, "failed", requirements_failure(cell, str(e)), runner, timings, None,
                               log.tail())
        image = self.client.images.get(tag)
        runner.update({"image": tag, "image_id": image.id, "base": cell.base.ref, "inputs": tag,
                       "engine": (self.client.version() or {}).get("Version")})
        out_dir = private_out_dir()
        try:
            container = self.client.containers.run(**run_request(cell, tag, out_dir, IDLE, job.bench_paths,
                                                                 self.gpu_ids, self.suite_dir, job.sides))
        except Exception as e:
            shutil.rmtree(out_dir.parent, ignore_errors=True)
            return CellOutcome(cell.name, "failed", "could not start the container: %s" % str(e).splitlines()[0],
                               runner, timings, None, log.tail())
        return DockerCellEnv(self.client, container, cell, out_dir, runner, timings)


class DockerCellEnv:
    """A cell's container, idle (``sleep infinity`` under tini) until asked: each suite command is a ``docker exec``.

    The exec runs as the image's non-root user with the container's network
    (none), mounts (suite read-only) and limits. Measured on this 2-core VM
    (``python -c pass``, median of 8): an exec costs 0.07 s, a fresh
    container 0.25 s, a process on the host 0.12 s; the interleaved schedule
    runs one per slice per round (216 for the default matrix), and the
    cell's plan stays in the live container's output directory.
    """

    def __init__(self, client: Any, container: Any, cell: Cell, out_dir: Path, runner: dict[str, Any],
                 timings: dict[str, float]) -> None:
        self.client = client
        self.container = container
        self.cell = cell
        self.out_dir = out_dir
        self.runner = runner
        self.timings = timings
        self._closed = False

    def suite_path(self, name: str) -> str:
        return OUT_MOUNT + "/" + name

    def run_suite(self, args: Sequence[str], log: CellLog, timeout_s: float, cpus: str | None = None) -> SuiteExit:
        command = ["python", "-m", "suite", *args]
        if cpus:
            command = ["taskset", "-c", cpus, *command]
        t0 = time.monotonic()
        api = self.client.api
        try:
            exec_id = api.exec_create(self.container.id, command, user=BENCH_USER, workdir="/tmp")["Id"]
            stream = api.exec_start(exec_id, stream=True)
            reader = threading.Thread(target=_pump_stream, args=(stream, log), daemon=True)
            reader.start()
            reader.join(timeout=max(1.0, timeout_s))
            if reader.is_alive():          # past the limit: the container goes, and with it the cell
                self.close()
                reader.join(timeout=10)
                return SuiteExit(None, late=True, seconds=time.monotonic() - t0)
            code = api.exec_inspect(exec_id).get("ExitCode")
            oom = False
            if code not in (0, None):
                self.container.reload()
                oom = bool(self.container.attrs.get("State", {}).get("OOMKilled"))
        except Exception as e:         # the engine went away (restarted, stopped) or the container with it
            why = "the Docker engine: %s" % (str(e).splitlines()[0][:200] or type(e).__name__)
            log("the suite command could not run to its end: %s" % why)
            return SuiteExit(None, seconds=time.monotonic() - t0, lost=why)
        return SuiteExit(code, oom=oom, seconds=time.monotonic() - t0)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.container.remove(force=True)
        except Exception:
            pass
        shutil.rmtree(self.out_dir.parent, ignore_errors=True)


def private_out_dir() -> Path:
    """The folder a container writes its results into: world-writable (the container's user is not the host's),
    so it lies inside a private (0700) parent that only this host's user can enter: no other local user can plant
    a file, a link or a FIFO in it before the host reads it. The host reads it as ``foreign`` files all the same
    (the container's own code may have put anything there)."""
    parent = Path(tempfile.mkdtemp(prefix="tfmatrix-out-"))     # 0700
    out = parent / "out"
    out.mkdir()
    os.chmod(out, 0o777)   # written by the container's non-root user (the bind mount ignores the parent's mode)
    return out


def _pump_stream(stream: Any, log: CellLog) -> None:
    lines = LineReader(log)
    try:
        for chunk in stream:
            lines.feed(chunk)
    except Exception:
        pass
    lines.close()
