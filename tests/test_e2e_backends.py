"""Keras 3 on JAX and PyTorch through Docker: real images without TensorFlow, real Keras 3 on each backend.

One run of tests/matrices/backends.toml (keras3-jax-cpu, keras3-torch-cpu; quick preset), with a
``--only``/``--bench`` subset: the seed-000 question models (train_on_batch, fit, tf.data), the seed-001
tiny model's inference paths, seed 003 on any backend (``compiled.application``) and one TF-only
benchmark (``tensor_ops.matmul``), whose TensorFlow variants must be set aside as TensorFlow's (no records,
``config.outside`` with the reason) while its ``api=backend`` variant runs.
"""
from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from e2e import MATRICES, cell_docs, records, require, tfmatrix

from suite.schema import NO_TF_BACKENDS, validate
from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claims.answers import compute_claim
from tfmatrix.analysis.claims.files import questions
from tfmatrix.analysis.frame import build_frame
from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.docker
BENCH = ("training.question*model=small*", "inference.tiny*stage=compiled*", "compiled.*", "tensor_ops.matmul*")


@pytest.fixture(scope="module")
def backend_run(tmp_path_factory):
    require(docker_engine.engine() is not None, "no Docker engine answers (scripts/host-setup installs one)")
    reports = tmp_path_factory.mktemp("backend-reports")
    bench = [a for pattern in BENCH for a in ("--bench", pattern)]
    t0 = time.monotonic()
    proc = tfmatrix("matrix", "--matrix", str(MATRICES / "backends.toml"), "--runner", "docker", "--reports",
                    str(reports), "--only", "keras3-*", "--redo", *bench)
    return SimpleNamespace(proc=proc, reports=reports, docs=cell_docs(reports), seconds=time.monotonic() - t0)


@pytest.mark.parametrize("backend", NO_TF_BACKENDS)
def test_keras3_runs_on_the_backend_without_tensorflow(backend_run, backend):
    doc = backend_run.docs[f"keras3-{backend}-cpu"]
    assert doc["status"] == "ok", doc["reason"]
    results = doc["results"]
    assert validate(results) == []
    facts = results["environment"]["tf"]
    assert facts["tensorflow"] is None and facts["tensorflow_imported"] is False
    assert facts["backend"]["name"] == backend and facts["backend"]["version"]
    assert facts["backend"]["devices"] and facts["gpus_visible"] == []
    assert "tensorflow" not in facts["packages"] and "tensorflow-cpu" not in facts["packages"]
    assert facts["keras"]["keras"]["version"] == doc["cell"]["keras"]["version"]
    recs = records(doc)
    assert {r["status"] for r in recs.values()} <= {"ok", "n/a"}
    ok = {i for i, r in recs.items() if r["status"] == "ok"}
    assert all(r["params"]["api"] in ("keras", "backend", "numpy") and r["params"]["mode"] == "eager"
               for i, r in recs.items() if i in ok), sorted(ok)
    assert any(i.startswith("tensor_ops.matmul") and "api=backend," in i for i in ok)   # seed 002 in keras.ops
    for path in ("loop=train_on_batch,input=numpy", "loop=fit,input=numpy"):
        assert any(i.startswith("training.question") and path in i for i in ok), path
    assert any(i.startswith("inference.tiny") and "path=predict_on_batch" in i for i in ok)
    assert any(i.startswith("compiled.application") and "jit_compile=false" in i for i in ok)
    aside = {e["id"]: g["reason"] for g in results["config"]["outside"] for e in g["variants"]}
    assert not set(aside) & set(recs)
    matmul_tf = [i for i in aside if i.startswith("tensor_ops.matmul") and "api=tf," in i]
    assert matmul_tf and all("installs no TensorFlow" in aside[i] for i in matmul_tf)
    tf_data = [i for i in aside if "input=tf.data" in i and "api=keras," in i and "mode=eager" in i]
    assert tf_data and all(aside[i].startswith("tf.data input needs TensorFlow") for i in tf_data)
    tf_own = ("api=tf.keras,", "api=tf,", "input=tf.data", "path=tf_function", "mode=graph")
    assert all(any(part in i for part in tf_own) for i in aside), sorted(aside)


def test_the_report_compares_the_backends(backend_run):
    cells = load_dir(backend_run.reports / "cells").cells
    question = next(q for q in questions() if q.key == "keras3_backends")
    lines = [ln.comparison for c in compute_claim(question, build_frame(cells), cells).cells for ln in c.lines]
    assert {(c.cell_a.name, c.cell_b.name) for c in lines} == {("keras3-torch-cpu", "keras3-jax-cpu")}
    assert len(lines) >= 4 and all(c.ci.low <= c.ci.ratio <= c.ci.high for c in lines)
    assert backend_run.proc.returncode == 0 and backend_run.seconds < 3600   # 146 s on the 2-core VM, images built
