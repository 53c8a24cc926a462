"""Fresh child processes per execution mode, with crash and hang capture.

Why processes: TF1 eager and TF2 graph are process-wide switches that must be
thrown before any op exists, and one variant's leaked graph, thread pool or
allocator state must not leak into the next mode's numbers. Variants that
share a mode and a Keras package share a process (importing TensorFlow costs
seconds; pyperf's users rightly complain about paying setup per value).

A worker that crashes, is killed (out of memory) or hangs past the
per-variant timeout costs only the variant it was running: that variant gets
an ``error``/``timeout`` record with the tail of the worker's output, and a
new worker picks up the rest.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, Tuple

from .definitions import Preset, Variant, preset_to_json
from .sides import Order

STARTUP_TIMEOUT = 600.0   # importing TensorFlow on a cold, busy disk
LOG_TAIL_LINES = 40
CGROUP = "/sys/fs/cgroup"   # the container's own cgroup (Docker mounts it there): its OOM kills and memory limit
SUITE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class WorkerResult:
    """What one worker process produced before it exited."""

    records: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    events: List[Dict[str, Any]] = field(default_factory=list)
    failed: Optional[Tuple[str, str, str]] = None    # (variant id, status, reason)
    log_tail: str = ""
    returncode: Optional[int] = None
    import_s: Optional[float] = None


def _child_env() -> Dict[str, str]:
    env = dict(os.environ)
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = SUITE_ROOT + (os.pathsep + path if path else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    return env


def _read_tail(path: str, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def oom_kills(cgroup: str = CGROUP) -> Optional[int]:
    """How many processes the memory limit of this container killed so far (cgroup v2 ``memory.events``, or v1
    ``memory.oom_control``), or None where neither says (no limit, no cgroup, an older kernel)."""
    for path in (os.path.join(cgroup, "memory.events"), os.path.join(cgroup, "memory", "memory.oom_control")):
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.strip().partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def memory_limit(cgroup: str = CGROUP) -> Optional[str]:
    """The container's memory limit in words ("8.0 GB"), or None when it has none."""
    for path in (os.path.join(cgroup, "memory.max"), os.path.join(cgroup, "memory", "memory.limit_in_bytes")):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:
            return "%.1f GB" % (int(text) / 1e9)
        return None
    return None


def _describe_exit(rc: Optional[int], oom: bool = False, cgroup: str = CGROUP) -> str:
    if rc is None:
        return "worker did not exit"
    if rc < 0:
        sig = -rc
        if oom and sig == signal.SIGKILL:
            return "out of memory (limit %s): the kernel killed the worker" % (memory_limit(cgroup) or "unknown")
        try:
            name = signal.Signals(sig).name
        except ValueError:  # pragma: no cover
            name = "signal %d" % sig
        hint = " (killed: likely out of memory)" if sig == signal.SIGKILL else ""
        return "worker died with %s%s" % (name, hint)
    return "worker exited with code %d" % rc


