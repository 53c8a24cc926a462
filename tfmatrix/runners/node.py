"""What a Ray node does with one cell: check the suite's hash, run the Docker (or venv) runner, stream it back.

``cell_task`` is the body of the Ray task ``runners.cluster`` submits; it runs
in a Ray worker on whichever node the scheduler picked, inside the checkout
that travelled as the job's ``working_dir`` (Ray content-hashes that archive;
the suite's own hash is checked again here against the head's). It is a
generator (a Ray streaming task): it yields ``Event`` tuples as the cell goes,
so the head's log and progress follow the node live, and the outcome last.

The node runs the same runners as a single host, with the same skip rules: the
Docker runner when the node's engine answers (GPU cells get exactly the
devices Ray assigned, ``--gpus device=<ids>``), else the venv runner. Images
are cached by the node's own engine under the same content-hashed tags, so a
second run there does not rebuild. Interrupted (the head cancelled the task),
the worker removes the containers it started before it lets go.
"""
from __future__ import annotations

import dataclasses
import os
import queue
import shutil
import socket
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from ..matrix.records import Cell
from ..paths import SUITE_DIR, cache_dir
from ..results.cell_log import CellLog
from ..results.store import CellOutcome, host_summary, suite_fingerprint
from . import docker, engine, shipping
from .base import Runner
from .job import CellJob
from .local import local_runner
from .venv import VENV_ROOT_ENV

Event = tuple[str, Any]
"""("start", node facts) | ("lines", [log lines]) | ("phase", phase) | ("outcome", CellOutcome)."""

FLUSH_S = 0.5      # how often buffered log lines travel to the head


class _Forward:
    """Stands in for the head's ``Progress`` on the node: phases and suite lines go to the head's queue."""

    def __init__(self, events: queue.Queue[Event]) -> None:
        self.events = events

    def phase(self, phase: str, detail: str = "") -> None:
        self.events.put(("phase", phase))

    def suite_output(self, line: str) -> None:
        self.events.put(("line", line))


def node_facts(gpu_ids: list[str]) -> dict[str, Any]:
    """Where the task landed: host name, Ray node id and address, its GPUs, this worker's pid."""
    import ray

    ctx = ray.get_runtime_context()
    return {"host": socket.gethostname(), "node_id": ctx.get_node_id(), "ip": ray.util.get_node_ip_address(),
            "gpu_ids": gpu_ids, "pid": os.getpid(), "started": time.time()}


def node_runner(registry: str | None, gpu_ids: list[str], suite_dir: Path, wheels: Any = None) -> Runner:
    """The runner this node can offer: Docker when its engine answers, else the venv runner."""
    root = os.environ.get(VENV_ROOT_ENV)   # virtualenvs in the node's cache: the job's working_dir goes with the job
    runner, _ = local_runner("auto", registry, gpu_ids or None, suite_dir, wheels,
                             Path(root) if root else cache_dir() / "venvs")
    return runner


