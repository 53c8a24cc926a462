"""The ray runner: every cell a Ray task on a cluster of hosts, scheduled by what the cell needs.

A CPU cell asks for the CPUs its preset is sized for (``[cluster] cpus``, 2),
a GPU cell for one GPU; a cell with a ``pool`` also asks for a sliver of that
Ray custom resource, so it lands only on the nodes that declare the pool
(``ray start --resources '{"h100": 1}'``): one hardware model per pool keeps
cells comparable. Before a cell is submitted, the cluster's nodes are checked:
a cell no live node can serve is ``skipped`` with the reason, never queued
forever.

On the node, ``runners.node.cell_task`` runs the ordinary Docker runner (venv
where the node has no engine) and streams log lines, phases and finally the
outcome back; here they go to the cell's log and the progress display, and
``execution`` writes the results file atomically as for any runner. Ray's
container ``runtime_env`` is never used: the cells' images need no Ray inside.

Faults: a node (or its worker) that dies mid-cell costs one retry, placed by
Ray on a live node of the same pool; a second loss records the cell
``failed`` with both reasons. ``cancel`` (Ctrl-C on the head) stops every
task, lets the workers remove their containers, then sweeps each live node
for containers whose worker was killed.

Security (``cluster_auth``): joining a cluster over the network without
token authentication prints a warning line; a cluster that refuses this
driver's token is one error line saying what to set.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..errors import UserError
from ..matrix import Cell
from ..paths import REPO_ROOT
from ..progress import Progress
from ..provision import render
from ..results.cell_log import CellLog
from ..results.store import CellOutcome
from . import shipping
from .base import Runner
from .cluster_auth import AUTH_MODE_ENV, SECURING, address_host, auth_refused, auth_warning, refusals_dropped
from .job import CellJob
from .node import Event
from .placement import Needs, capacity, needs, unserved

CANCEL_GRACE_S = 30.0       # how long cancelled tasks get to remove their containers before they are killed
# What the head's checkout does not send to the nodes (the job's working_dir: the suite, tfmatrix, images/).
EXCLUDES = [".git", "build", "reports", ".nox", ".venv", "tests", "docs", "**/__pycache__", ".mypy_cache",
            ".ruff_cache", ".pytest_cache", "*.egg-info"]


class NodeLost(Exception):
    """The task's node or worker died (or its result was lost) before the cell ended."""


def classify(error: BaseException) -> str:
    """"cancelled", "lost" (node or worker died: retry elsewhere) or "error" (the task itself raised)."""
    import ray.exceptions as rex

    if isinstance(error, rex.TaskCancelledError):
        return "cancelled"
    if isinstance(error, rex.RayTaskError):
        return "error"
    if isinstance(error, rex.RayError):
        return "lost"
    return "error"


CLIENT_WAIT_S = 60.0    # a Ray Client server that answers but cannot start a session yet: how long to wait for it
CLIENT_RETRY_S = 2.0


def client_not_ready(error: BaseException) -> bool:
    """Whether joining failed because a Ray Client server is up but not ready (worth waiting for), not for good.

    On a loaded host the head's client server accepts the connection before
    it can start the session it proxies, and answers "Initialization failure
    from server" (a ConnectionAbortedError); seen once in the test suite on
    a fresh clone. A wrong address or a stopped cluster fails otherwise.
    """
    return isinstance(error, ConnectionAbortedError) or "Initialization failure from server" in str(error)


def node_name(facts: Mapping[str, Any]) -> str:
    """How progress lines name a node: host and the start of its Ray node id."""
    return "%s/%s" % (facts.get("host", "?"), str(facts.get("node_id", "?"))[:8])


