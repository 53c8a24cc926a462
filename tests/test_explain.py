"""``explain``: profiles of two sides lined up (pure, on golden profiles), the suite's profiler (real cProfile on the
stand-in TensorFlow), a cell that cannot be profiled, and the command's one-line refusals. The real thing in a
Docker cell is ``test_e2e_explain.py``."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from suite.schema import validate_profiles
from tfmatrix import cli
from tfmatrix.analysis.explain.profiles import explain, function_key, package_of, pair, sentences
from tfmatrix.errors import UserError
from tfmatrix.execution.profiling import profile_in_cell
from tfmatrix.matrix import load
from tfmatrix.results.profile_docs import read_profiles
from tfmatrix.results.store import CellOutcome
from tfmatrix.runners.base import SuiteExit

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "profiles"
FAKE_TF = ROOT / "tests" / "fake_tf"
FAULTS = ROOT / "tests" / "suite_plugins" / "faults.py"


def _explained(name: str, a: str, b: str) -> Any:
    doc = read_profiles(GOLDEN / name)
    both = pair(doc, a, doc, b)
    assert not isinstance(both, str), both
    return explain(*both)


def test_a_function_keeps_its_key_across_releases_and_hosts_and_gets_its_package() -> None:
    a = function_key("/usr/local/lib/python3.11/site-packages/keras/src/engine/training.py", "predict")
    b = function_key("/opt/venv/lib/python3.7/site-packages/keras/src/engine/training.py", "predict")
    assert a == b == "keras/src/engine/training.py:predict"
    assert function_key("/opt/tfmatrix/suite/benchmarks/inference.py", "step") == "suite/benchmarks/inference.py:step"
    assert function_key("/usr/lib/python3.8/threading.py", "wait") == "threading.py:wait"
    assert function_key("/tmp/__autograph_generated_filenapmijvs.py", "tf__f") == "<autograph>.py:tf__f"
    assert package_of("/x/site-packages/tensorflow/python/keras/engine/training.py", "fit") == "keras"
    assert package_of("/x/site-packages/tf_keras/src/engine/training.py", "fit") == "tf_keras"
    assert package_of("~", "<built-in method tensorflow.python._pywrap_tfe.TFE_Py_FastPathExecute>") == "tensorflow"
    assert package_of("/opt/tfmatrix/bench/0/mine.py", "work") == "your file"
    assert package_of("/usr/lib/python3.11/threading.py", "wait") == "python"


def test_golden_profiles_give_the_same_ranked_differences_and_sentences() -> None:
    e = _explained("tf2.15-cpu.json", "inference.tiny[path=direct_call]", "inference.tiny[path=predict]")
    assert [c.key for c in e.changes] == [
        "keras/src/engine/data_adapter.py:__init__",
        "tensorflow/python/data/ops/dataset_ops.py:from_tensor_slices",
        "threading.py:wait",
        "keras/src/engine/training.py:predict",
        "<built-in method tensorflow.python._pywrap_tfe.TFE_Py_FastPathExecute>",
        "tensorflow/python/eager/execute.py:quick_execute",
        "keras/src/engine/base_layer.py:__call__",
        "suite/benchmarks/inference.py:step",
    ]
    assert sentences(e) == [
        "B takes 12 ms per step against 1 ms for A (12.00x, profiler included): 11 ms more per step.",
        "Where the paths part: B spends 96% of its step under training.py:predict, 54% under "
        "data_adapter.py:__init__ and 25% under dataset_ops.py:from_tensor_slices (with their callees), none of which "
        "A calls.",
        "Of that, the packages' own time: keras 47%, tensorflow 32%, python 21%.",
        "27% of the difference is the own time of keras/src/engine/data_adapter.py:__init__ (keras), called only by "
        "B, once per step.",
        "B makes calls A never does (4 functions, 9 ms per step of their own): data_adapter.py:__init__, "
        "dataset_ops.py:from_tensor_slices, threading.py:wait.",
    ]


def test_golden_retracing_is_named_with_its_trace_counts() -> None:
    e = _explained("tracing.json", "graphs.tracing[arg=tensor]", "graphs.tracing[arg=python_distinct]")
    said = sentences(e)
    assert said[0] == "B takes 50 ms per step against 1 ms for A (50.00x, profiler included): 49 ms more per step."
    assert said[1] == ("Where the paths part: B spends 92% of its step under func_graph.py:func_graph_from_py_func "
                       "and 48% under api.py:converted_call (with their callees), none of which A calls.")
    assert said[2] == "Of that, the packages' own time: tensorflow 100%."
    assert said[3] == ("37% of the difference is the own time of "
                       "tensorflow/python/autograph/impl/api.py:converted_call (tensorflow), called only by B, 10 "
                       "times per step.")
    assert said[-1] == ("Its tf.function was traced 50 times for B and once for A (first call, warm-up and profiled "
                        "calls): retracing.")


def test_a_side_that_could_not_be_profiled_is_one_reason() -> None:
    doc = read_profiles(GOLDEN / "tf2.15-cpu.json")
    doc = dataclasses.replace(doc, records=dict(doc.records, broken={"id": "broken", "status": "error",
                                                                     "reason": "ValueError: no"}))
    assert pair(doc, "broken", doc, "inference.tiny[path=predict]") == (
        "could not profile broken in tf2.15-cpu: ValueError: no")
    assert "no such variant" in str(pair(doc, "missing", doc, "broken"))


def test_a_file_that_is_not_a_profiles_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"schema": "tfmatrix.results"}))
    with pytest.raises(UserError, match="not a profiles file"):
        read_profiles(bad)


def test_the_suite_profiles_a_variant_and_its_file_keeps_the_contract(tmp_path: Path) -> None:
    """Real cProfile in the suite's worker, on the stand-in TensorFlow: the file validates, the work is in it."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FAKE_TF), str(ROOT)]), TFMATRIX_SUITE_PLUGINS=str(FAULTS))
    out = tmp_path / "profiles.json"
    proc = subprocess.run([sys.executable, "-m", "suite", "profile", "--only", "faults.ok1", "--only", "faults.na",
                           "--only", "faults.crash", "--calls", "3", "--out", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert validate_profiles(doc) == []
    by = {r["benchmark"]: r for r in doc["records"]}
    ok = by["faults.ok1"]
    assert ok["status"] == "ok" and ok["profiler"] == "cProfile" and ok["step_calls"] >= 3
    assert any(f["name"] == "<lambda>" and f["file"].endswith("faults.py") for f in ok["functions"]), ok["functions"]
    assert by["faults.na"]["status"] == "n/a" and by["faults.na"]["reason"] == "not here, on purpose"
    assert by["faults.crash"]["status"] == "error" and "SIGKILL" in by["faults.crash"]["reason"]


class _Env:
    def __init__(self, out: Path, writes: bool) -> None:
        self.runner = {"name": "fake", "image": None}
        self.timings: dict[str, float] = {}
        self.out_dir = out
        self.writes = writes
        self.closed = False

    def suite_path(self, name: str) -> str:
        return str(self.out_dir / name)

    def run_suite(self, args: Any, log: Any, timeout_s: float, cpus: Any = None) -> SuiteExit:
        if self.writes:
            (self.out_dir / "profiles.json").write_text(
                '{"schema": "tfmatrix.profiles", "schema_version": 1, "status": "ok", "records": []}')
        return SuiteExit(0 if self.writes else 3)

    def close(self) -> None:
        self.closed = True


def test_a_cell_that_cannot_be_profiled_is_its_reason_not_a_crash(tmp_path: Path) -> None:
    cell = load(ROOT / "tests" / "matrices" / "docker.toml").cell("tf1.15-cpu")
    skipped = SimpleNamespace(name="fake", prepare=lambda *a: CellOutcome(cell.name, "skipped", "no engine", {}, {}))
    assert profile_in_cell(cell, skipped, ["x"], tmp_path, 2) == "could not profile: skipped: no engine"  # type: ignore[arg-type]
    env = _Env(tmp_path, writes=False)
    silent = SimpleNamespace(name="fake", prepare=lambda *a: env)
    said = profile_in_cell(cell, silent, ["x"], tmp_path, 2)  # type: ignore[arg-type]
    assert isinstance(said, str) and said.startswith("could not profile: the suite wrote no profiles file (exit code 3")
    assert env.closed
    writes = _Env(tmp_path / "w", writes=True)
    writes.out_dir.mkdir()
    made = profile_in_cell(cell, SimpleNamespace(name="fake", prepare=lambda *a: writes), ["x"], tmp_path, 2)  # type: ignore[arg-type]
    assert made == tmp_path / "profiles" / "tf1.15-cpu.json" and made.is_file() and writes.closed


@pytest.mark.parametrize("argv, words", [
    (["explain"], "name one cell and two variants"),
    (["explain", "--cell", "tf1.15-cpu"], "name the two variants with --variants"),
    (["explain", "--cells", "tf1.15-cpu", "tf2.15-cpu"], "name the variant with --variant"),
])
def test_explain_without_what_to_explain_is_one_line(argv: list[str], words: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def _golden_reports(tmp: Path) -> Path:
    import tarfile

    with tarfile.open(ROOT / "tests" / "golden" / "default-matrix.tar.gz") as tar:
        tar.extractall(tmp, filter="data")
    return tmp


@pytest.mark.slow
def test_a_claim_in_a_cell_is_its_seed_lines_two_sides_as_the_last_run_measured_them(tmp_path: Path) -> None:
    from tfmatrix.commands.explain import claim_sides

    reports = _golden_reports(tmp_path)
    matrix = load(ROOT / "matrix.toml")
    (cell_a, id_a), (cell_b, id_b) = claim_sides("predict_slower_after_compile", "tf2.0-keras2.3.1-cpu",
                                                 str(reports), matrix)
    assert cell_a.name == cell_b.name == "tf2.0-keras2.3.1-cpu"
    assert "path=predict" in id_a and "path=predict" in id_b and id_a != id_b
    (cell_a, _), (cell_b, _) = claim_sides("tf1_faster_train_on_batch", "tf2.0-keras2.3.1-cpu", str(reports), matrix)
    assert {cell_a.name, cell_b.name} == {"tf1.14-keras2.2.5-cpu", "tf2.0-keras2.3.1-cpu"}
    with pytest.raises(UserError, match="no such claim; claims are: tf1_faster_train_on_batch"):
        claim_sides("nope", "tf2.0-keras2.3.1-cpu", str(reports), matrix)
    with pytest.raises(UserError, match="has no results"):
        claim_sides("predict_slower_after_compile", "tf2.0-keras2.3.1-cpu", str(tmp_path / "none"), matrix)


def _profile(vid: str, wall: float, rows: list[tuple[str, str, int, float, float]]) -> dict[str, Any]:
    return {"id": vid, "benchmark": "training.question", "params": {}, "status": "ok", "reason": None,
            "profiler": "cProfile", "step_calls": 10, "wall_s": wall, "rest": {"functions": 0, "self_s": 0.0},
            "extra": {}, "info": {}, "first_call_s": None,
            "functions": [{"file": f, "line": 1, "name": n, "calls": c, "self_s": t, "cum_s": cum, "callers": []}
                          for f, n, c, t, cum in rows]}


def test_two_entry_points_into_native_code_are_named_not_shared_out() -> None:
    """TF2 eager (TFE_Py_Execute) against TF1 graph (TF_SessionRunCallable): no share of the difference is either's."""
    from tfmatrix.analysis.explain.profiles import profile_of

    a = profile_of(_profile("eager", 1.53, [
        ("~", "<built-in method _pywrap_tensorflow_internal.TFE_Py_Execute>", 10, 1.51, 1.51),
        ("/x/site-packages/keras/engine/training.py", "train_on_batch", 10, 0.01, 1.53)]), "tf2.0")
    b = profile_of(_profile("graph", 1.35, [
        ("~", "<built-in method _pywrap_tensorflow_internal.TF_SessionRunCallable>", 10, 1.34, 1.34),
        ("/x/site-packages/keras/engine/training.py", "train_on_batch", 10, 0.01, 1.35)]), "tf1.14")
    said = sentences(explain(a, b))
    assert said[0] == "A takes 153 ms per step against 135 ms for B (1.13x, profiler included): 18 ms more per step."
    assert "Of that, the packages' own time: tensorflow 100%." in said
    assert ("A's time is mostly the own time of <built-in method _pywrap_tensorflow_internal.TFE_Py_Execute> (151 ms "
            "per step), B's of <built-in method _pywrap_tensorflow_internal.TF_SessionRunCallable> (134 ms): the two "
            "run their work through different entry points, and the difference is inside them, below what cProfile "
            "sees.") in said
    assert not any("% of the difference is" in line for line in said)


def test_a_difference_inside_one_native_call_says_the_profiler_cannot_see_in() -> None:
    """XLA on the CPU: both sides make the one call; all the difference is inside it."""
    from tfmatrix.analysis.explain.profiles import profile_of

    execute = "<built-in method tensorflow.python._pywrap_tfe.TFE_Py_Execute>"
    a = profile_of(_profile("xla", 10.3, [("~", execute, 10, 10.28, 10.28)]), "tf2.15")
    b = profile_of(_profile("plain", 1.92, [("~", execute, 10, 1.9, 1.9)]), "tf2.15")
    said = sentences(explain(a, b))
    assert said[0] == "A takes 1.03 s per step against 192 ms for B (5.36x, profiler included): 838 ms more per step."
    assert said[1] == "Of that, the packages' own time: tensorflow 100%."
    assert said[2] == (f"100% of the difference is the own time of {execute} (tensorflow), called once per step by B "
                       "and once by A: native code, whose inside cProfile does not see.")
