"""A cell's results document: opened with what was asked (``header``), the fingerprint that
settles whether the cell can run at all (``take_fingerprint``), and closed by one atomic write
(``finish``).

``suite.run`` (results) and ``suite.profiling`` (profiles) open and close their documents here.
The fingerprint is taken in a child process: the parent never imports the cell's framework.
"""
from __future__ import annotations

import datetime
import json
import os
import tempfile
import time
from typing import IO, Any, Dict, Optional, Sequence

from . import SUITE_VERSION, fingerprint
from .definitions import Preset, Variant
from .frameworks import framework
from .isolation import run_worker
from .schema import NO_TF_BACKENDS, SCHEMA_NAME, SCHEMA_VERSION

GPU_MISSING = (
    "GPU requested but TensorFlow sees no GPU: this cell would silently run on the CPU. "
    "Check the NVIDIA driver, the container runtime (--gpus all) and that the cell installs a GPU build of TensorFlow."
)
GPU_MISSING_BACKEND = (
    "GPU requested but %s sees no GPU: this cell would silently run on the CPU. "
    "Check the NVIDIA driver, the container runtime (--gpus all) and that the cell installs %s's CUDA wheels."
)


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def write_json_atomic(path: str, doc: Dict[str, Any]) -> None:
    """Write ``doc`` so that readers see the old file or the whole new one."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=False, default=str)
            f.write("\n")
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


def cell_framework(environ: Dict[str, str]) -> str:
    """What a cell's worker imports, for messages: "Keras 3 on JAX", or TensorFlow."""
    backend = (environ.get("KERAS_BACKEND") or "").strip().lower()
    return "Keras 3 on %s" % framework(backend) if backend in NO_TF_BACKENDS else framework("tensorflow")


def header(preset: Preset, only: Sequence[str], cell: Dict[str, Any], variants: Sequence[Variant]) -> Dict[str, Any]:
    """A results document with no records yet: what was asked, of which cell."""
    started = now_iso()
    return {
        "schema": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "suite_version": SUITE_VERSION,
        "status": "ok",
        "error": None,
        "preset": preset.name,
        "config": {
            "only": list(only),
            "processes": preset.processes,
            "budget": dict(preset.budget.__dict__),
            "timeout_s": preset.timeout,
            "unstable_cv": preset.unstable_cv,
            "window": preset.window,
            "variants_planned": len(variants),
        },
        "cell": dict(cell),
        "environment": {"host": fingerprint.host_facts()},
        "gpu": {"requested": cell.get("target") == "gpu", "visible": [], "ok": True},
        "warnings": [],
        "started": started,
        "finished": started,
        "wall_s": 0.0,
        "records": [],
    }


def take_fingerprint(doc: Dict[str, Any], log: IO[str], preset: Preset) -> Optional[Dict[str, Any]]:
    """Import the cell's framework once in a child and record what it found; None (and ``doc`` an error) on failure.

    A GPU cell whose framework sees no GPU is an error here, before anything
    is measured: it would silently run on the CPU.
    """
    log.write("[suite] fingerprint (importing %s)\n" % cell_framework(os.environ))
    fp = run_worker("eager", preset, [], {}, log, fingerprint=True)
    facts = next((e["facts"] for e in fp.events if e.get("event") == "fingerprint"), None)
    if facts is None:
        doc["status"] = "error"
        doc["error"] = "could not import %s in this cell: %s" % (
            cell_framework(os.environ), (fp.log_tail.splitlines()[-1:] or ["?"])[0])
        doc["environment"]["import_log_tail"] = fp.log_tail
        return None
    facts["import_s"] = fp.import_s
    doc["environment"]["tf"] = facts
    gpus = list(facts.get("gpus_visible") or [])
    doc["gpu"]["visible"] = gpus
    backend = facts.get("backend") or {}
    if backend and facts.get("tensorflow_imported"):
        doc["status"] = "error"
        doc["error"] = "TensorFlow was imported in a Keras 3 on %s cell: its variants must not use it" % (
            backend.get("requested"))
        return None
    if doc["gpu"]["requested"] and not gpus:
        missing = GPU_MISSING if not backend else GPU_MISSING_BACKEND % ((backend.get("name"),) * 2)
        doc["gpu"]["ok"] = False
        doc["status"] = "error"
        doc["error"] = missing
        doc["warnings"].append(missing)
        return None
    if not doc["gpu"]["requested"] and gpus:
        doc["warnings"].append("CPU cell, but %s sees GPUs %s: results may have used them" % (
            framework(str(backend.get("name")) if backend else "tensorflow"), ", ".join(gpus)))
    return facts


def finish(doc: Dict[str, Any], out_path: str, t0: float, log: IO[str], code: int) -> int:
    """Stamp the end, write ``doc`` atomically and say in one line what it holds; returns ``code`` (the exit status)."""
    doc["finished"] = now_iso()
    doc["wall_s"] = time.monotonic() - t0
    write_json_atomic(out_path, doc)
    counts: Dict[str, int] = {}
    for r in doc["records"]:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items())) or "no records"
    log.write("[suite] %s: %s in %.0f s -> %s\n" % (doc["status"], summary, doc["wall_s"], out_path))
    if doc.get("error"):
        log.write("[suite] ERROR: %s\n" % doc["error"])
    log.flush()
    return code
