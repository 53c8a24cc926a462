"""What TensorFlow itself ran, op by op: the profiled run's second pass (``explain``'s TensorFlow level).

cProfile sees Python: a step that spends its time inside one native call (an eager execute, a
``Session.run``, an XLA program) is one opaque row to it. TensorFlow's own profiler
(``tf.profiler.experimental``, TF 2.2 and later) records what runs under those calls: each eager op
(``EagerLocalExecute: MatMul``), each op a graph function or session executes (``dense/MatMul:MatMul``),
the HLO ops of an XLA program where the release traces them (2.16+ here), the copies to and from a
GPU, and each ``tf.function`` call with whether it was traced. This pass runs the variant's step
again (after the cProfile pass, never during it: each profiler's overhead stays out of the other's
figures) and keeps a per-step table by op type, never the events.

TF 1.14 to 2.1 have its predecessor, the eager profiler (``tensorflow.python.eager.profiler``: a ``Trace``
of the same kind of events, sessions' ops included), read the same way. Where there is neither (a Keras 3
cell on JAX or PyTorch, whose process must never import TensorFlow), the record says why instead
(``ops_unavailable``).

What each release writes was measured here (tfmatrix images, CPU): 2.2 writes a Chrome trace
(``*.trace.json.gz``), 2.3 and later an ``XSpace`` (``*.xplane.pb``; its protobuf module moved from
``tensorflow.core.profiler.protobuf`` to ``tensorflow.tsl.profiler.protobuf`` in 2.12). Both carry the same
event names, so one summary reads either.
"""
from __future__ import annotations

import glob
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
from collections import defaultdict
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from .harness import run_loop

OPS_PROFILER = "tf.profiler"
OP_SAMPLES = 5                          # samples' worth of calls under TF's profiler (its events are kept in memory)
MAX_TYPES = 40                          # op types kept per record, costliest first
EAGER = "EagerLocalExecute: "
GRAPH_OP = re.compile(r"^[^\s:]+:([A-Za-z_][\w.]*)$")   # "dense/MatMul:MatMul": an op a graph executor ran
HLO_SUFFIX = re.compile(r"\.\d+$")
FUNCTION_STAT = "tf_function_call"       # a tf.function call's status: "traced-nonXla", "notTraced-xla", ...

# (plane, line, event name, duration in seconds, {stat name: str value})
Event = Tuple[str, str, str, float, Dict[str, str]]


FUNCTION_ID = re.compile(r"_\d+$")       # "__inference_forward_958": each trace gets a new number


def classify(name: str, stats: Dict[str, str]) -> Optional[Tuple[str, str]]:
    """(kind, op type) of one event, or None for the profiler's own bookkeeping (executor steps, handles...).

    A function's calls are one type whatever trace they run (a retraced function is a new number each call)."""
    if name.startswith(EAGER):
        op = name[len(EAGER):]
        return ("function", FUNCTION_ID.sub("", op)) if op.startswith("__inference_") else ("eager", op)
    if "hlo_op" in stats or "hlo_module" in stats:
        return None if name.startswith("end: ") else ("xla", HLO_SUFFIX.sub("", name))
    if "Memcpy" in name:
        return ("copy", name)
    m = GRAPH_OP.match(name)
    if m and not m.group(1).startswith("__inference_"):      # a function's own kernel: its call is counted above
        return ("graph", m.group(1))
    return None


def summarize(events: Iterable[Event], calls: int) -> Dict[str, Any]:
    """Per step of the variant: op types by kind (count, time), copies, and the tf.function calls traced."""
    per = float(max(1, calls))
    acc: Dict[Tuple[str, str], List[float]] = defaultdict(lambda: [0.0, 0.0])
    traced: Dict[str, int] = defaultdict(int)
    called: Dict[str, int] = defaultdict(int)
    for _plane, _line, name, seconds, stats in events:
        status = stats.get(FUNCTION_STAT)
        if status:
            called[name] += 1
            if status.startswith("traced"):
                traced[name] += 1
        kind = classify(name, stats)
        if kind is not None:
            acc[kind][0] += 1
            acc[kind][1] += seconds
    rows = sorted(({"kind": k, "type": t, "count": c / per, "time_s": s / per} for (k, t), (c, s) in acc.items()),
                  key=lambda r: (-r["time_s"], r["kind"], r["type"]))
    totals: Dict[str, Dict[str, float]] = {}
    for r in rows:
        t = totals.setdefault(r["kind"], {"count": 0.0, "time_s": 0.0})
        t["count"] += r["count"]
        t["time_s"] += r["time_s"]
    return {"profiler": OPS_PROFILER, "step_calls": int(per), "types": rows[:MAX_TYPES], "kinds": totals,
            "functions": {f: {"calls": called[f] / per, "traced": traced.get(f, 0)} for f in sorted(called)}}


