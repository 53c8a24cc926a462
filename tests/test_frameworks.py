"""Seeds 002 and 004 on Keras 3 cells without TensorFlow (JAX, PyTorch): ``suite/frameworks.py`` and its claims.

Without jax or torch installed: which variants a JAX or PyTorch cell plans
and which the fingerprint settles n/a (with the cell's framework named), the
seed's functions run verbatim through ``Ops`` on numpy, and the claims
answered per framework from synthetic cells. With jax installed (``jax[cpu]``
is small), every ``api=backend`` variant also runs for real at quick sizes
and its trace counts are checked against jax.jit's rule.
"""
from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from report_docs import cell_doc, noisy, record, results_doc, write

from suite.backend import BackendCompat
from suite.benchmarks.graphs import a_regular_function, power
from suite.benchmarks.graphs_tracing import jax_expected_traces, tracing_arguments
from suite.benchmarks.tensor_ops import einsum, loop_stack
from suite.definitions import BACKEND_API, PRESETS, NotApplicable, Variant
from suite.document import cell_framework
from suite.frameworks import DATA_ON_DEVICE, Ops, backend_step, materialize, tf_cell_reason
from suite.registry import all_variants, benchmark_by_name, load_benchmarks
from suite.run import set_aside, settle, unavailable
from suite.schema import OUTSIDE_KEY, validate
from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claims.answers import HOLDS, NOT_MEASURED, compute_claims
from tfmatrix.analysis.claims.files import builtin
from tfmatrix.analysis.claims.specs import in_benchmarks, matches
from tfmatrix.analysis.frame import build_frame, results_rows
from tfmatrix.analysis.statistics.words import UNCLEAR

SEED_CLAIMS = builtin()      # the seeds' claims (tfmatrix/data/claims/seeds.toml)

SEED_002_004 = ("tensor_ops.matmul", "tensor_ops.batched_matmul", "graphs.power", "graphs.matmul_bias",
                "graphs.tracing")
NAMES = {"jax": "JAX", "torch": "PyTorch"}
BY_NAME = benchmark_by_name(load_benchmarks())


def _keras_facts(backend: str) -> dict[str, Any]:
    """``facts["keras"]`` as ``suite.backend.facts`` writes it: tf.keras's NotApplicable reason, Keras 3."""
    try:
        BackendCompat(backend).keras("tf.keras", check_mode=False)
    except NotApplicable as e:
        tf_keras = {"api": "tf.keras", "unavailable": str(e)}
    return {"tf.keras": tf_keras, "keras": {"api": "keras", "flavour": f"keras 3 ({backend})", "version": "3.15.1"}}


def cpu_facts(backend: str) -> dict[str, Any]:
    """A CPU JAX/PyTorch cell's fingerprint, in the shape ``suite.backend.facts`` gives it."""
    return {"tensorflow": None, "backend": {"name": backend, "version": "1.0", "devices": ["cpu"],
                                            "requested": backend},
            "tensorflow_imported": False, "keras": _keras_facts(backend), "gpus_visible": [], "onednn": None}


def _seed_variants(preset: str = "seed") -> list[Variant]:
    return [v for v in all_variants(PRESETS[preset]) if v.benchmark in SEED_002_004]


