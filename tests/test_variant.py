"""``analysis.variant.Variant``: one record read once, read-only, at the defaults the old ``.get`` reads gave.

``old_reads`` is what the frame, the page's failure list, the unstable count
and ``history.targets`` read of a record's dict before ``Variant`` existed
(copied from those reads); every record here, whole or missing its optional
keys or holding them as null, must read the same through ``Variant``.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from report_docs import record

from tfmatrix.analysis.frame import _median
from tfmatrix.analysis.variant import Variant


def old_reads(rec: dict[str, Any]) -> dict[str, Any]:
    params = dict(rec.get("params") or {})
    per_process = [list(p) for p in (rec.get("per_process") or []) if p]
    samples = list(rec.get("samples") or [])
    rid, bench = str(rec.get("id") or ""), str(rec.get("benchmark") or "")
    info = rec.get("info") or {}
    keras_info: dict[str, Any] = info["keras"] if isinstance(info.get("keras"), dict) else {}
    return {
        "benchmark": rec.get("benchmark") or str(rec.get("id", "?")).split("[")[0], "id": rec.get("id"),
        "variant": rid[len(bench) + 1:-1] if bench and rid.startswith(bench + "[") and rid.endswith("]") else rid,
        "seed": rec.get("seed"), "title": rec.get("title"), "mode": rec.get("mode") or params.get("mode"),
        "api": rec.get("api") or params.get("api"), "keras_used": keras_info.get("flavour"),
        "frame_status": rec.get("status") or "error", "status": rec.get("status"), "reason": rec.get("reason"),
        "unit": rec.get("unit") or "s", "cv": (rec.get("stats") or {}).get("cv"),
        "unstable": bool(rec.get("unstable")), "between_cv": (rec.get("between_process") or {}).get("cv"),
        "build_s": _median((rec.get("setup") or {}).get("build_s")),
        "first_call_s": _median((rec.get("setup") or {}).get("first_call_s")),
        "peak_rss_mb": rec.get("peak_rss_mb"), "wall_s": rec.get("wall_s"), "params": params, "samples": samples,
        "frame_per_process": per_process or ([samples] if samples else []),
        "target_per_process": per_process or [samples],
        "windows": list((rec.get("schedule") or {}).get("windows") or []),
        "passes": (rec.get("schedule") or {}).get("passes") or [],
        "extra": dict(rec.get("extra") or {}),
        "detail": str(rec.get("traceback") or rec.get("reason") or "").strip()[-4000:],
        "counted_unstable": rec.get("status") == "ok" and bool(rec.get("unstable")),
    }


def new_reads(v: Variant) -> dict[str, Any]:
    samples = list(v.samples)
    return {
        "benchmark": v.benchmark, "id": v.id, "variant": v.variant, "seed": v.seed, "title": v.title,
        "mode": v.mode, "api": v.api, "keras_used": v.keras_used, "frame_status": v.status or "error",
        "status": v.status, "reason": v.reason, "unit": v.unit, "cv": v.cv, "unstable": v.unstable,
        "between_cv": v.between_cv, "build_s": _median(v.build_s), "first_call_s": _median(v.first_call_s),
        "peak_rss_mb": v.peak_rss_mb, "wall_s": v.wall_s, "params": dict(v.params), "samples": samples,
        "frame_per_process": [list(p) for p in v.per_process] or ([samples] if samples else []),
        "target_per_process": [list(p) for p in v.per_process] or [samples],
        "windows": list(v.windows), "passes": list(v.passes), "extra": dict(v.extra),
        "detail": str(v.traceback or v.reason or "").strip()[-4000:],
        "counted_unstable": v.ok and v.unstable,
    }


WHOLE = dict(record("training.fit", {"model": "small", "mode": "graph", "api": "keras"}, [1.0, 1.1, 0.9],
                    per_process=[[1.0, 1.1], [], [0.9]]),
             info={"keras": {"flavour": "tf.keras"}}, traceback="Traceback ...\nValueError: x\n",
             schedule={"windows": ["w0", "w1"], "rounds": [1, 1], "stopped": ["n", "n"], "passes": [0, 1]},
             extra={"steps": 3, "note": "x", "nested": {"a": 1}})
MINIMAL = {"id": "ops.matmul[n=8]"}
OPTIONAL = ("benchmark", "seed", "title", "params", "mode", "api", "status", "reason", "unit", "samples",
            "per_process", "stats", "between_process", "unstable", "setup", "extra", "info", "peak_rss_mb",
            "wall_s", "traceback", "schedule")
CASES = {
    "whole": WHOLE,
    "minimal": MINIMAL,
    "no keys": {},
    "nulls": dict(MINIMAL, **{k: None for k in OPTIONAL}),
    "empties": dict(MINIMAL, benchmark="", mode="", api="", unit="", params={"mode": "eager", "api": "tf"},
                    samples=[], per_process=[[], []], stats={}, setup={}, info={"keras": "tf.keras"}, schedule={}),
    "failed": dict(record("training.fit", {"model": "big"}, status="error", reason="OOM"), traceback="  boom \n"),
    "id without benchmark prefix": {"id": "odd", "benchmark": "other", "samples": [2.0], "status": "ok"},
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_variant_reads_what_the_old_dict_reads_read(name: str) -> None:
    rec = CASES[name]
    assert new_reads(Variant.of(rec)) == old_reads(rec)


def test_a_record_missing_its_optional_keys_reads_at_the_old_defaults() -> None:
    v = Variant.of(MINIMAL)
    assert (v.id, v.benchmark, v.variant, v.status, v.reason, v.traceback, v.unit) == \
        ("ops.matmul[n=8]", "ops.matmul", "ops.matmul[n=8]", None, None, None, "s")
    assert (v.seed, v.title, v.mode, v.api, v.keras_used, v.cv, v.between_cv, v.peak_rss_mb, v.wall_s) == \
        (None,) * 9
    assert (v.samples, v.per_process, v.windows, v.passes, v.build_s, v.first_call_s) == ((),) * 6
    assert dict(v.params) == {} and dict(v.extra) == {} and v.unstable is False and not v.ok
    assert Variant.of({}).benchmark == "?" and Variant.of({}).id is None


def test_a_variant_is_read_only() -> None:
    v = Variant.of(WHOLE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.status = "error"  # type: ignore[misc]
    with pytest.raises(TypeError):
        v.params["model"] = "big"  # type: ignore[index]
    with pytest.raises(TypeError):
        v.extra["steps"] = 4  # type: ignore[index]
    assert isinstance(v.samples, tuple) and all(isinstance(p, tuple) for p in v.per_process)
    WHOLE["params"]["model"] = "changed"        # the dict it was read from, changed later: the variant keeps its read
    try:
        assert v.params["model"] == "small"
    finally:
        WHOLE["params"]["model"] = "small"
