"""A cell's log file (``reports/cells/<cell>.log``, beside its results file): written as ``.partial`` and renamed
when complete, each line echoed to whatever follows the run (a console's progress, a cluster's board, a Ray
node's relay).
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Protocol, TextIO

from .store import read_tail


class Echo(Protocol):
    """What a log's lines are echoed to as they are written (``progress.Progress`` and its kin)."""

    def suite_output(self, line: str) -> None:
        """One line the suite (or tfmatrix about the cell) said."""
        ...


class CellLog:
    """The cell's log file; written as ``.partial`` and renamed when complete."""

    def __init__(self, path: Path, progress: Echo | None = None, after: str | None = None) -> None:
        """``after``: a heading for a later round of the same run; the log goes on from the file on disk."""
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f: TextIO = open(self.partial, "w", encoding="utf-8", errors="replace")  # noqa: SIM115 (closed by close())
        if after is not None:
            if path.is_file():
                self._f.write(path.read_text(encoding="utf-8", errors="replace"))
            self._f.write("--- %s ---\n" % after)
        self.progress = progress
        self._lock = threading.Lock()   # the docker runner streams logs from a thread

    def __call__(self, line: str) -> None:
        self.write(line)

    def write(self, text: str) -> None:
        with self._lock:
            for line in text.splitlines() or [""]:
                self._f.write(line + "\n")
                if self.progress is not None:
                    self.progress.suite_output(line)
            self._f.flush()

    def tail(self) -> str:
        self._f.flush()
        return read_tail(self.partial)

    def close(self, to: Path | None = None) -> None:
        """Finish the log as ``path`` (or ``to``: a failed attempt's log, beside the results it did not replace)."""
        if not self._f.closed:
            self._f.close()
            os.replace(self.partial, to or self.path)