def cached_suite(expected: str) -> Path | None:
    """The suite in this node's cache, keyed by its content hash; None when the job's copy is not that suite.

    Copied once from the job's ``working_dir`` (which Ray may clean up while
    another task still runs) and checked against the head's hash, so what a
    container mounts never changes under it and a second run copies nothing.
    """
    root = cache_dir() / "suites" / expected
    if not (root / ".complete").exists() and suite_fingerprint() != expected:
        return None

    def fill(staged: Path) -> None:
        shutil.copytree(SUITE_DIR, staged, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        if suite_fingerprint(staged) != expected:
            raise ValueError("the suite changed while it was copied")

    try:
        shipping.settle_dir(root, fill)
    except ValueError:
        return None
    return root


def device_request(cell: Cell, gpu_ids: list[str]) -> dict[str, Any] | None:
    """The ``--gpus`` request a GPU cell's container is given here (recorded whether or not it can run)."""
    if cell.target != "gpu":
        return None
    (request,) = docker.run_request(cell, "image", Path("/out"), [], gpu_ids=gpu_ids or None)["device_requests"]
    return dict(request)


def cell_task(job: CellJob, registry: str | None, mailbox: Any = None, key: str = "",
              bench: bytes | None = None) -> Iterator[Event]:
    """Run the job's cell on this node; yields events, the outcome last. A Ray streaming task's body.

    ``mailbox``/``key``: where the head answers this attempt's request for
    wheels (``shipping.HeadWheels``); ``bench``: the user's benchmark files,
    packed (``shipping.pack_files``).
    """
    import ray

    cell = job.cell
    gpu_ids = [str(i) for i in ray.get_gpu_ids()] if cell.target == "gpu" else []
    facts = node_facts(gpu_ids)
    yield ("start", facts)
    placement = {**facts, "device_request": device_request(cell, gpu_ids)}
    suite_dir = cached_suite(job.asked.suite or suite_fingerprint())
    problem = None if suite_dir else "the suite that reached node %s (hash %s) is not the head's (%s)" % (
        facts["host"], suite_fingerprint(), job.asked.suite)
    if bench is not None and not problem:
        try:
            names = [p.name for p in job.bench_paths]
            job = dataclasses.replace(job, bench_paths=shipping.unpack_files(bench, names, job.asked.bench or ""))
        except (ValueError, OSError, tarfile.TarError) as e:
            problem = "the benchmark files did not arrive intact on node %s: %s" % (facts["host"], e)
    if problem or suite_dir is None:
        yield ("outcome", CellOutcome(cell.name, "failed", str(problem), {"name": "ray", "node": placement}))
        return
    events: queue.Queue[Event] = queue.Queue()
    result: list[CellOutcome] = []
    wheels = None if mailbox is None else shipping.HeadWheels(
        events.put, lambda k: ray.get(mailbox.take.remote(k)), key, ray.get)
    with tempfile.TemporaryDirectory(prefix="tfmatrix-node-") as tmp:
        log = CellLog(Path(tmp) / "cell.log", cast(Any, _Forward(events)))

        def work() -> None:
            try:
                runner = node_runner(registry, gpu_ids, suite_dir, wheels)
                result.append(runner.run_cell(job, log, cast(Any, _Forward(events))))
            except Exception as e:  # a bug or an engine failure: the cell fails, the node goes on
                result.append(CellOutcome(cell.name, "failed", "%s: %s" % (type(e).__name__, e), {}, {}))

        thread = threading.Thread(target=work, name="tfmatrix-cell", daemon=True)
        thread.start()
        try:
            while thread.is_alive() or not events.empty():
                thread.join(timeout=FLUSH_S)
                for event in _drain(events):  # noqa: UP028 (Ray resumes generators with send(): no yield from)
                    yield event
        except BaseException:          # cancelled by the head (KeyboardInterrupt), or the worker is exiting
            remove_own_containers()
            raise
        log.close()
    outcome = result[0]
    outcome.runner = {**outcome.runner, "name": "ray", "node_runner": outcome.runner.get("name"),
                      "node": {**placement, "ended": time.time()}}
    if wheels is not None and wheels.received:
        outcome.runner["wheels_from_head"] = dict(wheels.received)
    outcome.host = host_summary()
    yield ("outcome", outcome)


def relayed_cell_task(job: CellJob, registry: str | None, mailbox: Any, key: str, bench: bytes | None = None
                      ) -> None:
    """``cell_task`` for a head on Ray Client (``ray://``), which has no streaming tasks: events go up the mailbox."""
    import ray

    for event in cell_task(job, registry, mailbox, key, bench):
        ray.get(mailbox.push.remote(UP + key, event))


UP = "up:"          # the mailbox key prefix of a cell's events on their way to the head


def _drain(events: queue.Queue[Event]) -> list[Event]:
    """Queued events, suite lines gathered into one ``lines`` event per flush."""
    out: list[Event] = []
    lines: list[str] = []
    while True:
        try:
            kind, value = events.get_nowait()
        except queue.Empty:
            break
        if kind == "line":
            lines.append(value)
        else:
            if lines:
                out.append(("lines", lines))
                lines = []
            out.append((kind, value))
    if lines:
        out.append(("lines", lines))
    return out


def remove_own_containers() -> int:
    """Remove the containers this worker process started (the Docker runner labels them with host:pid)."""
    client = engine.engine()
    if client is None:
        return 0
    return _removed(client.containers.list(all=True, ignore_removed=True,
                                           filters={"label": "%s=%s" % (engine.OWNER_LABEL, engine.owner())}))


def sweep_leftovers() -> int:
    """Remove this node's tfmatrix containers whose worker is gone (a force-cancelled or crashed task)."""
    client = engine.engine()
    if client is None:
        return 0
    return _removed(engine.leftover_containers(client))


def _removed(containers: Sequence[Any]) -> int:
    """Remove ``containers`` (one already gone or busy is left to the next sweep); how many there were."""
    for c in containers:
        try:
            c.remove(force=True)
        except Exception:
            pass
    return len(containers)