# -- what a JAX or PyTorch cell plans (the fingerprint alone) ------------------------------------


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_cpu_jax_or_torch_cell_runs_every_seed_002_004_variant_written_for_it(backend: str) -> None:
    variants = _seed_variants()
    settled = settle(cpu_facts(backend), variants)
    mine = [v for v in variants if v.api in (BACKEND_API, "numpy")]
    assert len(mine) == 14 and not [v.id for v in mine if v.id in settled]
    # what stays n/a is TensorFlow's own (api=tf, graph mode): 17 of 31, each saying so in the cell's words
    assert {v.id for v in variants if v.id in settled} == {v.id for v in variants if v.api == "tf"}
    assert len(settled) == 17 and len(variants) == 31
    for rec in settled.values():
        assert f"Keras 3 on {NAMES[backend]}" in rec["reason"], rec
        assert "No module named" not in rec["reason"]


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_the_seed_preset_on_a_jax_or_torch_cell_is_its_framework_s_catalogue(backend: str) -> None:
    """Issue 42: TensorFlow's own variants (tf.keras, api=tf, graph mode) are set aside by reason, not n/a results;
    what the cell runs is its framework's (eager Keras 3, api=backend, numpy), none n/a by the fingerprint."""
    variants = all_variants(PRESETS["seed"])
    own, aside = set_aside(cpu_facts(backend), variants, BY_NAME)
    mine = [v for v in variants if v.api in ("keras", BACKEND_API, "numpy") and v.mode == "eager"]
    tf_parts = [v for v in mine if BY_NAME[v.benchmark].tensorflow_part(v)]    # tf.data input, tf.function(model)
    assert len(mine) == 54 and len(tf_parts) == 5 and len(variants) == 165     # 39 of 133 before today's family
    assert [v.id for v in own] == [v.id for v in mine if v not in tf_parts]
    assert settle(cpu_facts(backend), own) == {}            # the fingerprint settles none of them n/a
    entries = {e["id"]: g["reason"] for g in aside for e in g["variants"]}
    assert len(entries) == 116 and set(entries) == {v.id for v in variants} - {v.id for v in own}
    assert {entries[v.id] for v in tf_parts} == {f"{part} needs TensorFlow; this cell runs Keras 3 on "
                                                 f"{NAMES[backend]} and installs no TensorFlow"
                                                 for part in ("tf.data input", "tf.function(model)")}
    assert len(aside) == len({g["reason"] for g in aside})  # one group per reason
    for why in entries.values():                            # every reason names the framework the cell has
        assert f"Keras 3 on {NAMES[backend]}" in why and "No module named" not in why, why
    # and each entry is the catalogue row it would have been, in the schema's shape
    assert _outside_problems({"config": {OUTSIDE_KEY: aside}}) == []
    assert _outside_problems({"config": {OUTSIDE_KEY: [{"reason": "x", "variants": [{"id": "a"}]}]}})


def _outside_problems(doc: dict[str, Any]) -> list[str]:
    return [p for p in validate(doc) if OUTSIDE_KEY in p]


def test_a_tensorflow_cell_sets_the_backend_variants_aside_and_keeps_its_own() -> None:
    facts = {"tensorflow": {"version": "2.21.0"}, "keras": {}}
    variants = all_variants(PRESETS["seed"])
    own, aside = set_aside(facts, variants, BY_NAME)
    assert {e["id"] for g in aside for e in g["variants"]} == {v.id for v in variants if v.api == BACKEND_API}
    assert [g["reason"] for g in aside] == [tf_cell_reason()]
    assert not [v for v in own if v.api == BACKEND_API]


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_every_seed_002_004_claim_and_seed_000_001_keras_claim_has_a_planned_setup_on_jax_and_torch(
        backend: str) -> None:
    """Seeds 002 and 004 in the framework's own ops; seed 000/001's questions about Keras itself (predict after
    compile, model(x) and predict_on_batch, fit against train_on_batch) and seed 003's compile question
    (jit_compile=True against False) in Keras 3's calls on that backend."""
    variants = all_variants(PRESETS["seed"])
    settled = settle(cpu_facts(backend), variants)
    cell = types.SimpleNamespace(backend=backend)
    answered = {c.key: c for c in SEED_CLAIMS if any(s.compare.backends == (backend,) for s in c.setups)}
    for claim in answered.values():
        setups = [s for s in claim.setups if s.applies(cell)]      # type: ignore[arg-type]
        assert len(setups) == 1 and setups[0].compare.backends == (backend,), claim.key
        assert NAMES[backend] in setups[0].standin
        cmp = setups[0].compare
        for spec in (cmp.a, cmp.b):
            found = [v for v in variants if in_benchmarks(v.benchmark, cmp.benchmarks) and matches(v.as_dict(), spec)]
            assert found and not [v.id for v in found if v.id in settled], (claim.key, dict(spec))
    assert {c.key for c in SEED_CLAIMS if c.seed in ("002", "004")} <= set(answered)
    keras = {k for k, c in answered.items() if any(s.compare.a.get("api") == "keras" for s in c.setups)}
    assert keras == {"predict_slower_after_compile", "call_and_predict_on_batch_fix", "fit_slower_than_train_on_batch",
                     "tf_function_speeds_up_forward"}


