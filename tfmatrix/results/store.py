"""Per-cell results files on disk: ``reports/cells/<cell>.json`` and ``<cell>.log``, and the rules over them.

A cell's file is a ``documents.CellDoc``: the suite's own results wrapped
with what only the host knows (the resolved cell, which runner ran it, image
tag and digest, build/run durations, host summary, and for a failed cell its
status, reason and log tail). This module writes them (atomically, so an
interrupted run never leaves half a file and one failing cell never loses
another's results) and holds the rules the run loop applies to them: reuse,
keeping complete results over a failed attempt (earlier runs are the report's run archive, ``archive``).
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import json
import os
import platform
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.fingerprint import nvidia_smi

from .. import __version__
from ..errors import UserError
from ..paths import SUITE_DIR
from .documents import Attempt, CellDoc, CellRequest, SuiteResults, read_cell, request_json

LOG_TAIL_LINES = 60


@dataclass
class CellOutcome:
    """What happened to one cell in one run of the matrix."""

    name: str
    status: str                       # ok | failed | timeout | skipped
    reason: str | None = None
    runner: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    results: SuiteResults | None = None      # the suite's results document
    log_tail: str = ""
    kept: bool = False                # an earlier run's results were kept, nothing ran
    host: dict[str, Any] | None = None   # the host that ran it when not this one (a cluster node)




def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Readers see the old file or the whole new one, never a half-written one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """``write_bytes_atomic`` of ``text`` in UTF-8, as written (no newline translation)."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path, doc: Any) -> None:
    write_text_atomic(path, json.dumps(doc, indent=1, default=str) + "\n")


def tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def read_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 256 * 1024))
            return tail(f.read().decode("utf-8", "replace"), lines)
    except OSError:
        return ""


def suite_fingerprint(root: Path | None = None) -> str:
    """Hash of the suite's source (``root``: a copy of it): results from a different suite are never reused."""
    root = SUITE_DIR if root is None else root
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def host_summary() -> dict[str, Any]:
    """The host (or cluster node) that ran a cell, seen from outside it: what its testbed is made of
    (``archive.Testbed``: CPU model and count, memory, GPUs, OS) and who ran it."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "os": _os_name(),
        "gpus": list(_gpu_names()),
        "python": platform.python_version(),
        "tfmatrix": __version__,
    }


def _memory_gib() -> int | None:
    """The host's memory in whole GiB (None: not readable here)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _os_name() -> str:
    """The OS and its release ("Linux Debian GNU/Linux 12 (bookworm)"), not the kernel's build: a kernel update
    leaves a testbed the same."""
    try:
        pretty = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except OSError:
        pretty = ""
    return f"{platform.system()} {pretty}".strip()


@functools.lru_cache(maxsize=1)
def _gpu_names() -> tuple[str, ...]:
    """The host's GPU models as nvidia-smi lists them (``suite.fingerprint.nvidia_smi``, the call a cell makes
    inside; none without nvidia-smi or when it fails): seen from the host, so that a GPU cell and its CPU twin share
    a testbed."""
    smi = nvidia_smi()
    if smi is None or smi.get("rc") != 0:
        return ()
    return tuple(g["name"] for g in smi["gpus"] if g.get("name"))


def cell_document(cell: dict[str, Any], outcome: CellOutcome, request: CellRequest | Mapping[str, Any]) -> CellDoc:
    """The file written for one cell, from what happened to it (``request``: or a request as an older file has it)."""
    return CellDoc(name=outcome.name, status=outcome.status, reason=outcome.reason, cell=cell,
                   request=request_json(request),          # preset, only, suite hash: what was asked for
                   runner=outcome.runner, timings=outcome.timings,
                   host=outcome.host or host_summary(),     # a cluster node's, when it ran there
                   finished=now_iso(), log_tail=outcome.log_tail, results=outcome.results)


def write_cell(path: Path, doc: CellDoc) -> None:
    write_json_atomic(path, doc.to_json())


def cell_paths(reports_dir: Path, name: str) -> tuple[Path, Path]:
    """The cell's file and its log."""
    cells = reports_dir / "cells"
    return cells / ("%s.json" % name), cells / ("%s.log" % name)


def attempt_log_path(json_path: Path) -> Path:
    """Where a failed attempt's log goes when the cell's complete results were kept: beside its file."""
    return json_path.with_name(json_path.name.removesuffix(".json") + ".attempt.log")


def load_cell(path: Path) -> CellDoc | None:
    """This run loop's earlier file for a cell, or None when there is none it can use (missing, broken, foreign)."""
    try:
        return read_cell(path, bare_results=False)
    except UserError:
        return None


def with_attempt(earlier: CellDoc, outcome: CellOutcome, log_name: str) -> CellDoc:
    """``earlier``'s complete results, kept, with the attempt that failed to replace them recorded beside them.

    The report then shows "last attempt failed, showing the results of <date>";
    the attempt's log is ``log_name`` next to the cell file.
    """
    return dataclasses.replace(earlier, last_attempt=Attempt(outcome.status, outcome.reason, now_iso(), log_name))


def reusable(doc: CellDoc | None, request: CellRequest | Mapping[str, Any], inputs: str) -> bool:
    """An earlier result can stand in for a new run: it succeeded with the same request and inputs, all rounds."""
    if not doc:
        return False
    return doc.status == "ok" and doc.request == request_json(request) and doc.runner.get("inputs") == inputs \
        and doc.rounds >= doc.cell_request.rounds         # the requests are equal: the rounds asked for


def kept_outcome(name: str, earlier: CellDoc) -> CellOutcome:
    """Earlier complete results standing in for this run's (``reusable``): nothing ran."""
    return CellOutcome(name, "ok", None, earlier.runner, earlier.timings, earlier.results, earlier.log_tail, kept=True)


def kept_note(earlier: CellDoc) -> str:
    """What a run says of a cell whose earlier results it kept."""
    return "kept the results of %s (use --redo to run again)" % earlier.finished


def record_outcome(json_path: Path, cell: dict[str, Any], outcome: CellOutcome, asked: CellRequest,
                   earlier: CellDoc | None) -> Path | None:
    """Write the cell's file; when an earlier complete result was kept instead, where the attempt's log goes.

    A failed, timed-out, skipped or interrupted attempt never replaces a cell's
    last complete results: they stay, with ``last_attempt`` saying what happened
    and naming the attempt's log (``attempt_log_path``); else None, and the
    cell's log is its own.
    """
    if outcome.status != "ok" and earlier is not None and earlier.complete:
        attempt_log = attempt_log_path(json_path)
        write_cell(json_path, with_attempt(earlier, outcome, attempt_log.name))
        return attempt_log
    write_cell(json_path, cell_document(cell, outcome, asked))
    return None