def _xplane_events(path: str) -> Iterator[Event]:
    try:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2  # type: ignore[import-not-found]  # 2.12+
    except ImportError:
        from tensorflow.core.profiler.protobuf import xplane_pb2  # type: ignore[import-not-found]
    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    for plane in space.planes:
        stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        for line in plane.lines:
            for ev in line.events:
                meta = plane.event_metadata[ev.metadata_id]
                stats = {}
                for s in list(ev.stats) + list(meta.stats):
                    key = stat_names.get(s.metadata_id, "")
                    value = s.str_value or (stat_names.get(s.ref_value, "") if s.ref_value else "")
                    stats[key] = value or "1"
                yield plane.name, line.name, meta.name, ev.duration_ps * 1e-12, stats


def _chrome_events(path: str) -> Iterator[Event]:
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    for ev in doc.get("traceEvents") or ():
        if ev.get("ph") == "X" and "name" in ev:
            args = {k: str(v) for k, v in (ev.get("args") or {}).items()}
            yield str(ev.get("pid", "")), str(ev.get("tid", "")), str(ev["name"]), float(ev.get("dur", 0)) * 1e-6, args


def read_events(logdir: str) -> List[Event]:
    """Every event the profiler wrote under ``logdir``, from an XSpace or, on 2.2, a Chrome trace."""
    planes = glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True)
    if planes:
        return [e for p in planes for e in _xplane_events(p)]
    traces = glob.glob(os.path.join(logdir, "**", "*.trace.json.gz"), recursive=True)
    return [e for p in traces for e in _chrome_events(p)]


def trace_events(blob: bytes) -> List[Event]:
    """The events of the eager profiler's ``Trace`` (TF 1.14-2.1), named as the later profiler names them.

    There a kernel is named by its op type alone: on the Python thread with a device in its label it is an eager
    op ("MatMul" -> "EagerLocalExecute: MatMul"), on an executor thread an op of a function ("MatMul" ->
    "MatMul:MatMul"); a bare ``__inference_...`` on the Python thread is a function call. A session's ops already
    read "name:Type"."""
    from tensorflow.core.protobuf import trace_events_pb2  # type: ignore[import-not-found]

    trace = trace_events_pb2.Trace()
    trace.ParseFromString(blob)
    out: List[Event] = []
    for ev in trace.trace_events:
        device = trace.devices[ev.device_id]
        line = device.resources[ev.resource_id].name
        label = ev.args.get("label", "")
        name = ev.name
        if ":" not in name and not name.startswith(" "):
            if line == "python" and ("device=" in label or name.startswith("__inference_")):
                name = EAGER + name
            elif "device=" in label:
                name = "%s:%s" % (name, name)
        out.append((device.name, line, name, ev.duration_ps * 1e-12, {"label": label}))
    return out


def _eager_profiler() -> Any:
    """TF 1.14-2.1's ``tensorflow.python.eager.profiler`` (start, stop -> a serialized ``Trace``), or None."""
    try:
        from tensorflow.python.eager import profiler  # type: ignore[import-not-found]
    except ImportError:
        return None
    return profiler if hasattr(profiler, "start") and hasattr(profiler, "stop") else None


def op_profile(step: Callable[[], Any], calls: int) -> Dict[str, Any]:
    """``step`` called ``calls`` times under TensorFlow's profiler: ``{"ops": table}``, or ``{"ops_unavailable":
    why}``. TF 2.2+: ``tf.profiler.experimental``; 1.14-2.1: the eager profiler (it sees sessions' ops too)."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return {"ops_unavailable": "no TensorFlow in this process (a Keras 3 cell on another backend never imports it)"}
    experimental = getattr(getattr(tf, "profiler", None), "experimental", None)
    legacy = None if experimental is not None and hasattr(experimental, "start") else _eager_profiler()
    if legacy is None and (experimental is None or not hasattr(experimental, "start")):
        return {"ops_unavailable": "TensorFlow %s has neither tf.profiler.experimental (2.2+) nor the eager "
                                   "profiler (1.14-2.1)" % getattr(tf, "__version__", "?")}
    logdir = tempfile.mkdtemp(prefix="tfmatrix-ops-")
    try:
        if legacy is not None:
            legacy.start()
            try:
                wall = run_loop(step, calls)
            finally:
                blob = legacy.stop()
            events, name = trace_events(blob), "eager profiler"
        else:
            experimental.start(logdir)
            try:
                wall = run_loop(step, calls)
            finally:
                experimental.stop()
            events, name = read_events(logdir), OPS_PROFILER
    except Exception as e:          # a profiler that fails is this variant's missing op table, never its error
        return {"ops_unavailable": "TensorFlow's profiler failed: %s: %s" % (type(e).__name__, str(e)[:200])}
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    if not events:
        return {"ops_unavailable": "TensorFlow's profiler wrote no events"}
    return {"ops": dict(summarize(events, calls), wall_s=wall, profiler=name)}
