"""TensorFlow's op level (``suite.opprofile``, ``analysis.explain.ops``): events as each release writes them ->
the per-step table -> the same ranked op types and sentences; a release without the profiler is a reason, never a
crash."""
from __future__ import annotations

import gzip
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from suite import opprofile
from suite.schema import validate_profiles
from tfmatrix.analysis.explain.ops import (
    explanation_sentences,
    op_lines,
    op_sentences,
    ops_of,
    overhead_line,
    ranked_op_types,
)
from tfmatrix.analysis.explain.profiles import explain, profile_of

MS = 1e-3


def _eager_step() -> list[opprofile.Event]:
    """TF 2.15 on a CPU, a Keras forward pass run op by op: eager ops on the Python thread."""
    return [("/host:CPU", "python", "EagerLocalExecute: Conv2D", 4 * MS, {}) for _ in range(2)] + \
           [("/host:CPU", "python", "EagerLocalExecute: Relu", 0.5 * MS, {}),
            ("/host:CPU", "python", "EagerKernelExecute", 4 * MS, {}),                   # bookkeeping: not an op
            ("/host:CPU", "python", "TFE_Py_FastPathExecute_C", 5 * MS, {})]


def _xla_step(traced: bool) -> list[opprofile.Event]:
    """TF 2.15, ``tf.function(jit_compile=True)``: one call, its program one op whose inside is not traced."""
    status = "traced-xla" if traced else "notTraced-xla"
    return [("/host:CPU", "python", "forward", 6 * MS, {"tf_function_call": status}),
            ("/host:CPU", "python", "EagerLocalExecute: __inference_forward_21", 5.5 * MS, {}),
            ("/host:CPU", "python", "__inference_forward_21:__inference_forward_21", 5 * MS, {})]


def _hlo_step() -> list[opprofile.Event]:
    """TF 2.21: the XLA program's HLO ops are traced, each with an "end:" marker."""
    hlo = {"hlo_op": "1", "hlo_module": "1"}
    return [("/host:CPU", "python", "forward", 6 * MS, {"tf_function_call": "notTraced-xla"}),
            ("/host:CPU", "python", "EagerLocalExecute: __inference_forward_21", 5.5 * MS, {}),
            ("/host:CPU", "python", "convolution.3", 3 * MS, hlo),
            ("/host:CPU", "python", "end: convolution.3", 0, hlo),
            ("/host:CPU", "python", "broadcast_add_fusion", 1 * MS, hlo)]


def _record(vid: str, events: list[opprofile.Event], steps: int, step_s: float) -> dict[str, Any]:
    ops = {"ops": dict(opprofile.summarize(events, steps), wall_s=step_s * steps)} if events else \
        {"ops_unavailable": "no TF here"}
    return {"id": vid, "benchmark": "b", "params": {}, "status": "ok", "reason": None, "profiler": "cProfile",
            "step_calls": steps, "wall_s": step_s * steps, "functions": [], "rest": {"functions": 0, "self_s": 0.0},
            "extra": {}, "info": {}, "first_call_s": 0.1, **ops}


def test_events_become_a_per_step_table_by_kind_and_type() -> None:
    table = opprofile.summarize(_eager_step() * 3, 3)
    assert table["kinds"] == {"eager": {"count": 3.0, "time_s": pytest.approx(8.5 * MS)}}
    assert [(r["kind"], r["type"], r["count"]) for r in table["types"]] == [("eager", "Conv2D", 2.0),
                                                                            ("eager", "Relu", 1.0)]
    xla = opprofile.summarize(_xla_step(True) + _xla_step(False) * 3, 4)
    assert xla["functions"] == {"forward": {"calls": 1.0, "traced": 1}}
    assert xla["kinds"] == {"function": {"count": 1.0, "time_s": pytest.approx(5.5 * MS)}}
    assert opprofile.classify("__inference_forward_21:__inference_forward_21", {}) is None
    assert opprofile.classify("EagerLocalExecute: __inference_f_958", {}) == ("function", "__inference_f")
    hlo = opprofile.summarize(_hlo_step(), 1)
    assert {r["type"] for r in hlo["types"] if r["kind"] == "xla"} == {"convolution", "broadcast_add_fusion"}
    assert opprofile.classify("ExecutorState::Process", {}) is None
    assert opprofile.classify("sequential/dense/MatMul:MatMul", {}) == ("graph", "MatMul")
    assert opprofile.classify("MemcpyH2D", {}) == ("copy", "MemcpyH2D")


def test_a_chrome_trace_of_tf_2_2_reads_like_an_xspace(tmp_path: Path) -> None:
    run = tmp_path / "plugins" / "profile" / "2026_11_26"
    run.mkdir(parents=True)
    with gzip.open(run / "host.trace.json.gz", "wt") as f:
        json.dump({"traceEvents": [{"ph": "X", "name": "EagerLocalExecute: MatMul", "dur": 1500, "pid": 1, "tid": 2},
                                   {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2}]}, f)
    events = opprofile.read_events(str(tmp_path))
    assert [(e[2], e[3]) for e in events] == [("EagerLocalExecute: MatMul", 1500e-6)]


