"""The seed 001-004 benchmarks and seed 000's input pipelines (suite/benchmarks/).

Fast tests need no TensorFlow: the catalogue per preset (every benchmark,
seeds, unique ids, sane sizes, quick covering every code path of full), the
Python 3.7 and import rules of ``suite/``, and the compat helpers these
benchmarks added.

Tests marked ``tf`` read the results of real quick-preset runs of default-matrix
cells through the venv runner (the ``venv_cell`` fixture): TF115 (TF 1.15),
TF20 (TF 2.0 + keras 2.3.1), TF215, TF221 (newest TF + Keras 3) and, with
``TFMATRIX_TEST_MORE_CELLS=1``, TF114 (TF 1.14 + keras 2.2.5) and TF221K2 (the
tf_keras cell, ``TF_USE_LEGACY_KERAS=1``: tf_keras as tf.keras, Keras 3 as
standalone keras). Each cell's expected ``ok``/``n/a`` is spelled out below,
and the retrace counts are asserted exactly.
"""
from __future__ import annotations

import ast
import fnmatch
import json
import os
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from variant_sizes import SIZE_PARAMS
from variant_sizes import code_path as _code_path
from variant_sizes import volume as _volume

from suite.definitions import PRESETS, NotApplicable, Variant
from suite.registry import all_variants

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("inference", "graphs", "graphs_tracing", "tensor_ops", "input_pipelines")
SEEDS = {
    "inference.tiny": "001",
    "inference.medium": "001",
    "tensor_ops.matmul": "002",
    "tensor_ops.batched_matmul": "002",
    "graphs.xla": "003",
    "graphs.power": "004",
    "graphs.matmul_bias": "004",
    "graphs.tracing": "004",
    "input_pipelines.fit": "000",
}


def _mine(preset: str) -> list[Variant]:
    return [v for v in all_variants(PRESETS[preset]) if v.benchmark in SEEDS]


# -- the catalogue (no TensorFlow) ---------------------------------------------------

@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_benchmark_in_every_preset_with_its_seed(preset):
    variants = _mine(preset)
    by_bench: dict[str, list[Variant]] = {}
    for v in variants:
        by_bench.setdefault(v.benchmark, []).append(v)
    assert set(by_bench) == set(SEEDS)
    for name, vs in by_bench.items():
        assert all(v.seed == SEEDS[name] for v in vs), name
    ids = [v.id for v in variants]
    assert len(ids) == len(set(ids))
    for v in variants:
        assert v.mode in ("eager", "graph") and v.api in ("tf.keras", "keras", "tf", "numpy", "backend")
        assert v.api != "backend" or v.mode == "eager"                  # JAX and PyTorch run eagerly
        assert v.param("mode") == v.mode and v.param("api") == v.api      # recorded among the parameters
        for k in SIZE_PARAMS & set(dict(v.params)):
            assert _volume(v.param(k)) > 0, (v.id, k)


def test_quick_keeps_every_code_path_of_full():
    quick = {_code_path(v) for v in _mine("quick")}
    full = {_code_path(v) for v in _mine("full")}
    standard = {_code_path(v) for v in _mine("standard")}
    assert quick <= full and standard == full
    # every value of every code-path parameter (path, stage, call, jit_compile, input, impl, arg, mode,
    # api, model) that full has, quick has too, per module (inference.medium's paths run the same code as
    # inference.tiny's: quick times the medium model through predict only)
    values_full = {(p[0].split(".")[0], k, val) for p in full for k, val in p[1:]}
    values_quick = {(p[0].split(".")[0], k, val) for p in quick for k, val in p[1:]}
    assert values_full == values_quick


def test_quick_is_never_larger_than_standard_or_full():
    def sizes(preset):
        return {_code_path(v): {k: _volume(v.param(k)) for k in SIZE_PARAMS if v.param(k) is not None}
                for v in _mine(preset)}
    quick, standard, full = sizes("quick"), sizes("standard"), sizes("full")
    for path, q in quick.items():
        for k, size in q.items():
            assert size <= standard[path][k] <= full[path][k], (path, k)


