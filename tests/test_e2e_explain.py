"""``explain`` end to end: both sides profiled in a real Docker cell (real TensorFlow), lined up, said in words."""
from __future__ import annotations

import json

import pytest
from e2e import MATRICES, require, tfmatrix

from suite.definitions import PRESETS
from suite.registry import all_variants
from suite.schema import validate_profiles
from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.docker


def _tracing(arg: str) -> str:
    return next(v.id for v in all_variants(PRESETS["quick"])
                if v.benchmark == "graphs.tracing" and v.param("arg") == arg)


def test_explain_names_retracing_from_profiles_taken_in_the_cell(tmp_path):
    require(docker_engine.engine() is not None, "no Docker engine answers (scripts/host-setup installs and starts one)")
    a, b = _tracing("tensor"), _tracing("python_distinct")
    run = tfmatrix("explain", "--matrix", str(MATRICES / "docker.toml"), "--runner", "docker", "--cell", "tf1.15-cpu",
                   "--variants", a, b, "--calls", "3", "--reports", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    doc = json.loads((tmp_path / "profiles" / "tf1.15-cpu.json").read_text())
    assert validate_profiles(doc) == [] and {r["id"] for r in doc["records"]} == {a, b}
    assert all(r["status"] == "ok" and r["functions"] for r in doc["records"]), [r["reason"] for r in doc["records"]]
    out = run.stdout
    assert f"A = {a} in tf1.15-cpu" in out and "B takes" in out and "more per step." in out
    assert "Where the paths part: B spends " in out and "of its step under" in out
    assert "retracing." in out                           # a new Python number each call: a trace each call
    assert "tensorflow" in out.split("Of that", 1)[1].splitlines()[0]
    assert (tmp_path / "profiles" / "tf1.15-cpu.log").is_file()
    # TensorFlow's level: TF 1.15's eager profiler, a table per record, a sentence
    assert all(r["ops"]["profiler"] == "eager profiler" and r["ops"]["kinds"]["function"]["count"] == 1.0
               for r in doc["records"]), [r.get("ops_unavailable") for r in doc["records"]]
    assert all(r["plain_step_s"] > 0 for r in doc["records"])
    assert "Per step, TensorFlow ran for A: " in out and "Profilers' cost against the same step unprofiled" in out
