"""What travels from the head to a Ray node beside the checkout: the wheels a node lacks, the user's benchmark files.

Wheels. A node that must build a cell's image first looks in its own
wheelhouse (``TFMATRIX_WHEELHOUSE``, which may be a path shared with the
head) for the cell's exact wheel set, by the manifest the head's resolution
wrote. Lacking it, the node never asks a package index: it asks the head
(an event on the cell's stream), the head resolves the set in its own
wheelhouse (downloading there if need be), puts each file in Ray's object
store and leaves the list in the run's ``Mailbox``; the node checks each
file's sha256 and stores the set with its manifest, so the next cell or run
there asks nothing. One resolution, the head's, serves every node: the same
wheel files, and so the same installed versions, on every host.

Benchmark files. The user's ``--bench-path`` files are small: they travel
packed in the task's arguments, are unpacked on the node under
``<cache>/bench/<hash>`` and checked against the head's hash before a
container mounts them.
"""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..matrix.user_benchmarks import files_hash
from ..paths import cache_dir
from ..provision import wheelhouse

REPLY_POLL_S = 0.5        # how often a node looks for the head's reply
REPLY_TIMEOUT_S = 3600.0  # a head that resolves wheels longer than this is not coming back


class Mailbox:
    """The run's messages between head and nodes, by key (a Ray actor; the receiving side polls).

    Down: the head's reply to a node's request (``put``/``take``). Up: a cell's
    events, for a head connected through Ray Client, where streaming tasks do
    not exist (``push``/``drain``).
    """

    def __init__(self) -> None:
        self._items: dict[str, Any] = {}
        self._queues: dict[str, list[Any]] = {}

    def put(self, key: str, item: Any) -> None:
        self._items[key] = item

    def take(self, key: str) -> Any:
        return self._items.pop(key, None)

    def push(self, key: str, item: Any) -> None:
        self._queues.setdefault(key, []).append(item)

    def drain(self, key: str) -> list[Any]:
        return self._queues.pop(key, [])


# -- wheels: the head's side ---------------------------------------------------------------------------------------

@dataclass
class Shipment:
    """The wheels one node asked for, as the head put them in the object store (kept alive until received)."""

    reply: tuple[str, Any]              # ("wheels", [(name, sha256, ref), ...]) or ("error", message)
    count: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def record(self) -> dict[str, Any]:
        return {"count": self.count, "bytes": self.bytes, "seconds": round(self.seconds, 1)}


def serve_wheels(requirements: Sequence[str], python: str, put: Callable[[bytes], Any],
                 log: Callable[[str], None], root: Path | None = None) -> Shipment:
    """Resolve the set in the head's wheelhouse and ``put`` each file; an error reply when that fails."""
    t0 = time.monotonic()
    try:
        wheels = wheelhouse.ensure(requirements, python, log=log, root=root)
    except wheelhouse.WheelhouseError as e:
        return Shipment(("error", str(e)), seconds=time.monotonic() - t0)
    items, size = [], 0
    for f in wheels.files:
        data = f.read_bytes()
        size += len(data)
        items.append((f.name, hashlib.sha256(data).hexdigest(), put(data)))
        del data
    return Shipment(("wheels", items), len(items), size, time.monotonic() - t0)


# -- wheels: the node's side -----------------------------------------------------------------------------------------

@dataclass
class HeadWheels:
    """A node's source of wheels (``DockerRunner.wheels_source``): its own wheelhouse, else the head's."""

    ask: Callable[[tuple[str, Any]], None]     # sends an event up the cell's stream to the head
    take: Callable[[str], Any]                 # the head's reply for a key, or None yet
    key: str                                   # this attempt's mailbox key
    fetch: Callable[[Any], bytes]              # an object ref's bytes (ray.get)
    timeout_s: float = REPLY_TIMEOUT_S
    poll_s: float = REPLY_POLL_S
    root: Path | None = None                   # this node's wheelhouse (default: wheelhouse_dir())
    received: dict[str, Any] = field(default_factory=dict)

    def __call__(self, requirements: Sequence[str], python: str, log: Callable[[str], None]) -> wheelhouse.WheelSet:
        have = wheelhouse.cached(requirements, python, self.root)
        if have is not None:
            return have
        t0 = time.monotonic()
        log("this node's wheelhouse (%s) lacks the cell's wheels: asking the head"
            % (self.root or wheelhouse.wheelhouse_dir()))
        self.ask(("need_wheels", {"requirements": list(requirements), "python": python, "key": self.key}))
        kind, value = self._reply()
        if kind != "wheels":
            raise wheelhouse.WheelhouseError("the head could not provide the wheels: %s" % value)
        size = 0

        def checked() -> Iterator[tuple[str, bytes]]:      # one file in memory at a time
            nonlocal size
            for name, sha, ref in value:
                data = self.fetch(ref)
                if hashlib.sha256(data).hexdigest() != sha:
                    raise wheelhouse.WheelhouseError("%s changed on its way from the head (sha256 mismatch)" % name)
                size += len(data)
                yield name, data

        stored = wheelhouse.store(requirements, python, checked(), self.root)
        self.ask(("wheels_received", self.key))
        self.received.update({"count": len(stored.files), "bytes": size, "seconds": round(time.monotonic() - t0, 1)})
        log("received %d wheels (%.0f MB) from the head in %.1f s" % (
            len(stored.files), self.received["bytes"] / 1e6, self.received["seconds"]))
        return stored

    def _reply(self) -> tuple[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            item = self.take(self.key)
            if item is not None:
                return tuple(item)
            time.sleep(self.poll_s)
        return ("error", "no answer from the head in %d s" % self.timeout_s)


# -- benchmark files -------------------------------------------------------------------------------------------------

def pack_files(paths: Sequence[Path]) -> bytes:
    """The user's benchmark files and directories as one tar: ``<i>/<name>`` for the i-th path."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for i, p in enumerate(paths):
            tar.add(str(p), arcname="%d/%s" % (i, Path(p).name),
                    filter=lambda t: None if "__pycache__" in t.name or t.name.endswith(".pyc") else t)
    return buf.getvalue()


def unpack_files(blob: bytes, names: Sequence[str], expected: str, root: Path | None = None) -> tuple[Path, ...]:
    """The files of ``pack_files`` on this node, under ``<cache>/bench/<expected>``; checked against the hash."""
    target = (root or cache_dir() / "bench") / expected

    def fill(staged: Path) -> None:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            tar.extractall(staged, filter="data")
        got = files_hash([staged / str(i) / name for i, name in enumerate(names)])
        if got != expected:
            raise ValueError("the benchmark files that reached this node hash to %s, not the head's %s"
                             % (got, expected))

    settle_dir(target, fill)
    return tuple(target / str(i) / name for i, name in enumerate(names))


def settle_dir(target: Path, fill: Callable[[Path], None]) -> None:
    """Make ``target`` once per node: ``fill`` a staging path beside it, then rename it into place, complete.

    Readers (a container's read-only mount) never see half of it; ``fill``
    raises when what arrived is wrong, and nothing is left; a copy another
    task finished first wins. Directories and files become readable by the
    containers' non-root user.
    """
    if (target / ".complete").exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
        staged = tmp / "new"
        fill(staged)
        (staged / ".complete").touch()
        for path in [staged, *staged.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else path.stat().st_mode | 0o444)
        try:
            os.replace(staged, target)
        except OSError:                   # another task on this node put it there first
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