def test_full_preset_uses_the_seeds_sizes():
    full = _mine("full")

    def one(bench, **params):
        found = [v for v in full if v.benchmark == bench and all(v.param(k) == val for k, val in params.items())]
        assert found, (bench, params)
        return found[0]

    assert one("inference.tiny", path="predict").param("batch_shape") == (32, 4)
    medium = one("inference.medium", path="predict")
    assert medium.param("batch_shape") == (32, 400, 16) and medium.param("width") == 1.0
    assert one("graphs.xla", model="efficientnetv2s").param("input_shape") == (1, 384, 384, 3)
    assert one("tensor_ops.matmul", impl="numpy.dot").param("n") == 10000
    batched = one("tensor_ops.batched_matmul", impl="einsum")
    assert batched.param("a_shape") == (1000, 100, 1000) and batched.param("b_shape") == (1000, 1000)
    power = one("graphs.power", call="eager")
    assert power.param("exponent") == 100 and power.param("shape") == (10, 10) and power.param("dtype") == "int32"
    # seed 001's comparison: variants that differ only in stage exist side by side
    stages = {v.param("stage") for v in full if v.benchmark == "inference.tiny" and v.param("path") == "predict"
              and v.mode == "eager" and v.api == "tf.keras"}
    assert stages == {"uncompiled", "compiled", "train_built"}


def test_quick_xla_and_tracing_grid():
    quick = _mine("quick")
    xla = {(v.param("model"), v.param("call"), v.param("jit_compile")) for v in quick if v.benchmark == "graphs.xla"}
    assert xla == {("efficientnetv2s", "eager", "none"), ("efficientnetv2s", "tf.function", "none"),
                   ("mobilenetv2", "eager", "none"), ("mobilenetv2", "tf.function", "none"),
                   ("mobilenetv2", "tf.function", "false"), ("mobilenetv2", "tf.function", "true")}
    assert all(v.mode == "eager" for v in quick if v.benchmark in ("graphs.xla", "graphs.tracing"))
    assert {v.param("arg") for v in quick if v.benchmark == "graphs.tracing"} == {
        "tensor", "python_same", "python_cycle", "tensor_shapes", "python_distinct"}
    backend = {(v.param("arg"), v.param("call")) for v in quick
               if v.benchmark == "graphs.tracing" and v.api == "backend"}
    assert backend == {(a, "compiled") for a in ("tensor", "python_same", "python_cycle", "tensor_shapes",
                                                 "python_distinct")} | {("python_distinct", "compiled_static")}
    # graph mode is a Session for the small functions, never a tf.function
    for v in quick:
        if v.benchmark in ("graphs.power", "graphs.matmul_bias"):
            assert (v.mode == "graph") == (v.param("call") == "session")


