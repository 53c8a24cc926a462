"""The suite for real, in four cells: ``python -m suite run --preset quick`` via the venv runner.

TF 1.15 (Python 3.7), TF 2.0 + Keras 2.3.1 (3.7), TF 2.15 (3.11) and the
newest TF with Keras 3 (3.11): results match the schema, nothing errors that
should work, every n/a says why, the fingerprint says what ran, and the
seed-000 training grid is there with the n/a pattern each generation implies.
"""
from __future__ import annotations

import pytest

from suite.definitions import PRESETS
from suite.registry import all_variants
from suite.schema import validate

pytestmark = pytest.mark.tf

CELLS = ("tf1.15-cpu", "tf2.0-keras2.3.1-cpu", "tf2.15-cpu", "tf2.21-keras3-cpu")


@pytest.fixture(params=CELLS)
def cell(request, venv_cell):
    return request.param, venv_cell(request.param)


def _training(doc, **want):
    out = []
    for r in doc["results"]["records"]:
        if r["benchmark"].startswith("training.") and all(r["params"].get(k) == v for k, v in want.items()):
            out.append(r)
    return out


def test_results_match_the_schema_and_cover_the_catalogue(cell):
    name, doc = cell
    results = doc["results"]
    assert validate(results) == []
    assert results["status"] == "ok" and results["preset"] == "quick"
    aside = {e["id"] for g in results["config"]["outside"] for e in g["variants"]}   # the api=backend variants
    assert aside == {v.id for v in all_variants(PRESETS["quick"]) if v.api == "backend"}
    assert [r["id"] for r in results["records"]] == [v.id for v in all_variants(PRESETS["quick"]) if v.id not in aside]
    assert results["cell"]["name"] == name and results["cell"]["runner"] == "venv"


def test_no_variant_errors_and_every_na_says_why(cell):
    name, doc = cell
    records = doc["results"]["records"]
    broken = {r["id"]: r["reason"] for r in records if r["status"] not in ("ok", "n/a")}
    assert broken == {}
    for r in records:
        if r["status"] == "n/a":
            assert r["reason"] and len(r["reason"]) > 15, r["id"]
        else:
            stats = r["stats"]
            assert stats["n"] == len(r["samples"]) >= 3
            assert stats["min"] <= stats["q1"] <= stats["median"] <= stats["q3"] <= stats["max"]
            assert r["setup"]["first_call_s"][0] > 0 and r["iterations"]["per_repeat"][0] >= 1


def test_fingerprint_says_what_ran(cell):
    name, doc = cell
    env = doc["results"]["environment"]
    tf = env["tf"]
    assert tf["tensorflow"]["version"] == doc["cell"]["tf"]
    assert tf["tensorflow"]["git_version"]
    assert tf["numpy"] and tf["packages"]["numpy"] == tf["numpy"]
    assert tf["gpus_visible"] == [] and doc["results"]["gpu"] == {"requested": False, "visible": [], "ok": True}
    assert "is_built_with_cuda" in tf["build_info"]
    assert env["host"]["python"]["version"].startswith(doc["cell"]["python"] + ".")
    assert env["host"]["cpu"]["model"] and "avx2" in env["host"]["cpu"]["flags"]
    assert tf["keras"]["tf.keras"]["version"]
    if tf["tensorflow"]["version"] >= "2.":
        assert tf["threads"]["intra_op"] is not None


def test_training_grid_follows_each_generation(cell):
    name, doc = cell
    seen = {(r["params"]["mode"], r["params"]["api"], r["status"]) for r in _training(doc)}
    if name == "tf1.15-cpu":        # bundled tf.keras only; graph is TF1's default, eager opt-in
        assert ("eager", "tf.keras", "ok") in seen and ("graph", "tf.keras", "ok") in seen
        assert all(s == "n/a" for m, api, s in seen if api == "keras")
    if name == "tf2.0-keras2.3.1-cpu":   # standalone Keras 2.3.1 runs in both modes; tf.data only via tf.keras
        assert {("eager", "keras", "ok"), ("graph", "keras", "ok"), ("graph", "tf.keras", "ok")} <= seen
        tfdata = _training(doc, api="keras", input="tf.data")
        assert tfdata and all(r["status"] == "n/a" and "tf.data" in r["reason"] for r in tfdata)
    if name == "tf2.15-cpu":        # graph mode works with the legacy optimizer
        graph = _training(doc, api="tf.keras", mode="graph")
        assert graph and all(r["status"] == "ok" for r in graph)
        assert all("legacy" in r["info"]["optimizer"] for r in graph)
    if name == "tf2.21-keras3-cpu":  # Keras 3: no graph mode, eager only
        graph = _training(doc, mode="graph", api="tf.keras")
        assert graph and all(r["status"] == "n/a" and "Keras 3" in r["reason"] for r in graph)
        assert all("same package as tf.keras" in r["reason"] for r in _training(doc, api="keras"))
        assert ("eager", "tf.keras", "ok") in seen


def test_first_call_is_reported_apart_from_the_steady_state(cell):
    """Tracing/graph building shows up in first_call_s, not in the samples (seed 001's point)."""
    name, doc = cell
    rec = _training(doc, model="small", loop="train_on_batch", input="numpy", api="tf.keras", mode="eager")
    assert rec and rec[0]["status"] == "ok"
    assert rec[0]["setup"]["first_call_s"][0] > rec[0]["stats"]["median"]


def test_the_self_check_reports_the_harness_overhead(cell):
    name, doc = cell
    (rec,) = [r for r in doc["results"]["records"] if r["benchmark"] == "selfcheck.overhead"]
    assert rec["status"] == "ok" and rec["stats"]["median"] > 0 and rec["unit"] == "s"
