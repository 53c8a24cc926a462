"""The Docker engine itself, apart from the runner: a client that answers, whether it can give containers a GPU,
waiting through an engine restart, which labelled containers are leftovers of a process killed hard, and an image
built from a rendered cell and its wheels (``build_image``, the wheels served to the build: ``serve_wheels``).

Used by the Docker runner, a cluster's nodes (``node.py``), the runner choice (``local.py``) and the disk and setup
commands, none of which needs the runner to ask these.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..provision import render, wheelhouse
from .common import GPU_WITHOUT_DOCKER

RUN_LABEL = "org.tfmatrix.run"
OWNER_LABEL = "org.tfmatrix.owner"     # "<host>:<pid>" of the tfmatrix process that started the container
WHEELS_ARG = "TFMATRIX_WHEELS"         # the build argument that names the wheels' server (images/cell.Dockerfile.j2)
WHEELS_PORTS = (20000, 40000)          # where a build's wheel server listens: a port from the image tag in this range
ENGINE_WAIT_S = 120.0                  # how long a cell waits for an engine that stopped answering (a restart)
NO_GPU_RUNTIME = ("the Docker engine has no NVIDIA runtime (install the NVIDIA Container Toolkit); "
                  "a GPU cell is never run on the CPU instead. Without Docker's GPU: " + GPU_WITHOUT_DOCKER)


def engine(timeout: int = 10) -> Any | None:
    """A docker client whose engine answers, or None."""
    try:
        import docker

        client = docker.from_env(timeout=timeout)
        client.ping()
        return client
    except Exception:
        return None


def gpu_support(client: Any) -> str | None:
    """None when the engine can give containers GPUs; else why not."""
    runtimes = (client.info() or {}).get("Runtimes") or {}
    if "nvidia" in runtimes or shutil.which("nvidia-container-runtime-hook") or shutil.which("nvidia-ctk"):
        return None
    return NO_GPU_RUNTIME


def owner(pid: int | None = None) -> str:
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_leftover(labels: dict[str, str]) -> bool:
    """A tfmatrix container whose starting process is gone (killed hard): safe to remove.

    Another tfmatrix running now (another checkout, a test) owns its containers:
    removing every labelled container killed that run's cell (exit code 137).
    """
    host, _, pid = labels.get(OWNER_LABEL, "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return not host       # unowned (older tfmatrix): a leftover; another host's: not ours to judge
    return int(pid) != os.getpid() and not _alive(int(pid))


def ping(client: Any) -> str | None:
    """None when the engine answers on a new connection, else why not. The client's pooled connections are dropped
    first: a daemon shutting down still answers on a kept-alive connection after its socket is gone."""
    try:
        client.api.close()
    except Exception:
        pass
    try:
        client.ping()
        return None
    except Exception as e:
        return str(e).splitlines()[0][:160] if str(e) else type(e).__name__


def wait_for_engine(client: Any, limit_s: float, log: Any, poll_s: float = 2.0) -> str | None:
    """None once the engine answers (at once, or within ``limit_s`` while it restarts); else why it is gone."""
    t0, said = time.monotonic(), False
    while True:
        last = ping(client)
        if last is None:
            if said:
                log("the Docker engine answers again after %.0f s" % (time.monotonic() - t0))
            return None
        if not said:
            text = "the Docker engine does not answer (%s): waiting up to %.0f s for it" % (last, limit_s)
            log(text)
            if limit_s > 0:          # on screen too: the run looks stalled while it waits
                sys.stderr.write("[tfmatrix] %s\n" % text)
            said = True
        if time.monotonic() - t0 >= limit_s:
            return "the Docker engine did not answer for %.0f s (%s)" % (limit_s, last)
        time.sleep(poll_s)


def leftover_containers(client: Any) -> list[Any]:
    return [c for c in client.containers.list(all=True, filters={"label": RUN_LABEL}, ignore_removed=True)
            if is_leftover(dict(c.labels or {}))]


class CellFailure(Exception):
    """A step before the suite ran failed; becomes a ``failed`` outcome."""


def build_image(client: Any, rendered: render.RenderedCell, wheels: wheelhouse.WheelSet,
                log: Callable[[str], None], nocache: bool = False) -> float:
    """Build ``rendered`` as its tag from a context of its files, ``wheels`` served to the build over 127.0.0.1
    (never a layer of the image: ``serve_wheels``); the seconds it took."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tfmatrix-ctx-") as tmp, serve_wheels(wheels.files, rendered.tag) as url:
        ctx = Path(tmp)
        for name, text in rendered.files.items():
            (ctx / name).write_text(text)
        log("building %s (%d wheels from %s)" % (rendered.tag, len(wheels.files), url))
        import docker.errors

        try:
            for chunk in client.api.build(path=str(ctx), tag=rendered.tag, rm=True, forcerm=True, pull=False,
                                          nocache=nocache, decode=True, network_mode="host",
                                          buildargs={WHEELS_ARG: url}):
                if chunk.get("stream", "").strip():
                    log(chunk["stream"].rstrip())
                if "error" in chunk:
                    raise CellFailure("image build failed: %s" % chunk["error"].strip().splitlines()[-1])
        except docker.errors.APIError as e:
            raise CellFailure("image build failed: %s" % e)
    return time.monotonic() - t0


@contextlib.contextmanager
def serve_wheels(files: Sequence[Path], tag: str) -> Iterator[str]:
    """A server on 127.0.0.1 for one build: exactly ``files`` (hard links in a directory of their own; the uv
    wheel also as ``tools/uv.whl``, the name the Dockerfile unpacks it by), read-only, gone when the build is.

    The build runs on the host's network to reach it (the container a cell runs in never has one). Its port is
    derived from the image ``tag`` where it is free, so a rebuild of the same image keeps the same build
    argument and the engine's cache for its install layer; else any free port.
    """
    with tempfile.TemporaryDirectory(prefix="tfmatrix-wheels-") as tmp:
        root = Path(tmp)
        (root / "tools").mkdir()
        for f in files:
            _link_or_copy(f, root / f.name)
            if f.name.startswith("uv-") and f.name.endswith(".whl"):
                _link_or_copy(f, root / "tools" / "uv.whl")
        handler = functools.partial(_QuietHandler, directory=str(root))
        server = _bind(handler, WHEELS_PORTS[0] + int(hashlib.sha256(tag.encode()).hexdigest()[:8], 16)
                       % (WHEELS_PORTS[1] - WHEELS_PORTS[0]))
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="tfmatrix-wheels",
                                  daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Files and directory listings (what pip's and uv's ``--find-links`` read), nothing logged to stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _WheelServer(http.server.ThreadingHTTPServer):
    """An installer that hangs up mid-file (uv reads a wheel's metadata from its end, then stops) is no error of
    the build: nothing of it is printed."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


def _bind(handler: Any, port: int) -> _WheelServer:
    try:
        return _WheelServer(("127.0.0.1", port), handler)
    except OSError:         # taken (another build, another program): any free port
        return _WheelServer(("127.0.0.1", 0), handler)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