def test_the_fingerprint_s_import_error_names_the_framework_the_cell_imports() -> None:
    assert cell_framework({"KERAS_BACKEND": "torch"}) == "Keras 3 on PyTorch"
    assert cell_framework({"KERAS_BACKEND": "jax"}) == "Keras 3 on JAX"
    assert cell_framework({}) == cell_framework({"KERAS_BACKEND": "tensorflow"}) == "TensorFlow"
    reason = unavailable(cpu_facts("torch"), Variant("x", "004", (), mode="graph", api="keras"))
    assert reason and "PyTorch" in reason and "graph mode" in reason


# -- the seed's functions through Ops (numpy stands in for jax.numpy/torch) ---------------------


def numpy_ops(backend: str = "jax") -> Ops:
    return Ops(backend, np, "cpu", np.asarray, np.asarray, lambda t: t)


def test_the_seed_s_functions_run_verbatim_through_ops() -> None:
    ops, rng = numpy_ops(), np.random.RandomState(1)
    x = rng.randint(-1, 2, (10, 10)).astype("int32")
    want = np.eye(10, dtype="int32")
    for _ in range(100):
        want = x @ want
    assert (power(ops, x, 100) == want).all() and power(ops, x, 100).dtype == np.int32
    A, B = rng.uniform(size=(4, 3, 5)).astype("float32"), rng.uniform(size=(5, 2)).astype("float32")
    assert np.allclose(loop_stack(ops, A, B, 4), einsum(ops, A, B, 4)) and einsum(ops, A, B, 4).shape == (4, 3, 2)
    assert a_regular_function(ops, np.array([[1.0, 2.0]]), np.array([[2.0], [3.0]]), ops.constant(4.0)) == 12.0
    assert ops.constant(2).dtype == np.int32 and ops.name("matmul") == "jax.numpy.matmul"
    prepared = backend_step(ops, None, (A, B), lambda a, b: einsum(ops, a, b, 4))
    assert prepared.step().shape == (4, 3, 2) and prepared.after is None
    assert prepared.info == {"backend": "jax", "framework": "JAX", "device": "cpu", "call_as": "op-by-op jax.numpy",
                             "data": DATA_ON_DEVICE}
    assert [m.tolist() for m in materialize(ops, (np.ones(1), np.zeros(1)))] == [[1.0], [0.0]]


def test_torch_spells_stack_with_dim() -> None:
    seen = {}
    fake = types.SimpleNamespace(int32="int32", stack=lambda values, dim: seen.setdefault("dim", dim))
    Ops("torch", fake, "cpu", np.asarray, np.asarray, lambda t: t).stack([1, 2], axis=0)
    assert seen == {"dim": 0}


def test_the_tracing_arguments_and_jax_s_trace_rule() -> None:
    assert tracing_arguments("tensor", lambda i: ("t", i), lambda n: n) == [("t", i) for i in range(8)]
    assert tracing_arguments("python_cycle", str, str) == [2, 3, 4]
    assert tracing_arguments("tensor_shapes", str, lambda n: n) == [1, 2, 3]
    assert tracing_arguments("python_distinct", str, str) == []
    assert [jax_expected_traces(a, "compiled", 9) for a in ("tensor", "python_cycle", "tensor_shapes",
                                                             "python_distinct")] == [1, 1, 3, 1]
    assert jax_expected_traces("python_distinct", "compiled_static", 9) == 9


