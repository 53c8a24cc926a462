"""Keras 3 backends: the ``backend`` key, its impossible pairs, what a jax/torch cell installs, the suite's n/a."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from suite.backend import BackendCompat, cell_backend
from suite.definitions import NotApplicable, Variant
from suite.document import GPU_MISSING_BACKEND
from suite.run import unavailable
from tfmatrix.matrix import Cell, Matrix
from tfmatrix.matrix.releases import load_table
from tfmatrix.provision.render import render_cell

Snippet = Callable[..., Matrix]
ErrorOf = Callable[..., str]
M = "matrix.toml"


def one(load_snippet: Snippet, body: str) -> Cell:
    cells = load_snippet(body).cells
    assert len(cells) == 1
    return cells[0]


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(("body", "message"), [
    ('[[cell]]\nbackend = "mxnet"\n',
     f"{M}: cell[0]: key 'backend': 'mxnet' is not a Keras 3 backend; use one of: tensorflow, jax, torch"),
    ('[[cell]]\ntf = "2.9"\nbackend = "tensorflow"\n',
     f"{M}: cell[0]: key 'backend': backends are a Keras 3 feature; this cell runs tf.keras on TF 2.9; "
     'remove backend, or use keras = "keras3" with TF >= 2.16'),
    ('[[cell]]\ntf = "2.16"\nkeras = "tf_keras"\nbackend = "tensorflow"\n',
     f"{M}: cell[0]: key 'backend': backends are a Keras 3 feature; this cell runs tf_keras on TF 2.16; "
     'remove backend, or use keras = "keras3" with TF >= 2.16'),
    ('[[cell]]\nkeras = "2.3.1"\nbackend = "jax"\n',
     f"{M}: cell[0]: key 'backend': backend jax needs Keras 3, not keras = '2.3.1'; "
     'use keras = "keras3" or a 3.x version like "3.15.1", or remove backend'),
    ('[[cell]]\ntf = "2.21"\nbackend = "torch"\n',
     f"{M}: cell[0]: key 'tf': a torch cell installs no TensorFlow (Keras 3 runs on torch); "
     'remove tf, or set backend = "tensorflow"'),
    ('[[cell]]\nkeras = "3.12.0"\nbackend = "torch"\npython = "3.9"\n',
     f"{M}: cell[0]: key 'python': Keras 3.12.0 needs Python >= 3.10, not 3.9; use python = \"3.10\" or newer"),
    ('[[cell]]\nkeras = "3.15.1"\nbackend = "torch"\npython = "3.10"\n',
     f"{M}: cell[0]: key 'python': Keras 3.15.1 needs Python >= 3.11, not 3.10; use python = \"3.11\" or newer"),
    ('[[cell]]\nkeras = "3.10.0"\nbackend = "jax"\npython = "3.10"\n',
     f"{M}: cell[0]: key 'python': jax 0.10.2 needs Python >= 3.11, not 3.10; use python = \"3.11\" or newer"),
    ('[[cell]]\nkeras = "3.99.0"\nbackend = "jax"\n',
     f"{M}: cell[0]: key 'keras': Keras 3.99.0 is not in the compatibility table (known: 3.0-3.10, 3.11-3.12, "
     "3.13-3.15); pick a known release or add a [[keras3.release]] row to tfmatrix/data/releases.toml"),
    ('[[cell]]\nbackend = "jax"\ntarget = "gpu"\ncuda = "12.2"\n',
     f"{M}: cell[0]: key 'cuda': a jax cell builds on the slim Python image and takes CUDA/cuDNN from the jax "
     "wheels the table pins; remove cuda"),
    ('[[cell]]\nbackend = "jax"\nenv = { KERAS_BACKEND = "torch" }\n',
     f"{M}: cell[0]: key 'env': KERAS_BACKEND is set by tfmatrix itself for a cell with a backend; "
     "remove KERAS_BACKEND from env"),
    ('[[cell]]\nbackend = 3\n',
     f"{M}: cell[0]: key 'backend': expected a string, got an integer (3); quote it: backend = \"jax\" "
     "(unquoted, TOML reads a version as a number: 3.10 is 3.1)"),
])  # fmt: skip
def test_impossible_backend_pairs_are_one_line_errors(error_of: ErrorOf, body: str, message: str) -> None:
    assert error_of(body) == message


def test_a_jax_cell_installs_keras_and_jax_and_no_tensorflow(load_snippet: Snippet) -> None:
    cell = one(load_snippet, '[[cell]]\nbackend = "jax"\n')
    table = load_table()
    assert table.keras3 is not None
    assert cell.name == "keras3-jax-cpu" and cell.backend == "jax" and not cell.has_tf and cell.tf == ""
    assert cell.keras.version == table.keras3.newest and cell.python == table.keras3.default_python
    assert cell.requirements == (f"keras=={table.keras3.newest}", f"jax[cpu]=={table.keras3.pinned['jax'].version}")
    assert not any(r.startswith("tensorflow") for r in cell.requirements)
    assert dict(cell.env) == {"KERAS_BACKEND": "jax", "KERAS_HOME": "/home/bench/.keras-cells/keras3-jax-cpu"}
    assert cell.base.upstream == "python:3.11-slim-bookworm" and cell.cuda is None
    files = render_cell(cell).files
    assert 'KERAS_BACKEND="jax"' in files["Dockerfile"] and "tensorflow" not in files["requirements.txt"]
    assert cell.to_dict()["backend"] == "jax"


def test_backend_is_a_product_axis_and_names_follow_it(load_snippet: Snippet) -> None:
    m = load_snippet('[[product]]\nbackend = ["jax", "torch"]\ntarget = ["cpu", "gpu"]\n'
                     '[[cell]]\ntf = "2.21"\nkeras = "3.15.1"\nbackend = "tensorflow"\nname = "keras3-{backend}-cpu"\n')
    names = [c.name for c in m.cells]
    assert names == ["keras3-tensorflow-cpu", "keras3-jax-cpu", "keras3-jax-gpu", "keras3-torch-cpu",
                     "keras3-torch-gpu"]
    assert m.settings.baseline == "keras3-tensorflow-cpu"      # the only cell with a TF release
    tf_cell = m.cells[0]
    assert tf_cell.has_tf and tf_cell.requirements[:2] == ("tensorflow-cpu==2.21.0", "keras==3.15.1")
    assert dict(tf_cell.env)["KERAS_BACKEND"] == "tensorflow"
    torch_gpu = m.cell("keras3-torch-gpu")
    assert (torch_gpu.cuda, torch_gpu.cudnn) == ("13.0", "9.24") and torch_gpu.requirements[-1] == "torch==2.14.1"


def test_cells_without_a_backend_key_are_unchanged(load_snippet: Snippet) -> None:
    cell = one(load_snippet, '[[cell]]\ntf = "2.21"\n')
    assert cell.backend == "tensorflow" and "backend" not in cell.to_dict()
    assert "KERAS_BACKEND" not in dict(cell.env)


def test_the_table_knows_the_keras_python_floors() -> None:
    k3 = load_table().keras3
    assert k3 is not None
    floors = {v: k3.line(v).python_min for v in ("3.0.0", "3.10.0", "3.11.3", "3.12.0", "3.13.0", "3.15.1")}  # type: ignore[union-attr]
    assert floors == {"3.0.0": "3.9", "3.10.0": "3.9", "3.11.3": "3.10", "3.12.0": "3.10", "3.13.0": "3.11",
                      "3.15.1": "3.11"}


# --------------------------------------------------------------------------- the suite in a jax/torch cell


def _variant(api: str, mode: str = "eager") -> Variant:
    return Variant("x", "000", (("api", api), ("mode", mode)), mode=mode, api=api)


def test_tf_only_and_graph_variants_are_na_from_the_fingerprint() -> None:
    facts = {"tensorflow": None, "backend": {"name": "jax", "version": "0.10.2", "devices": ["cpu:0 cpu"]},
             "keras": {"tf.keras": {"api": "tf.keras", "unavailable": "tf.keras needs TensorFlow"},
                       "keras": {"api": "keras", "flavour": "keras 3 (jax)", "version": "3.15.1"}}}
    assert "TensorFlow-only benchmark" in str(unavailable(facts, _variant("tf")))
    assert unavailable(facts, _variant("numpy")) is None           # np.dot, seed 002's side b, runs anywhere
    assert unavailable(facts, _variant("backend")) is None
    assert unavailable(facts, _variant("tf.keras")) == "tf.keras needs TensorFlow"
    assert "graph mode" in str(unavailable(facts, _variant("keras", "graph")))
    assert "on JAX" in str(unavailable(facts, _variant("keras", "graph")))
    assert unavailable(facts, _variant("keras")) is None
    tf_facts = {"tensorflow": {"version": "2.21.0"}, "keras": {}}
    assert "this cell runs TensorFlow" in str(unavailable(tf_facts, _variant("backend")))


def test_backend_compat_answers_tf_questions_with_not_applicable(monkeypatch: pytest.MonkeyPatch) -> None:
    compat = BackendCompat("torch")
    compat.enter_mode("eager")
    with pytest.raises(RuntimeError):
        compat.enter_mode("graph")
    for call in (lambda: compat.keras("tf.keras"), lambda: compat.tf_function(len),
                 lambda: compat.require_tf("tf.data input"), compat.autotune, lambda: compat.session(None)):
        with pytest.raises(NotApplicable, match="installs no TensorFlow"):
            call()
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert "no C++ compiler" in str(compat.compile_unavailable())
    assert BackendCompat("jax").compile_unavailable() is None
    # a TensorFlow cell's Compat answers too (callers ask every compat, no getattr): nothing stops XLA there
    from types import SimpleNamespace

    from suite.benchmarks.compiled import jit_unavailable
    from suite.compat import Compat

    tf_compat = Compat(SimpleNamespace(__version__="2.21.0"))
    assert tf_compat.compile_unavailable() is None
    jit_unavailable(tf_compat, True)
    assert cell_backend({}) == "tensorflow" and cell_backend({"KERAS_BACKEND": "JAX"}) == "jax"


# --------------------------------------------------------------------------- the report's backend finding


def _backend_cell(tmp: Path, name: str, backend: str, keras: str, center: float, seed: int) -> None:
    from report_docs import cell_doc, noisy, record, results_doc, training_params, write

    api = "tf.keras" if backend == "tensorflow" else "keras"
    recs = [record("training.question", training_params(api=api), noisy(center, seed=seed)),
            record("training.question", training_params(api=api, loop="fit"), noisy(center * 2, seed=seed + 1))]
    results = results_doc(recs, tf="2.21.0", cell=name)
    if backend != "tensorflow":
        results["environment"]["tf"].update(tensorflow=None, backend={"name": backend, "version": "1.0",
                                                                        "devices": ["cpu"]})
    doc = cell_doc(name, "2.21" if backend == "tensorflow" else "", results=results, python="3.11")
    doc["cell"].update(keras={"flavour": "keras3", "version": keras}, backend=backend)
    write(tmp / "cells", doc)


def test_the_backend_question_pairs_same_keras_cells_across_backends(tmp_path: Path) -> None:
    from tfmatrix.analysis.cells import load_dir
    from tfmatrix.analysis.claims.answers import A_FASTER, B_FASTER, compute_claim
    from tfmatrix.analysis.claims.files import questions
    from tfmatrix.analysis.frame import build_frame

    _backend_cell(tmp_path, "keras3-tensorflow-cpu", "tensorflow", "3.15.1", 4e-3, 1)
    _backend_cell(tmp_path, "keras3-jax-cpu", "jax", "3.15.1", 2e-3, 3)
    _backend_cell(tmp_path, "keras3-torch-cpu", "torch", "3.15.1", 8e-3, 5)
    _backend_cell(tmp_path, "tf2.21-keras3-cpu", "tensorflow", "3.12.0", 4e-3, 7)   # another Keras: not paired
    cells = load_dir(tmp_path / "cells").cells
    assert {c.name: c.backend for c in cells}["keras3-jax-cpu"] == "jax"
    assert "no TF, Keras 3 on torch" in {c.name: c.label for c in cells}["keras3-torch-cpu"]
    question = next(q for q in questions() if q.key == "keras3_backends")
    result = compute_claim(question, build_frame(cells), cells)
    verdicts = {(ln.comparison.cell_a.name, ln.comparison.cell_b.name,
                 ln.comparison.config.split("loop=")[1].split(",")[0]): ln.verdict
                for c in result.cells for ln in c.lines}
    ratios = {(ln.comparison.cell_a.name, ln.comparison.cell_b.name,
               ln.comparison.config.split("loop=")[1].split(",")[0]): ln.comparison.ci
              for c in result.cells for ln in c.lines}
    assert set(ratios) == {(a, b, loop) for a, b in (("keras3-jax-cpu", "keras3-tensorflow-cpu"),
                                                     ("keras3-torch-cpu", "keras3-tensorflow-cpu"),
                                                     ("keras3-torch-cpu", "keras3-jax-cpu"))
                           for loop in ("train_on_batch", "fit")}
    jax_tf = ratios[("keras3-jax-cpu", "keras3-tensorflow-cpu", "fit")]
    assert jax_tf.ratio == pytest.approx(0.5, rel=0.05) and jax_tf.high < 1
    assert verdicts[("keras3-jax-cpu", "keras3-tensorflow-cpu", "fit")] == A_FASTER
    torch_jax = ratios[("keras3-torch-cpu", "keras3-jax-cpu", "train_on_batch")]
    assert torch_jax.ratio == pytest.approx(4.0, rel=0.05) and torch_jax.low > 1
    assert verdicts[("keras3-torch-cpu", "keras3-jax-cpu", "train_on_batch")] == B_FASTER
    assert any("Keras 3.12.0: only tensorflow ran it" in n for n in result.notes)


def test_a_gpu_cell_whose_backend_sees_no_gpu_is_told_so_in_the_backend_s_words() -> None:
    text = GPU_MISSING_BACKEND % ("jax", "jax")
    assert text.startswith("GPU requested but jax sees no GPU") and "jax's CUDA wheels" in text
