"""One run at a time per checkout: an advisory lock on ``build/run.lock``.

Two ``matrix``/``cell`` runs on one checkout would interleave writes into
``reports/``, build the same image twice at once, and (worse) the Docker
runner removes leftover tfmatrix containers when it starts, which would be the
other run's live container. So a run takes this lock before anything else and
a second run is refused with one line saying who holds it.

``fcntl.flock`` is released by the kernel when the holder exits, however it
exits (SIGKILL included): a stale lock file never blocks a later run.
"""
from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from .. import paths
from ..errors import UserError


def holder_text(path: Path) -> str:
    """What the holder wrote into the lock file ("pid 123, `matrix`, since 12:00:03"), or ""."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


@contextmanager
def run_lock(path: Path, what: str) -> Iterator[None]:
    """Hold ``path`` exclusively for the block, or raise a one-line UserError naming the holder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = holder_text(path) or "another process"
            raise UserError(f"{path}: another tfmatrix run on this checkout holds the lock ({holder}); wait for it "
                            "to finish or stop it, then run again") from None
        os.ftruncate(fd, 0)
        os.write(fd, (f"pid {os.getpid()}, `{what}`, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n").encode())
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def command_line(argv: list[str] | None = None) -> str:
    """How this process was started, short: "python -m tfmatrix cell tf2.1-cpu"."""
    args = sys.argv[1:] if argv is None else argv
    return " ".join(["python -m tfmatrix", *args])[:200]


def checkout_lock() -> AbstractContextManager[None]:
    """This checkout's run lock (``build/run.lock``), held in the name of this process's command line.

    ``paths.BUILD_DIR`` is read when called, not when imported, so a test
    that points it elsewhere gets its own lock.
    """
    return run_lock(paths.BUILD_DIR / "run.lock", command_line())