def run_worker(
    mode: str,
    preset: Preset,
    variant_ids: Sequence[str],
    timeouts: Dict[str, float],
    log: IO[str],
    fingerprint: bool = False,
    on_event: Optional[Callable[[Dict[str, Any]], None]] = None,
    python: str = sys.executable,
    profile: int = 0,
    order: Optional[Order] = None,
) -> WorkerResult:
    """Run one worker over ``variant_ids`` until it finishes, crashes or hangs (``profile``: N calls, profiled;
    ``order``: an ``ab`` process's, ``sides.Order``)."""
    result = WorkerResult()
    kills = oom_kills()
    r_fd, w_fd = os.pipe()
    plan = None
    if not fingerprint:
        fd, plan = tempfile.mkstemp(prefix="tfmatrix-plan-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(list(variant_ids), f)
    out_fd, out_path = tempfile.mkstemp(prefix="tfmatrix-worker-", suffix=".log")
    cmd = [python, "-m", "suite.worker", "--fd", str(w_fd), "--preset", preset_to_json(preset), "--mode", mode]
    cmd += ["--fingerprint"] if fingerprint else ["--plan", plan or ""]
    if profile:
        cmd += ["--profile", str(profile)]
    if order is not None:
        cmd += ["--order", order.arg()]
    proc = subprocess.Popen(cmd, pass_fds=(w_fd,), stdout=out_fd, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=_child_env(), cwd=SUITE_ROOT, start_new_session=True)
    os.close(w_fd)
    os.close(out_fd)
    current: Optional[str] = None
    ready = False
    deadline = time.monotonic() + STARTUP_TIMEOUT
    buf = b""
    try:
        while True:
            wait = max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([r_fd], [], [], min(wait, 5.0))
            if not readable:
                if time.monotonic() < deadline:
                    continue
                _kill(proc)
                what = current or "(startup)"
                limit = timeouts.get(current, 0) if current else STARTUP_TIMEOUT
                result.failed = (what, "timeout", "timed out after %.0f s" % limit)
                break
            chunk = os.read(r_fd, 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    event = json.loads(line.decode("utf-8"))
                except ValueError:
                    continue
                result.events.append(event)
                kind = event.get("event")
                if kind == "ready":
                    ready = True
                    result.import_s = event.get("import_s")
                    deadline = time.monotonic() + STARTUP_TIMEOUT
                elif kind in ("start", "bout"):
                    # start: a variant is being built; bout: one of its samples is being taken
                    current = event["id"]
                    deadline = time.monotonic() + timeouts.get(current, preset.timeout)
                elif kind == "record":
                    rec = event["record"]
                    result.records[rec["id"]] = rec
                    current = None
                    deadline = time.monotonic() + STARTUP_TIMEOUT
                if on_event is not None:
                    on_event(event)
        try:
            result.returncode = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            _kill(proc)
            result.returncode = proc.wait()
        after = oom_kills() if kills is not None else None
        oom = kills is not None and after is not None and after > kills      # the memory limit killed it
        if result.failed is None and not ready:
            result.failed = ("(startup)", "error", _describe_exit(result.returncode, oom))
        elif result.failed is None and current is not None:
            result.failed = (current, "error", _describe_exit(result.returncode, oom))
        elif result.failed is None and result.returncode not in (0, None) and not fingerprint:
            missing = [v for v in variant_ids if v not in result.records]
            if missing:
                result.failed = (missing[0], "error", _describe_exit(result.returncode, oom))
    finally:
        if proc.poll() is None:
            _kill(proc)
            proc.wait()
        os.close(r_fd)
        result.log_tail = _read_tail(out_path)
        _copy_log(out_path, log)
        for path in (plan, out_path):
            if path:
                try:
                    os.unlink(path)
                except OSError:
                    pass
    return result


def _kill(proc: "subprocess.Popen[bytes]") -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


def _copy_log(path: str, log: IO[str]) -> None:
    try:
        with open(path, "r", errors="replace") as f:
            for line in f:
                log.write(line)
        log.flush()
    except OSError:
        pass


def failure_record(variant_id: str, status: str, reason: str, log_tail: str) -> Dict[str, Any]:
    return {"id": variant_id, "status": status, "reason": reason, "traceback": log_tail, "info": {}, "extra": {},
            "peak_rss_mb": None, "wall_s": 0.0}


def run_group(
    mode: str,
    variants: Sequence[Variant],
    preset: Preset,
    log: IO[str],
    on_event: Optional[Callable[[Dict[str, Any]], None]] = None,
    on_record: Optional[Callable[[Dict[str, Any]], None]] = None,
    python: str = sys.executable,
    profile: int = 0,
    order: Optional[Order] = None,
) -> "OrderedDict[str, Dict[str, Any]]":
    """Run every variant of one process group once, restarting after crashes (``profile``, ``order``: see
    ``run_worker``)."""
    timeouts = {v.id: (v.timeout or preset.timeout) for v in variants}
    remaining = [v.id for v in variants]
    records: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
    while remaining:
        res = run_worker(mode, preset, remaining, timeouts, log, on_event=on_event, python=python, profile=profile,
                         order=order)
        for vid, rec in res.records.items():
            records[vid] = rec
            if on_record is not None:
                on_record(rec)
        done = set(res.records)
        if res.failed is not None:
            vid, status, reason = res.failed
            if vid == "(startup)":
                # TensorFlow did not even import: every remaining variant shares the fate.
                for v in remaining:
                    if v not in done:
                        rec = failure_record(v, "error" if status == "error" else status,
                                             "worker startup failed: %s" % reason, res.log_tail)
                        records[v] = rec
                        if on_record is not None:
                            on_record(rec)
                return records
            rec = failure_record(vid, status, reason, res.log_tail)
            records[vid] = rec
            done.add(vid)
            if on_record is not None:
                on_record(rec)
        elif not res.records and remaining:
            # Exited cleanly without doing anything: do not loop forever.
            for v in remaining:
                rec = failure_record(v, "error", "worker exited without running (%s)" % _describe_exit(res.returncode),
                                     res.log_tail)
                records[v] = rec
                if on_record is not None:
                    on_record(rec)
            return records
        remaining = [v for v in remaining if v not in done]
    return records
