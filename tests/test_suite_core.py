"""The suite's measurement core, catalogue and process isolation (no TensorFlow needed).

Crash/timeout handling runs against a stand-in ``tensorflow`` (tests/fake_tf);
the same paths run with real TensorFlow in tests/test_suite_cells.py.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from suite import harness, stats
from suite.definitions import PRESETS, Variant, customized
from suite.registry import all_variants, load_benchmarks, select
from suite.schema import validate

ROOT = Path(__file__).resolve().parent.parent
FAKE_TF = ROOT / "tests" / "fake_tf"
FAULTS = ROOT / "tests" / "suite_plugins" / "faults.py"


# -- stats -----------------------------------------------------------------

def test_quantiles_match_numpy_linear_interpolation():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    s = stats.summarize(values)
    assert s["median"] == pytest.approx(3.5)
    assert s["q1"] == pytest.approx(2.25)
    assert s["q3"] == pytest.approx(4.75)
    assert s["iqr"] == pytest.approx(2.5)
    assert s["min"] == 1.0 and s["max"] == 10.0 and s["n"] == 6
    assert s["std"] == pytest.approx(statistics.stdev(values))
    assert s["cv"] == pytest.approx(s["std"] / s["mean"])


def test_between_process_spread_and_instability():
    steady = [[1.0, 1.01, 0.99], [1.0, 1.0, 1.01]]
    shifted = [[1.0, 1.01, 0.99], [1.3, 1.3, 1.31]]
    assert stats.between_processes([[1.0, 2.0]]) is None
    b = stats.between_processes(shifted)
    assert b["processes"] == 2 and b["spread"] == pytest.approx(0.3 / 1.15, rel=1e-3)
    assert not stats.is_unstable(steady, 0.05)
    assert stats.is_unstable(shifted, 0.05)   # stable inside each process, not between them


# -- harness -----------------------------------------------------------------

def test_measure_times_first_call_apart_and_calibrates():
    calls = []

    def fn():
        calls.append(1)
        if len(calls) == 1:
            time.sleep(0.05)   # a first call that traces/builds
        else:
            time.sleep(0.001)

    budget = harness.Budget(warmup=2, repeats=4, min_repeats=3, target_time=0.01, max_number=1000, max_time=5)
    m = harness.measure(fn, budget)
    assert m.first_call_s >= 0.05
    assert len(m.samples) == 4
    assert m.number >= 5                     # ~10 ms target / ~1 ms per call
    assert max(m.samples) < 0.02             # the slow first call is not in the steady state
    assert len(calls) == 1 + m.warmup_calls + m.number * len(m.samples)


def test_measure_slow_calls_get_min_repeats_within_budget():
    budget = harness.Budget(warmup=1, repeats=10, min_repeats=3, target_time=0.001, max_number=100, max_time=0.05)
    m = harness.measure(lambda: time.sleep(0.02), budget)
    assert m.number == 1 and len(m.samples) == 3


def test_measure_inner_divides_per_iteration():
    budget = harness.Budget(warmup=1, repeats=3, min_repeats=3, target_time=0.001, max_number=1, max_time=5)
    m = harness.measure(lambda: time.sleep(0.01), budget, inner=10)
    assert all(0.0009 < s < 0.003 for s in m.samples)


def test_run_loop_times_exactly_the_calls_it_makes():
    # The self-check benchmark reports the per-call overhead of this very loop (a reported
    # figure, never a timed assertion); here only that it runs the callable `number` times.
    calls = []
    elapsed = harness.run_loop(lambda: calls.append(1), 1000)
    assert len(calls) == 1000 and elapsed > 0


def test_peak_rss_reset_and_read():
    harness.reset_peak_rss()
    before = harness.peak_rss_mb()
    blob = bytearray(64 * 1024 * 1024)
    blob[::4096] = b"x" * len(blob[::4096])
    after = harness.peak_rss_mb()
    assert before is not None and after is not None and after >= before + 50


# -- catalogue -----------------------------------------------------------------

def test_every_preset_lists_unique_variants_with_seeds():
    for preset in PRESETS.values():
        variants = all_variants(preset)
        ids = [v.id for v in variants]
        assert len(ids) == len(set(ids))
        assert all(v.seed for v in variants)
        assert {v.mode for v in variants} <= {"eager", "graph"}


def test_select_globs_and_substrings():
    vs = all_variants(PRESETS["quick"])
    assert select(vs, []) == vs
    training = select(vs, ["training.*"])
    assert training and all(v.benchmark.startswith("training.") for v in training)
    sub = select(vs, ["loop=fit,input=tf.data"])
    assert sub and all("input=tf.data" in v.id for v in sub)


def test_customized_preset_overrides_repeats_and_processes():
    p = customized(PRESETS["standard"], repeats=2, processes=1)
    assert p.budget.repeats == 2 and p.budget.min_repeats == 2 and p.processes == 1
    assert PRESETS["standard"].processes == 2   # the original is untouched


def test_suite_list_cli_names_benchmarks_and_seeds():
    out = subprocess.run([sys.executable, "-m", "suite", "list"], cwd=ROOT, capture_output=True, text=True, check=True)
    for b in load_benchmarks():
        assert b.name in out.stdout
    assert "seed 000" in out.stdout
    js = subprocess.run([sys.executable, "-m", "suite", "list", "--json", "--only", "training.question*"], cwd=ROOT,
                        capture_output=True, text=True, check=True)
    listed = json.loads(js.stdout)
    assert listed and all(v["benchmark"] == "training.question" and v["seed"] == "000" for v in listed)


# -- isolation: crashes, hangs and errors cost only their own variant -----------

def _run_suite(tmp_path, *args, env_extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(FAKE_TF), str(ROOT)])
    env["TFMATRIX_SUITE_PLUGINS"] = str(FAULTS)
    env.update(env_extra or {})
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "suite", "run", "--out", str(out), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    return proc, (json.loads(out.read_text()) if out.exists() else None)


@pytest.mark.slow
def test_faulty_variants_become_records_and_the_run_goes_on(tmp_path):
    proc, doc = _run_suite(tmp_path, "--only", "faults.[!w]*")
    assert proc.returncode == 0, proc.stderr
    assert validate(doc) == []
    by = {r["benchmark"]: r for r in doc["records"]}
    assert [r["benchmark"] for r in doc["records"]] == [
        "faults.ok1", "faults.raise", "faults.na", "faults.crash", "faults.ok2", "faults.hang", "faults.ok3",
        "faults.abort", "faults.ok4"]
    for name in ("faults.ok1", "faults.ok2", "faults.ok3", "faults.ok4"):
        assert by[name]["status"] == "ok" and by[name]["stats"]["median"] > 0
    assert by["faults.raise"]["status"] == "error"
    assert by["faults.raise"]["reason"] == "ValueError: broken on purpose"
    assert "broken on purpose" in by["faults.raise"]["traceback"]
    assert by["faults.na"] ["status"] == "n/a" and by["faults.na"]["reason"] == "not here, on purpose"
    assert by["faults.crash"]["status"] == "error"
    assert by["faults.crash"]["reason"] == "worker died with SIGKILL (killed: likely out of memory)"
    assert by["faults.hang"]["status"] == "timeout" and by["faults.hang"]["reason"] == "timed out after 3 s"
    assert by["faults.abort"]["status"] == "error" and "SIGABRT" in by["faults.abort"]["reason"]
    # progress lines a host can follow
    assert "[suite 9/9]" in proc.stderr


def test_a_variant_failing_while_interleaved_costs_only_itself(tmp_path):
    """In one window: raise_later raises mid-sampling (same process goes on), crash_later kills the worker
    mid-sampling (blamed through its bout event; its window-mates are measured again in a new worker)."""
    proc, doc = _run_suite(tmp_path, "--only", "faults.window*")
    assert proc.returncode == 0, proc.stderr
    assert validate(doc) == []
    by = {r["params"]["behaviour"]: r for r in doc["records"]}
    assert by["steady"]["status"] == "ok" and by["steady"]["stats"]["median"] > 0
    assert by["raise_later"]["status"] == "error"
    assert by["raise_later"]["reason"] == "RuntimeError: failed while sampled"
    assert by["crash_later"]["status"] == "error" and "SIGKILL" in by["crash_later"]["reason"]


def test_window_mates_are_sampled_in_the_same_rounds(tmp_path):
    proc, doc = _run_suite(tmp_path, "--only", "faults.window*", "--repeats", "6",
                           env_extra={"FAULTS_NO_CRASH": "1"})
    assert proc.returncode == 0, proc.stderr
    by = {r["params"]["behaviour"]: r for r in doc["records"]}
    steady, crash = by["steady"], by["crash_later"]
    assert steady["status"] == crash["status"] == "ok"
    assert steady["schedule"]["windows"] == crash["schedule"]["windows"] != [None]
    assert steady["schedule"]["rounds"] == crash["schedule"]["rounds"]
    assert len(steady["samples"]) >= 6


def test_between_process_records_per_process_samples(tmp_path):
    proc, doc = _run_suite(tmp_path, "--only", "faults.ok*", "--processes", "2", "--repeats", "3")
    assert proc.returncode == 0, proc.stderr
    rec = doc["records"][0]
    assert len(rec["per_process"]) == 2 and all(len(p) == 3 for p in rec["per_process"])
    assert rec["between_process"]["processes"] == 2
    assert len(rec["samples"]) == 6
    assert doc["config"]["processes"] == 2


def test_gpu_cell_without_gpu_is_an_error_not_a_result(tmp_path):
    proc, doc = _run_suite(tmp_path, "--only", "faults.ok1", "--target", "gpu")
    assert proc.returncode == 3
    assert doc["status"] == "error" and doc["gpu"] == {"requested": True, "visible": [], "ok": False}
    assert "sees no GPU" in doc["error"] and doc["records"] == []
    assert any("sees no GPU" in w for w in doc["warnings"])
    assert validate(doc) == []


def test_missing_tensorflow_is_a_clear_error(tmp_path):
    env = {"PYTHONPATH": str(ROOT)}   # no fake, no real TensorFlow on this interpreter
    proc, doc = _run_suite(tmp_path, "--only", "faults.ok1", env_extra=env)
    assert proc.returncode == 3
    assert doc["status"] == "error" and "could not import TensorFlow" in doc["error"]
    assert "ModuleNotFoundError" in doc["error"]


def test_variant_ids_are_stable_strings():
    v = Variant("b", "000", (("model", "small"), ("batch_shape", (8, 40, 16)), ("flag", True)), mode="graph",
                api="tf.keras")
    assert v.id == "b[model=small,batch_shape=8x40x16,flag=true]"
    assert v.group == "graph:tf.keras"


# -- imports run one way -------------------------------------------------------

def test_the_suite_imports_run_one_way():
    """The plugin loader sits under the registry, never above it (no circle at all: ``test_imports``)."""
    from test_imports import cycle, imports

    graph = imports("suite")
    assert "suite.plugins" in graph["suite.registry"] and "suite.registry" not in graph["suite.plugins"]
    assert cycle(graph) == [], "import circle in the suite: " + " -> ".join(cycle(graph))


def test_a_user_file_and_the_plugin_loader_import_neither_the_registry_nor_tensorflow():
    code = ("import sys; import suite.api, suite.plugins; "
            "print(sorted(m for m in sys.modules if m in ('suite.registry', 'tensorflow', 'keras')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_keras_nightly_is_not_a_standalone_keras(monkeypatch):
    """TF 2.5 depends on keras-nightly: its `keras` module is no Keras release (n/a, not an error)."""
    from suite import fingerprint

    monkeypatch.setattr(fingerprint, "installed_packages",
                        lambda: {"tensorflow-cpu": "2.5.3", "keras-nightly": "2.5.0.dev2021032900"})
    assert fingerprint.nightly_keras() == "2.5.0.dev2021032900"
    monkeypatch.setattr(fingerprint, "installed_packages", lambda: {"keras": "2.3.1", "keras-nightly": "2.5.0"})
    assert fingerprint.nightly_keras() is None
    monkeypatch.setattr(fingerprint, "installed_packages", lambda: {"tensorflow-cpu": "2.1.0"})
    assert fingerprint.nightly_keras() is None


def test_the_sandbox_facts_read_privileges_and_the_process_limit():
    from suite import fingerprint

    facts = fingerprint.sandbox_facts()
    assert int(facts["capabilities_bounding"], 16) >= 0 and int(facts["capabilities_effective"], 16) >= 0
    assert facts["no_new_privileges"] in (True, False)
    assert facts["pids_max"] is None or facts["pids_max"] == "max" or facts["pids_max"].isdigit()