def test_a_tensorflow_worker_says_the_backend_variants_are_not_its_own() -> None:
    from suite.benchmarks.tensor_ops import Matmul

    v = next(v for v in _seed_variants("quick") if v.api == BACKEND_API and v.benchmark == "tensor_ops.matmul")
    env = types.SimpleNamespace(compat=types.SimpleNamespace(), rng=np.random.RandomState, np=np, tf=None)
    with pytest.raises(NotApplicable, match="this cell runs TensorFlow"):
        Matmul().prepare(v, env)


# -- for real on JAX (skipped without jax) ---------------------------------------------------


def test_every_backend_variant_runs_on_jax_at_quick_sizes() -> None:
    pytest.importorskip("jax")
    from suite.registry import benchmark_by_name, load_benchmarks
    from suite.worker import Env

    benchmarks = load_benchmarks()
    by_name = benchmark_by_name(benchmarks)
    env = Env(None, np, BackendCompat("jax"), "eager", PRESETS["quick"])
    ran = 0
    for v in all_variants(PRESETS["quick"], benchmarks):
        if v.api != BACKEND_API:
            continue
        prepared = by_name[v.benchmark].prepare(v, env)
        out = [prepared.step() for _ in range(5)][-1]
        assert isinstance(out, np.ndarray), v.id
        assert prepared.info["framework"] == "JAX" and prepared.info["call_as"], v.id
        if v.benchmark == "tensor_ops.matmul":
            assert out.dtype == np.float64 and out.shape == (256, 256)
        extra = prepared.after() if prepared.after else {}
        if v.benchmark == "graphs.tracing":
            assert extra["calls"] == 5 and extra["traces"] == extra["expected_traces"], (v.id, extra)
        elif v.param("call") == "compiled":
            assert extra == {"traces": 1}, (v.id, extra)
        ran += 1
    assert ran == 13


# -- the claims, answered per framework --------------------------------------------------------


def _cell(cells: Path, name: str, backend: str, recs: list[dict]) -> None:
    results = results_doc(recs, tf="2.21.0", cell=name)
    if backend != "tensorflow":
        results["environment"]["tf"].update(tensorflow=None, backend={"name": backend, "version": "1.0",
                                                                        "devices": ["cpu"]})
    doc = cell_doc(name, "2.21" if backend == "tensorflow" else "", results=results, python="3.11")
    doc["cell"].update(keras={"flavour": "keras3", "version": "3.15.1"}, backend=backend)
    write(cells, doc)


def _matmul(impl: str, api: str, t: float, seed: int, status: str = "ok", reason: str | None = None) -> dict:
    return record("tensor_ops.matmul", {"impl": impl, "n": 256, "dtype": "float64", "api": api, "mode": "eager"},
                  noisy(t, seed=seed) if status == "ok" else None, status=status, reason=reason, seed="002")


def _power(call: str, api: str, t: float, seed: int, status: str = "ok", reason: str | None = None) -> dict:
    return record("graphs.power", {"call": call, "shape": [10, 10], "exponent": 100, "dtype": "int32", "api": api,
                                   "mode": "eager"},
                  noisy(t, seed=seed) if status == "ok" else None, status=status, reason=reason, seed="004")