def test_two_sides_op_tables_give_the_ranked_op_types_and_the_sentences() -> None:
    eager = profile_of(_record("eager", _eager_step() * 3, 3, 9 * MS), "tf2.15-cpu")
    xla = profile_of(_record("xla", _xla_step(False) * 3, 3, 6.5 * MS), "tf2.15-cpu")
    e = explain(xla, eager)
    assert ranked_op_types(e)[:2] == [("eager", "Conv2D"), ("function", "__inference_forward")]
    said = op_sentences(e, "XLA", "eager")
    assert said[0] == ("Per step, TensorFlow ran for XLA: 1 tf.function calls (5.5 ms); for eager: 3 eager ops "
                       "(8.5 ms) (its profiler's own time included).")
    assert said[1] == "The op type that moved most: Conv2D (eager ops), run only by eager: 2 per step, 8 ms."
    assert said[2].startswith("XLA's step is 1 call(s) of __inference_forward per step (5.5 ms), a program whose")
    assert explanation_sentences(e, "XLA", "eager")[-len(said):] == said
    assert op_lines(e, "XLA", "eager")[1].startswith("Conv2D [eager]")
    assert overhead_line(e) is None                       # profiled before the plain pass was kept
    timed = profile_of(dict(_record("eager", _eager_step() * 3, 3, 9 * MS), plain_step_s=6 * MS), "c")
    assert overhead_line(explain(xla, timed), "XLA", "eager") == (
        "Profilers' cost against the same step unprofiled (same process): eager: cProfile 1.50x, TensorFlow's "
        "profiler 1.50x.")
    retrace = profile_of(_record("r", _xla_step(True) * 3, 3, 8 * MS), "c")
    assert any("forward was traced 3 times in 3 calls for B (against 0 for A): it is traced again on every call"
               in s for s in op_sentences(explain(xla, retrace)))


def test_a_side_without_tensorflows_profiler_is_its_reason() -> None:
    tf1 = profile_of(_record("tf1", [], 3, 9 * MS), "tf1.15-cpu")
    tf2 = profile_of(_record("tf2", _eager_step(), 1, 9 * MS), "tf2.15-cpu")
    assert op_sentences(explain(tf1, tf2), "TF 1.15", "TF 2.15") == [
        "TensorFlow's ops: not profiled for TF 1.15 (no TF here)."]
    assert op_lines(explain(tf1, tf2)) == []
    assert ops_of(tf1) == "no TF here"


def test_a_process_without_tensorflow_never_imports_it_to_say_so(monkeypatch: Any) -> None:
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    assert opprofile.op_profile(lambda: None, 3) == {
        "ops_unavailable": "no TensorFlow in this process (a Keras 3 cell on another backend never imports it)"}
    assert "tensorflow" not in sys.modules
    monkeypatch.setitem(sys.modules, "tensorflow", types.SimpleNamespace(__version__="0.12.1"))
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager", None)        # no eager profiler either
    assert opprofile.op_profile(lambda: None, 3) == {"ops_unavailable": (
        "TensorFlow 0.12.1 has neither tf.profiler.experimental (2.2+) nor the eager profiler (1.14-2.1)")}


def test_a_profiles_file_with_op_tables_validates_and_a_broken_table_does_not() -> None:
    doc = {"schema": "tfmatrix.profiles", "schema_version": 1, "records": [
        _record("x", _xla_step(False), 1, 6 * MS)]}
    for key in ("suite_version", "cell", "preset", "config", "environment", "started", "finished", "warnings",
                "error"):
        doc.setdefault(key, None)
    base = [p for p in validate_profiles(doc) if ".ops" in p]
    assert base == []
    doc["records"][0]["ops"]["types"][0].pop("time_s")
    assert any("ops.types[0].time_s missing" in p for p in validate_profiles(doc))


GOLDEN = Path(__file__).resolve().parent / "golden" / "profiles" / "tf2.21-keras3-cpu-xla.json"
XLA_ON = ("graphs.xla[model=efficientnetv2s,input_shape=1x384x384x3,call=tf.function,jit_compile=true,api=tf.keras,"
          "mode=eager]")
XLA_OFF = XLA_ON.replace("jit_compile=true", "jit_compile=none")


def test_a_real_xla_pair_names_the_hlo_op_that_takes_the_time() -> None:
    """tf2.21-keras3-cpu's profiles of the seed's XLA claim (EfficientNetV2S 384x384, 2026-11-26): cProfile sees
    one native call on each side; TensorFlow's profiler sees 518 HLO ops against 1,947 graph ops, and the depthwise
    convolutions XLA compiled taking the time."""
    from tfmatrix.analysis.explain.profiles import pair
    from tfmatrix.results.profile_docs import read_profiles

    doc = read_profiles(GOLDEN)
    both = pair(doc, XLA_ON, doc, XLA_OFF)
    assert not isinstance(both, str)
    e = explain(*both)
    assert ranked_op_types(e)[:4] == [("function", "__inference_function_20298"), ("xla", "depthwise"),
                                      ("function", "__inference_function_10137"), ("graph", "Conv2D")]
    said = op_sentences(e)
    assert said[0].startswith("Per step, TensorFlow ran for A: 1 eager ops (0.117 ms), 1 tf.function calls (826 ms), "
                              "518 XLA (HLO) ops (709 ms); for B: 1 eager ops (0.155 ms), 1,947 graph ops (350 ms)")
    assert said[1] == "The op type that moved most: depthwise (XLA (HLO) ops), run only by A: 30 per step, 565 ms."