class RayRunner(Runner):
    """Cells as Ray tasks on a cluster (``execution`` runs ``slots`` at once; whole cells: sequential schedule)."""

    name = "ray"
    slots = 64               # cells in flight at once: Ray queues them by resources

    client_wait_s = CLIENT_WAIT_S

    def __init__(self, address: str, registry: str | None = None, cpus: int = 2, connect: bool = True) -> None:
        self.address = address
        self.registry = registry
        self.cpus = cpus
        self._lock = threading.Lock()
        self._running: dict[str, Any] = {}     # cell name -> its task's ObjectRefGenerator
        self._cancelled = threading.Event()
        self._mailbox: Any = None
        if connect:
            self._connect()

    def _connect(self) -> None:
        try:
            import ray
        except ImportError:
            raise UserError("--runner ray: Ray is not installed in this environment; `nox -s matrix -- --runner ray "
                            "...` installs it, or pip install \"ray[default]==<the cluster's version>\"") from None
        deadline = time.monotonic() + (self.client_wait_s if self.address.startswith("ray://") else 0.0)
        said = False
        while True:
            e = self._init(ray)
            if e is None:
                # read after joining: under auto, Ray turns token authentication on here when it finds a token
                line = auth_warning(self.address, self._joined_host(ray), os.environ)
                if line:
                    print(f"tfmatrix: warning: {line}", file=sys.stderr)
                return
            first = (str(e).splitlines() or [type(e).__name__])[0][:200]
            if auth_refused(e):
                raise UserError(f"--runner ray: the Ray cluster at {self.address} refused this driver's "
                                f"authentication: it uses token authentication; set {AUTH_MODE_ENV}=token and "
                                "the cluster's token (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token) "
                                f"here too ({SECURING})") from None
            if not (client_not_ready(e) and time.monotonic() < deadline):
                raise UserError("--runner ray: cannot join the Ray cluster at %s (%s); start one with `ray start "
                                "--head` and pass its address with --address" % (self.address, first)) from None
            if not said:
                self._say(f"the Ray Client server at {self.address} is not ready yet ({first}): waiting up to "
                          f"{self.client_wait_s:.0f} s")
                said = True
            try:
                ray.shutdown()
            except Exception:
                pass
            time.sleep(CLIENT_RETRY_S)

    def _init(self, ray: Any) -> Exception | None:
        """One ``ray.init`` into the cluster: None once joined, else what it raised. Ray's own lines about a refused
        token are left out (``_connect`` says that in one line); its other lines pass as they come."""
        with refusals_dropped():
            try:
                ray.init(address=self.address, runtime_env={"working_dir": str(REPO_ROOT), "excludes": EXCLUDES},
                         log_to_driver=False, logging_level=logging.ERROR)
            except Exception as e:
                return e
        return None

    def _joined_host(self, ray: Any) -> str | None:
        """The host of the cluster this driver joined: the address's, or under ``auto`` its GCS's (None unknown)."""
        if self.address != "auto":
            return address_host(self.address)
        try:
            return address_host(str(ray.get_runtime_context().gcs_address))
        except Exception:
            return None

    def _say(self, text: str) -> None:
        from ..progress import stderr_console

        stderr_console().print(f"[tfmatrix] {text}", markup=False, highlight=False)

    # -- Runner --------------------------------------------------------------

    def inputs(self, cell: Cell) -> str:
        """The cell's content-hashed image tag (each node builds, or reuses, exactly that image)."""
        return render.render_cell(cell).tag

    def nodes(self) -> list[dict[str, Any]]:
        import ray

        return list(ray.nodes())

    def width(self, cells: Sequence[Any]) -> int:
        """How many of ``cells`` the cluster runs at once now."""
        return capacity([needs(c, self.cpus) for c in cells], self.nodes())

    def skip_reason(self, cell: Cell) -> str | None:
        return unserved(needs(cell, self.cpus), self.nodes())

    def run_cell(self, job: CellJob, log: CellLog, progress: Progress | None) -> CellOutcome:
        cell = job.cell
        need = needs(cell, self.cpus)
        why = unserved(need, self.nodes())
        if why:
            return CellOutcome(cell.name, "skipped", why, {"name": self.name, "address": self.address})
        lost: list[str] = []
        while True:
            try:
                outcome = self._follow(cell, self._submit(job, need), log, progress)
                break
            except NodeLost as e:
                lost.append(str(e))
                log("attempt %d lost: %s" % (len(lost), e))
                again = unserved(need, self.nodes())
                if len(lost) == 2 or again:
                    reason = "; ".join(lost) + ("; retried once on another node, lost again" if len(lost) == 2
                                                else "; no other node can take it: " + str(again))
                    return CellOutcome(cell.name, "failed", reason, {"name": self.name, "attempts": len(lost)},
                                       {}, None, log.tail())
                if progress:
                    progress.phase("retry", "one retry on another node of %s" % (cell.pool or "the cluster"))
        outcome.runner.update({"attempts": len(lost) + 1, "address": self.address, "inputs": self.inputs(cell)})
        if lost:
            outcome.runner["lost"] = lost
        return outcome

    # -- one attempt -----------------------------------------------------------

    def _submit(self, job: CellJob, need: Needs) -> Iterator[Any]:
        """Start the job's task; an iterator of its event refs."""
        import ray

        from .node import UP, cell_task, relayed_cell_task

        if self._cancelled.is_set():
            raise KeyboardInterrupt("interrupted")
        cell = job.cell
        key = "%s#%s" % (cell.name, uuid.uuid4().hex[:12])
        bench = shipping.pack_files(job.bench_paths) if job.bench_paths else None
        mailbox = self.mailbox()
        if self.client_mode:      # Ray Client has no streaming tasks: the node relays its events through the mailbox
            relayed = ray.remote(relayed_cell_task).options(name="tfmatrix:" + cell.name, **need.options())
            ref = relayed.remote(job, self.registry, mailbox, key, bench)
            with self._lock:
                self._running[cell.name] = ref
            return _polled(ref, lambda: ray.get(mailbox.drain.remote(UP + key)))
        task = ray.remote(cell_task).options(num_returns="streaming", name="tfmatrix:" + cell.name, **need.options())
        stream = task.remote(job, self.registry, mailbox, key, bench)
        with self._lock:
            self._running[cell.name] = stream
        return _gets(stream)

    @property
    def client_mode(self) -> bool:
        """Connected through Ray Client (``ray://``): this process is not part of the cluster."""
        return self.address.startswith("ray://")

    def mailbox(self) -> Any:
        """The run's ``shipping.Mailbox`` actor (no CPU: it may live on a head that runs no cells)."""
        import ray

        with self._lock:
            if self._mailbox is None:
                self._mailbox = ray.remote(shipping.Mailbox).options(num_cpus=0).remote()
            return self._mailbox

    def _ship_wheels(self, ask: Mapping[str, Any], where: str, log: CellLog) -> shipping.Shipment:
        """Answer a node's request for a wheel set: the head's files, through the object store."""
        import ray

        log("node %s lacks the wheels: sending the head's" % where)
        sent = shipping.serve_wheels(ask["requirements"], ask["python"], ray.put, log)
        self.mailbox().put.remote(ask["key"], sent.reply)
        if sent.count:
            log("sent %d wheels (%.0f MB) to node %s in %.1f s" % (sent.count, sent.bytes / 1e6, where, sent.seconds))
        return sent

    def _follow(self, cell: Cell, events: Iterator[Any], log: CellLog, progress: Progress | None) -> CellOutcome:
        """Relay one attempt's events to the log and progress; its outcome, or NodeLost."""
        where = "?"
        submitted, queued = time.monotonic(), 0.0    # until a node starts it, the cell waits in Ray's queue
        shipped: dict[str, shipping.Shipment] = {}    # the wheels this attempt's node asked for, alive till received
        sent: dict[str, Any] = {}
        try:
            for kind, value in events:
                if kind == "start":
                    queued = time.monotonic() - submitted
                    where = node_name(value)
                    log("on node %s (%s)%s" % (where, value.get("ip"), ", GPUs %s" % ",".join(value["gpu_ids"])
                                               if value.get("gpu_ids") else ""))
                    if progress is not None:
                        progress.placed(where)
                elif kind == "lines":
                    for line in value:
                        log(line)
                elif kind == "phase" and progress:
                    progress.phase(value)
                elif kind == "need_wheels":
                    shipped[value["key"]] = self._ship_wheels(value, where, log)
                    sent = shipped[value["key"]].record()
                elif kind == "wheels_received":
                    shipped.pop(value, None)
                elif kind == "outcome":
                    outcome: CellOutcome = value
                    outcome.log_tail = log.tail()
                    outcome.timings["queued_s"] = outcome.timings.get("queued_s", 0.0) + queued
                    if sent:
                        outcome.runner["wheels_sent"] = sent
                    return outcome
        except NodeLost:
            raise
        except Exception as e:
            what = classify(e)
            if what == "cancelled" or self._cancelled.is_set():
                raise KeyboardInterrupt("interrupted") from None
            if what == "lost":
                raise NodeLost("node %s was lost mid-cell (%s)" % (where, type(e).__name__)) from None
            cause = getattr(e, "cause", None) or e
            return CellOutcome(cell.name, "failed", "%s on node %s: %s" % (type(cause).__name__, where, cause),
                               {"name": self.name}, {}, None, log.tail())
        finally:
            with self._lock:
                self._running.pop(cell.name, None)
        raise NodeLost("node %s ended the cell without an outcome" % where)

    # -- Ctrl-C ------------------------------------------------------------------

    def cancel(self, grace_s: float = CANCEL_GRACE_S) -> None:
        """Stop every task: each worker removes its containers; those that do not in time are killed and swept."""
        import ray

        self._cancelled.set()
        with self._lock:
            streams = list(self._running.values())
        for s in streams:
            ray.cancel(s)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and self._running:
            time.sleep(0.2)
        with self._lock:
            stuck = list(self._running.values())
        for s in stuck:
            ray.cancel(s, force=True)
        self.sweep()

    def sweep(self, timeout_s: float = 60.0) -> int:
        """On every live node, remove the tfmatrix containers whose worker is gone; how many."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from .node import sweep_leftovers

        task = ray.remote(sweep_leftovers)
        refs = [task.options(num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(
            n["NodeID"], soft=False)).remote() for n in self.nodes() if n.get("Alive")]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout_s)
        removed = 0
        for ref in ready:
            try:
                removed += int(ray.get(ref))
            except ray.exceptions.RayError:    # that node died meanwhile: nothing of it to sweep from here
                pass
        return removed


def _gets(stream: Any) -> Iterator[Event]:
    """The values of a streaming task's refs, in order."""
    import ray

    for ref in stream:
        yield ray.get(ref)


def _polled(ref: Any, drain: Callable[[], list[Event]], poll_s: float = 0.5) -> Iterator[Event]:
    """A relayed task's events as they arrive; its failure (a lost node, say) raised once it ends."""
    import ray

    while True:
        ready, _ = ray.wait([ref], timeout=poll_s)
        yield from drain()
        if ready:
            ray.get(ref)
            yield from drain()
            return


def connect_runner(address: str | None, registry: str | None, cpus: int,
                   factory: Callable[..., RayRunner] = RayRunner) -> RayRunner:
    """The ray runner for ``--address`` or ``[cluster] address``; a one-line error without either."""
    from ..matrix import PATTERNS

    if not address:
        raise UserError("--runner ray: no cluster address; pass --address ray://HEAD:10001 (or HOST:6379, or auto) "
                        "or set [cluster] address in matrix.toml")
    if not PATTERNS["address"].fullmatch(address):
        raise UserError("--address %r is not a Ray cluster address; write ray://HEAD:10001, HOST:6379 or auto"
                        % address)
    return factory(address, registry, cpus)