def test_claims_on_jax_and_torch_cells_are_that_framework_s_answer(tmp_path: Path) -> None:
    cells = tmp_path / "cells"
    na = "TensorFlow-only benchmark; this cell runs Keras 3 on JAX and installs no TensorFlow"
    _cell(cells, "keras3-jax-cpu", "jax", [
        _matmul("numpy.dot", "numpy", 0.01, 1), _matmul("matmul", "backend", 0.005, 2),
        _matmul("tf.matmul", "tf", 0, 0, status="n/a", reason=na),
        _power("compiled", "backend", 0.001, 3), _power("eager", "backend", 0.001, 4)])
    torch_na = "torch.matmul has no int32 kernel on CUDA ('addmm_cuda' not implemented for 'Int')"
    _cell(cells, "keras3-torch-cpu", "torch", [
        _matmul("numpy.dot", "numpy", 0.01, 5), _matmul("matmul", "backend", 0.02, 6),
        _power("compiled", "backend", 0, 0, status="n/a", reason=torch_na),
        _power("eager", "backend", 0, 0, status="n/a", reason=torch_na)])
    _cell(cells, "keras3-tensorflow-cpu", "tensorflow", [
        _matmul("numpy.dot", "numpy", 0.01, 7), _matmul("tf.matmul", "tf", 0.005, 8),
        _matmul("matmul", "backend", 0, 0, status="n/a", reason="runs on a Keras 3 cell's JAX or PyTorch backend")])
    loaded = load_dir(cells).cells
    claims = {r.claim.key: r for r in compute_claims(build_frame(loaded), loaded)}
    matmul = {c.name: c for c in claims["tf_matmul_faster_than_np_dot"].cells}
    jax_line = matmul["keras3-jax-cpu"].lines[0]
    assert jax_line.verdict == HOLDS and jax_line.comparison.a_id.startswith("tensor_ops.matmul[impl=matmul")
    assert jax_line.standin.startswith("answered with jax.numpy.matmul on this JAX cell (no TensorFlow)")
    assert [ln.standin for ln in matmul["keras3-tensorflow-cpu"].lines] == [""]          # TF's own, unchanged
    assert "torch.matmul on this PyTorch cell" in matmul["keras3-torch-cpu"].lines[0].standin
    power = {c.name: c for c in claims["tf_function_faster_power"].cells}
    assert power["keras3-jax-cpu"].lines[0].verdict == UNCLEAR
    assert "jax.jit vs op-by-op jax.numpy" in power["keras3-jax-cpu"].lines[0].standin
    assert not power["keras3-torch-cpu"].lines and "no int32 kernel on CUDA" in power["keras3-torch-cpu"].reason
    assert power["keras3-tensorflow-cpu"].empty_verdict == NOT_MEASURED          # no graphs.power records there


def test_the_fingerprint_s_error_and_warning_name_the_cell_s_framework(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    import suite.document as document

    preset = PRESETS["quick"]
    failed = types.SimpleNamespace(events=[], log_tail="ModuleNotFoundError: No module named 'torch'", import_s=0.0)
    monkeypatch.setattr(document, "run_worker", lambda *a, **k: failed)
    monkeypatch.setenv("KERAS_BACKEND", "torch")
    doc = document.header(preset, [], {"target": "cpu"}, [])
    assert document.take_fingerprint(doc, io.StringIO(), preset) is None
    assert doc["error"] == "could not import Keras 3 on PyTorch in this cell: ModuleNotFoundError: No module named " \
                           "'torch'"
    facts = dict(cpu_facts("jax"), gpus_visible=["gpu:0 NVIDIA H100"])
    seen = types.SimpleNamespace(events=[{"event": "fingerprint", "facts": facts}], log_tail="", import_s=1.0)
    monkeypatch.setattr(document, "run_worker", lambda *a, **k: seen)
    doc = document.header(preset, [], {"target": "cpu"}, [])
    assert document.take_fingerprint(doc, io.StringIO(), preset) is not None
    assert doc["warnings"] == ["CPU cell, but JAX sees GPUs gpu:0 NVIDIA H100: results may have used them"]


def _fake_torch(cuda: bool, seen: dict) -> Any:
    """Just enough of torch for ``frameworks``: devices, ``from_numpy``, and ``torch.compile`` with a backend."""
    class Tensor:
        def __init__(self, a: Any) -> None:
            self.a = np.asarray(a)

        def to(self, device: str) -> Tensor:
            seen.setdefault("devices", set()).add(device)
            return self

        def detach(self) -> Tensor:
            return self

        def cpu(self) -> Tensor:
            return self

        def numpy(self) -> Any:
            return self.a

    def compile_(fn: Any, backend: Any, dynamic: Any) -> Any:
        seen["dynamic"] = dynamic

        def run(*args: Any) -> Any:
            backend("graph", args)          # what Dynamo does: hand each new graph to the backend
            return fn(*args)
        return run

    dynamo = types.SimpleNamespace(lookup_backend=lambda name: lambda gm, inputs: seen.setdefault("inner", name))
    return types.SimpleNamespace(
        int32="int32", cuda=types.SimpleNamespace(is_available=lambda: cuda, synchronize=lambda: None),
        from_numpy=Tensor, matmul=lambda a, b: Tensor(a.a @ b.a), compile=compile_, _dynamo=dynamo)


@pytest.mark.parametrize("cuda", [False, True])
def test_the_torch_path_places_counts_and_compiles_as_asked(monkeypatch: pytest.MonkeyPatch, cuda: bool) -> None:
    from suite import frameworks

    seen: dict = {}
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(cuda, seen))
    ops = frameworks.ops_for("torch")
    assert ops.device == ("cuda" if cuda else "cpu")
    assert ("no int32 kernel on CUDA" in str(frameworks.int_matmul_unavailable(ops))) == cuda
    traces = []
    compiled = frameworks.compiler(ops, "compiled_static", lambda: traces.append(1))(ops.matmul)
    x = ops.put(np.eye(2, dtype="float32"))
    assert (ops.to_host(compiled(x, x)) == np.eye(2)).all()
    assert seen["dynamic"] is False and seen["inner"] == "inductor" and traces == [1]
    frameworks.compiler(ops, "compiled", lambda: None)(ops.matmul)
    assert seen["dynamic"] is None and seen["devices"] == {ops.device}
    no_cc = types.SimpleNamespace(compile_unavailable=lambda: "no C++ compiler")
    assert frameworks.compile_reason(no_cc, ops) == "no C++ compiler"
    with pytest.raises(NotApplicable, match="no C\\+\\+ compiler"):
        backend_step(ops, no_cc, (np.eye(2),), ops.matmul, "compiled")