def test_suite_list_shows_these_benchmarks_with_seeds_without_tensorflow():
    code = ("import sys, json; from suite.__main__ import main; main(['list', '--json', '--preset', 'quick']); "
            "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules, 'listing imported TF'")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    listed = json.loads(out.stdout)
    seen = {v["benchmark"]: v["seed"] for v in listed if v["benchmark"] in SEEDS}
    assert seen == SEEDS
    text = subprocess.run([sys.executable, "-m", "suite", "list", "--only", "graphs.*"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout
    assert "graphs.xla  (seed 003" in text and "graphs.tracing  (seed 004" in text


@pytest.mark.parametrize("module", MODULES)
def test_benchmark_modules_are_python37_and_import_only_the_suite(module):
    path = ROOT / "suite" / "benchmarks" / (module + ".py")
    src = path.read_text()
    tree = ast.parse(src, filename=str(path), feature_version=(3, 7))   # no walrus, no 3.8+ syntax
    for node in tree.body:                                              # module-level imports only
        if isinstance(node, ast.Import):
            pytest.fail(f"{module} imports {[a.name for a in node.names]} at module level")
        if isinstance(node, ast.ImportFrom):
            assert node.level > 0 or node.module in ("__future__", "typing"), (module, node.module)
    assert "import tensorflow" not in src and "import keras" not in src   # TF comes from env.tf in prepare()


# -- compat helpers these benchmarks added (no TensorFlow) ------------------------------

def _fake_tf(version: str, function: Callable[..., Any] | None = None, data: Any = None) -> Any:
    return types.SimpleNamespace(__version__=version, function=function, data=data,
                                 executing_eagerly=lambda: True)


def _handle(api: str, version: str) -> Any:
    from suite.compat import KerasHandle

    module = types.SimpleNamespace(layers=None, models=None, optimizers=None, backend=None)
    return KerasHandle(module, "test", version, api)


def test_eager_input_casts_only_where_keras_does_not():
    np = pytest.importorskip("numpy")
    from suite.compat import Compat

    x = np.zeros((2, 3))
    cases = [("1.15.0", "tf.keras", "2.2.4-tf", "float32"), ("1.15.0", "keras", "2.2.5", "float32"),
             ("2.0.4", "tf.keras", "2.2.4-tf", "float64"), ("2.0.4", "keras", "2.3.1", "float32"),
             ("2.21.0", "tf.keras", "3.15.1", "float64"), ("2.21.0", "keras", "3.15.1", "float64")]
    for tf_version, api, keras_version, dtype in cases:
        got = Compat(_fake_tf(tf_version)).eager_input(_handle(api, keras_version), x)
        assert str(got.dtype) == dtype, (tf_version, api)


def test_direct_call_is_na_for_standalone_keras2_only():
    from suite.compat import Compat

    compat = Compat(_fake_tf("2.0.4"))
    with pytest.raises(NotApplicable, match="standalone keras 2.3.1"):
        compat.require_direct_call(_handle("keras", "2.3.1"))
    compat.require_direct_call(_handle("tf.keras", "2.2.4-tf"))
    compat.require_direct_call(_handle("keras", "3.15.1"))


def test_jit_keyword_tracing_count_autotune_and_materialize():
    from suite.compat import Compat

    def function_115(func=None, input_signature=None, autograph=True, experimental_compile=None):
        return ("fn", experimental_compile)

    def function_20(func=None, input_signature=None, autograph=True):
        return "fn"

    compat = Compat(_fake_tf("1.15.0", function_115))
    assert compat.jit_argument() == "experimental_compile"
    assert compat.tf_function(lambda: 0, jit=True) == ("fn", True)
    with pytest.raises(NotApplicable, match="no jit_compile/experimental_compile"):
        Compat(_fake_tf("2.0.4", function_20)).tf_function(lambda: 0, jit=False)
    assert compat.tracing_count(object()) is None
    assert compat.tracing_count(types.SimpleNamespace(experimental_get_tracing_count=lambda: 3)) == 3
    data = types.SimpleNamespace(experimental=types.SimpleNamespace(AUTOTUNE=-1))
    assert Compat(_fake_tf("1.15.0", data=data)).autotune() == -1
    with pytest.raises(NotApplicable):
        Compat(_fake_tf("1.15.0", data=types.SimpleNamespace())).autotune()
    tensor = types.SimpleNamespace(numpy=lambda: "host")
    assert Compat.materialize([tensor, {"a": tensor}, 1]) == ["host", {"a": "host"}, 1]


# -- real cells (TensorFlow in virtualenvs) ---------------------------------------------

Rule = tuple[Callable[[dict[str, Any]], bool], str]   # (which records, reason substring for n/a)


def _p(**want: Any) -> Callable[[dict[str, Any]], bool]:
    """Records whose benchmark (glob) and parameters match; tuple values: any of them."""
    bench = want.pop("benchmark", "*")

    def match(rec: dict[str, Any]) -> bool:
        if not fnmatch.fnmatchcase(rec["benchmark"], bench):
            return False
        for k, v in want.items():
            have = rec["params"].get(k)
            if isinstance(v, tuple):
                if have not in v:
                    return False
            elif have != v:
                return False
        return True
    return match


GRAPH_DIRECT = (_p(benchmark="inference.*", mode="graph", path=("call", "call_training_false", "tf_function")),
                "needs eager execution; in graph mode it only builds symbolic ops")
NO_EFFICIENTNETV2 = (_p(benchmark="graphs.xla", model="efficientnetv2s"), "has no keras.applications.EfficientNetV2S")
NO_JIT = (_p(benchmark="graphs.xla", jit_compile=("false", "true")), "has no jit_compile/experimental_compile")
KERAS_NO_TF_DATA = (_p(benchmark="input_pipelines.fit", api="keras", input=("tf.data", "tf.data_prefetch")),
                    "cannot consume a tf.data.Dataset")
SAME_PACKAGE = (_p(api="keras"), "standalone keras is the same package as tf.keras")
NO_TORCH = (_p(benchmark="input_pipelines.fit", input="torch.dataloader"),
            "needs torch, which this cell does not install")
# every TF cell: the JAX/PyTorch twins of seeds 002/004 are set aside from the fingerprint (``config.outside``)
BACKEND_ONLY = (_p(api="backend"), "this cell runs TensorFlow, whose api=tf variants answer the same question")

# cell -> (n/a rules in the order the suite decides them; everything else must be ok, jit keyword)
CELLS: dict[str, tuple[list[Rule], str | None]] = {
    # tf1.15-cpu has only the bundled tf.keras: every standalone-keras variant is n/a.
    "TF115": ([BACKEND_ONLY, (_p(api="keras"), "no standalone keras package is installed"), NO_EFFICIENTNETV2,
               GRAPH_DIRECT, NO_TORCH],
              "experimental_compile"),
    "TF20": ([BACKEND_ONLY, NO_EFFICIENTNETV2, NO_JIT, GRAPH_DIRECT,
              (_p(benchmark="inference.*", api="keras", path=("call", "call_training_false")),
               "standalone keras 2.3.1: model(x"),
              KERAS_NO_TF_DATA, NO_TORCH], None),
    "TF215": ([BACKEND_ONLY, SAME_PACKAGE, GRAPH_DIRECT, NO_TORCH], "jit_compile"),
    "TF221": ([BACKEND_ONLY, SAME_PACKAGE, (_p(api="tf.keras", mode="graph"), "Keras 3 has no TF1-style graph mode"),
               GRAPH_DIRECT, NO_TORCH],
              "jit_compile"),
    "TF114": ([BACKEND_ONLY, (_p(api="keras", mode="eager"), "cannot run with TF1 eager execution"), NO_EFFICIENTNETV2,
               NO_JIT, GRAPH_DIRECT, KERAS_NO_TF_DATA, NO_TORCH], None),
    "TF221K2": ([BACKEND_ONLY, (_p(api="keras", mode="graph"), "Keras 3 has no TF1-style graph mode"),
                 GRAPH_DIRECT, NO_TORCH],
                "jit_compile"),
}
# The dev cells above, as cells of the default matrix (run by the venv runner).
CELL_NAMES = {"TF115": "tf1.15-cpu", "TF20": "tf2.0-keras2.3.1-cpu", "TF215": "tf2.15-cpu",
              "TF221": "tf2.21-keras3-cpu", "TF114": "tf1.14-keras2.2.5-cpu", "TF221K2": "tf2.16-tf_keras-cpu"}
REQUIRED = ("TF115", "TF20", "TF215", "TF221")
# The two extra cells cost CI time; set TFMATRIX_TEST_MORE_CELLS=1 to run them too.
MORE = os.environ.get("TFMATRIX_TEST_MORE_CELLS", "").strip() in ("1", "true", "yes")
EXPECTED_TRACES = {"tensor": 1, "python_same": 1, "python_cycle": 3, "tensor_shapes": 3}


@pytest.fixture(params=sorted(CELLS, key=lambda c: (c not in REQUIRED, c)))
def cell_results(request, venv_cell):
    """(cell key, the suite's results) from a real quick run of that cell through the venv runner."""
    cell = request.param
    if cell not in REQUIRED and not MORE:
        pytest.skip(f"{CELL_NAMES[cell]} runs only with TFMATRIX_TEST_MORE_CELLS=1")
    doc = dict(venv_cell(CELL_NAMES[cell])["results"])
    doc["records"] = [r for r in doc["records"] if r["benchmark"] in SEEDS]
    return cell, doc


def _expected(cell: str, rec: dict[str, Any]) -> tuple[str, str | None]:
    for match, reason in CELLS[cell][0]:
        if match(rec):
            return "n/a", reason
    return "ok", None


@pytest.mark.tf
def test_cell_runs_every_benchmark_ok_or_na_as_expected(cell_results):
    from suite.schema import validate

    cell, doc = cell_results
    assert doc["status"] == "ok", doc.get("error")
    assert not validate(doc)
    records = doc["records"]
    twins = {v.id for v in _mine("quick") if v.api == "backend"}   # another framework's: set aside, not records
    assert {r["id"] for r in records} == {v.id for v in _mine("quick")} - twins
    aside = {e["id"]: g["reason"] for g in doc["config"]["outside"] for e in g["variants"]
             if e["id"].split("[")[0] in SEEDS}
    assert set(aside) == twins and all(BACKEND_ONLY[1] in why for why in aside.values())
    wrong = []
    for rec in records:
        status, reason = _expected(cell, rec)
        if rec["status"] != status or (reason and reason not in (rec["reason"] or "")):
            wrong.append(f"{rec['id']}: {rec['status']} ({rec['reason']}), expected {status} ({reason})")
    assert not wrong, "\n".join(wrong[:20])
    for rec in records:
        if rec["status"] == "n/a":
            assert rec["reason"] and len(rec["reason"]) > 20
        else:
            assert rec["stats"]["median"] > 0 and rec["samples"]


@pytest.mark.tf
def test_cell_retrace_counts_are_exact(cell_results):
    cell, doc = cell_results
    tracing = {r["params"]["arg"]: r for r in doc["records"]
               if r["benchmark"] == "graphs.tracing" and r["params"]["api"] == "tf"}
    assert set(tracing) == set(EXPECTED_TRACES) | {"python_distinct"}
    for arg, rec in tracing.items():
        extra = rec["extra"]
        want = extra["calls"] if arg == "python_distinct" else EXPECTED_TRACES[arg]
        assert extra["traces"] == want == extra["expected_traces"], (arg, extra)
        assert extra["calls"] >= 5          # first call, warm-up and at least three repeats
        if "tf_tracing_count" in extra:     # TF 2.3+ counts its own traces: they agree
            assert extra["tf_tracing_count"] == extra["traces"], (arg, extra)
    # every other tf.function here traced exactly once over all its calls
    for rec in doc["records"]:
        if rec["status"] == "ok" and rec["benchmark"] != "graphs.tracing" and "tf_tracing_count" in rec["extra"]:
            assert rec["extra"]["tf_tracing_count"] == 1, rec["id"]


@pytest.mark.tf
def test_cell_records_carry_their_facts(cell_results):
    cell, doc = cell_results
    keyword = CELLS[cell][1]
    for rec in doc["records"]:
        if rec["status"] != "ok":
            continue
        params, info, extra = rec["params"], rec["info"], rec["extra"]
        if rec["benchmark"] == "graphs.xla":
            assert info["jit_keyword"] == (keyword if params["jit_compile"] != "none" else None), rec["id"]
        if rec["benchmark"].startswith("tensor_ops."):
            assert extra["gflops_per_s"] > 0
        if rec["benchmark"] == "input_pipelines.fit":
            assert rec["iterations"]["inner"] == params["batches"]
        if rec["benchmark"].startswith("inference.") and params["stage"] == "train_built":
            assert info["train_function"] == "train_on_batch"


# today's questions (the second claim family) on the same real cells
TODAY = ("compiled.fit", "native.cnn", "generate.loop", "compile.cache", "drift.fit")


@pytest.mark.tf
@pytest.mark.parametrize("cell", REQUIRED)
def test_todays_benchmarks_run_or_say_why_with_their_figures(cell, venv_cell):
    """Today's benchmarks on a real TF cell: each variant ok or n/a with a reason; the
    figures the suite records beside the time (compile seconds, per-step drift, memory)
    carry their units; on the Keras 3 cell the questions' keras sides are all measured."""
    records = [r for r in venv_cell(CELL_NAMES[cell])["results"]["records"] if r["benchmark"] in TODAY]
    assert {r["benchmark"] for r in records} == set(TODAY)
    for rec in records:
        assert rec["status"] in ("ok", "n/a"), (rec["id"], rec["status"], rec["reason"])
        if rec["status"] == "n/a":
            assert rec["reason"] and len(rec["reason"]) > 20, rec["id"]
            continue
        assert rec["stats"]["median"] > 0
        figures = rec.get("figures") or {}
        if rec["benchmark"] == "compile.cache":
            assert figures["compile_s"]["unit"] == "s" and all(v > 0 for v in figures["compile_s"]["values"])
        if rec["benchmark"] == "drift.fit" and rec["params"]["phase"] == "late":
            assert figures["drift_pct_per_100_steps"]["unit"] == "%/100 steps"
            assert figures["rss_growth_mib"]["unit"] == "MiB"
    if cell == "TF221":   # Keras 3 on TensorFlow: every side of today's questions but the keras twin is measured
        mine = [r for r in records if r["params"].get("api") != "keras"]
        assert mine and all(r["status"] == "ok" for r in mine), [r["id"] for r in mine if r["status"] != "ok"]
        assert all(SAME_PACKAGE[1] in r["reason"] for r in records if r["status"] == "n/a")