# -- another framework's variants set aside: the same answers from fewer results -------------------


def _set_aside_in_file(path: Path) -> int:
    """Rewrite a real cell file as this suite now writes it: its other framework's n/a records into
    ``config.outside`` (by ``suite.frameworks.outside`` on the cell's own fingerprint). Returns how many moved."""
    import json

    from suite.run import outside

    doc = json.loads(path.read_text())
    results = doc["results"]
    facts = results["environment"]["tf"]
    keep, groups = [], {}
    for r in results["records"]:
        v = Variant(r["benchmark"], r["seed"], tuple(r["params"].items()), r["mode"], r["api"])
        why = outside(facts, v, BY_NAME.get(v.benchmark)) if r["status"] == "n/a" else None
        if why is None:
            keep.append(r)
        else:
            groups.setdefault(why, []).append({"id": r["id"], "benchmark": r["benchmark"], "seed": r["seed"],
                                               "params": r["params"], "mode": r["mode"], "api": r["api"]})
    results["records"] = keep
    results["config"][OUTSIDE_KEY] = [{"reason": k, "variants": e} for k, e in groups.items()]
    assert validate(results) == []
    path.write_text(json.dumps(doc))
    return sum(len(e) for e in groups.values())


@pytest.mark.slow
def test_a_cell_s_other_framework_variants_set_aside_give_the_same_claims_and_say_so_in_the_tables(
        tmp_path: Path) -> None:
    """The golden default run (real cells, written when such variants were n/a records): set aside as the suite
    now writes them, every claim in every cell says the same (the reason a TF-only claim cannot exist on JAX
    included), the JAX and PyTorch cells keep at most a quarter of their results n/a, and the tables show "–"."""
    import tarfile

    from tfmatrix.report.tables import _value

    golden = Path(__file__).resolve().parent / "golden" / "default-matrix.tar.gz"
    before, after = tmp_path / "before", tmp_path / "after"
    for out in (before, after):
        with tarfile.open(golden) as tar:
            tar.extractall(out, filter="data")
    moved = {name: _set_aside_in_file(after / "cells" / f"{name}.json")
             for name in ("keras3-jax-cpu", "keras3-torch-cpu")}
    assert min(moved.values()) >= 20, moved

    def answers(root: Path) -> dict[tuple[str, str], tuple[str, str, tuple[str, ...]]]:
        """Each claim in each cell: why it has no line (the reason's first words), its verdict, its lines."""
        cells = load_dir(root / "cells").cells
        out = {}
        for result in compute_claims(build_frame(cells), cells):
            for cc in result.cells:
                lines = tuple(f"{ln.verdict} {ln.comparison.ci.ratio:.6f}" for ln in cc.lines)
                out[(result.claim.key, cc.name)] = (cc.reason.split(":")[0], cc.empty_verdict if not cc.lines else "",
                                                    lines)
        return out

    old, new = answers(before), answers(after)
    assert new == old
    cells = load_dir(after / "cells").cells
    jax = [cc.reason for r in compute_claims(build_frame(cells), cells) for cc in r.cells
           if cc.name == "keras3-jax-cpu" and not cc.lines and not cc.not_measured]
    assert jax and all("jax" in why.lower() for why in jax), jax    # a TF-only claim says why, naming the framework
    df = build_frame(load_dir(after / "cells").cells)
    assert len(df) == len(build_frame(load_dir(before / "cells").cells))       # every row still there for the claims
    assert len(results_rows(df)) == len(df) - sum(moved.values())             # but counted apart from the results
    for name in ("keras3-jax-cpu", "keras3-torch-cpu"):
        mine = df[(df["cell"] == name) & (df["outside"] != True)]  # noqa: E712
        assert (mine["status"] == "n/a").sum() <= len(mine) / 4, mine[mine["status"] == "n/a"]["reason"].tolist()
    row = df[(df["cell"] == "keras3-jax-cpu") & (df["outside"] == True)].iloc[0]  # noqa: E712
    value = _value(row)
    assert value.status == "outside" and value.text == "–" and "jax" in value.title.lower()


def _application(jit: str, t: float, seed: int, status: str = "ok", reason: str | None = None) -> dict:
    return record("compiled.application", {"model": "mobilenetv2", "input_shape": [1, 32, 32, 3],
                                           "call": "predict_on_batch", "jit_compile": jit, "api": "keras",
                                           "mode": "eager"},
                  noisy(t, seed=seed) if status == "ok" else None, status=status, reason=reason, seed="003")


def test_seed_003_on_jax_and_torch_is_jit_compile_against_eager(tmp_path: Path) -> None:
    """Issue 51: seed 003's compile question said "cannot exist here" on every Keras 3 backend cell, though
    compiled.application (jit_compile False/True) runs there; now it is that framework's answer."""
    cells = tmp_path / "cells"
    _cell(cells, "keras3-jax-cpu", "jax", [_application("false", 0.08, 1), _application("true", 0.01, 2)])
    no_cc = "torch.compile (inductor) needs a C++ compiler, and this cell has none"
    _cell(cells, "keras3-torch-cpu", "torch", [_application("false", 0.02, 3),
                                                _application("true", 0, 0, status="n/a", reason=no_cc)])
    loaded = load_dir(cells).cells
    claims = {r.claim.key: r for r in compute_claims(build_frame(loaded), loaded)}
    forward = {c.name: c for c in claims["tf_function_speeds_up_forward"].cells}
    (line,) = forward["keras3-jax-cpu"].lines
    assert line.verdict == HOLDS and "jit_compile=true" in line.comparison.a_id
    assert line.standin.startswith("answered with Keras 3's compile(jit_compile=True) (jax.jit) against False")
    assert not forward["keras3-torch-cpu"].lines and "C++ compiler" in forward["keras3-torch-cpu"].reason
    xla = {c.name: c for c in claims["xla_slower_on_cpu_faster_on_gpu"].cells}
    assert not any(c.lines for c in xla.values())        # no compiled path that is not XLA/torch.compile there
    assert set(build_frame(loaded)["tf"]) == {"-"}        # results.csv: no TensorFlow, not an unknown "?"
