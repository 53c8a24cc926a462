"""The seeds' questions: what a finding asks (``Finding``, ``Compare``, ``matches``) and the ``FINDINGS`` table.

A finding names its two sides by benchmark globs and parameter values
(``ParamSpec``), the language the claims (``records.py``, written as
TOML: ``files.py``) and the charts (``chart_data.py``) are written in
too. Everything in the report that depends on benchmark or parameter names
is in those tables: ``FINDINGS`` here, the claims files, and ``CHARTS``
beside its ``Chart`` model. When the
catalogue changes (``python -m suite list`` shows the parameter names in
each variant id), adjust them there and nowhere else;
``tests/test_contracts.py`` checks every name against the catalogue. How a
finding is answered (pairing, ratios, intervals) is in ``pairing.py``.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from suite.schema import NO_TF_BACKENDS, param_text

ParamSpec = Mapping[str, "str | tuple[str, ...]"]


class OnBackend(Protocol):
    """A cell as ``Compare.applies`` sees it: its Keras 3 backend (None: a cell without Keras 3, TensorFlow's)."""

    @property
    def backend(self) -> str | None: ...


def param_spec(**params: str | tuple[str, ...]) -> ParamSpec:
    return MappingProxyType(dict(params))


@dataclass(frozen=True)
class Compare:
    """Where a finding looks: benchmarks (globs) and the parameter values that make each side."""

    benchmarks: tuple[str, ...]
    a: ParamSpec
    b: ParamSpec
    backends: tuple[str, ...] = ()      # only cells on these frameworks ("tensorflow", "jax", "torch"); () every cell

    def applies(self, cell: OnBackend) -> bool:
        return not self.backends or (cell.backend or "tensorflow") in self.backends


@dataclass(frozen=True)
class Finding:
    key: str
    seed: str
    question: str
    a: str                              # side labels; the ratio is time(a) / time(b)
    b: str
    compare: tuple[Compare, ...]
    scope: str = "cell"                 # "cell": a and b in one cell; "cells": a and b in different cells;
    #                                     "backends": Keras 3 cells that differ only in backend
    a_tf: int | None = None             # scope "cells": TF major version of each side's cells
    b_tf: int | None = None
    note: str = ""


def matches(params: Mapping[str, Any], spec: ParamSpec) -> bool:
    """A record's parameters have the values ``spec`` asks for (tuples: any of them)."""
    for name, want in spec.items():
        if name not in params:
            return False
        allowed = want if isinstance(want, tuple) else (want,)
        if param_text(params[name]) not in allowed:
            return False
    return True


def in_benchmarks(benchmark: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(benchmark, g) for g in globs)


def spec_text(spec: ParamSpec) -> str:
    return ", ".join(f"{k}={'|'.join(v) if isinstance(v, tuple) else v}" for k, v in spec.items())


# ---------------------------------------------------------------------------
# THE TABLE: benchmark and parameter names the report depends on.
# ---------------------------------------------------------------------------

TRAINING = ("training.*",)
INFERENCE = ("inference.*",)
CALLS = ("graphs.power", "graphs.matmul_bias")       # call=eager|tf.function|session; api=backend: eager|compiled
TF = ("tensorflow",)      # Compare.backends: TF's questions (NO_TF_BACKENDS: JAX's and PyTorch's own)

FINDINGS: tuple[Finding, ...] = (
    Finding(
        "tf2_vs_tf1", "000", "TF2 vs TF1: is TF2 slower at training, configuration by configuration?",
        a="TF 2.x", b="TF 1.x", scope="cells", a_tf=2, b_tf=1,
        compare=(Compare(TRAINING, param_spec(), param_spec()),),
        note="Same model, data, loop, input, Keras API and execution mode on both sides; the TF 1.x side is the "
             "newest TF 1.x cell with the same target. The seed found TF1 47% to 276% faster (TF 1.14 + Keras "
             "2.2.5 vs TF 2.0 + Keras 2.3.1, GPU).",
    ),
    Finding(
        "tf2_eager_vs_tf1_graph", "000", "TF2 as users run it (eager, the default) vs TF1 as users ran it (graph)",
        a="TF 2.x eager", b="TF 1.x graph", scope="cells", a_tf=2, b_tf=1,
        compare=(Compare(TRAINING, param_spec(mode="eager"), param_spec(mode="graph")),),
        note="The seed's headline comparison: each version in its default execution mode.",
    ),
    Finding(
        "graph_vs_eager", "000/004", "Graph vs eager execution, within one TF version",
        a="graph", b="eager",
        compare=(Compare(TRAINING + INFERENCE, param_spec(mode="graph"), param_spec(mode="eager")),
                 Compare(CALLS, param_spec(call="session", mode="graph"), param_spec(call="eager", mode="eager"))),
        note="Keras: tf.compat.v1.disable_eager_execution() (TF2) or TF1's default; graphs.*: a tf.compat.v1 "
             "Session running the graph. The seed's 'GvE', +% when graph is faster.",
    ),
    Finding(
        "fit_vs_train_on_batch", "000", "fit() vs train_on_batch(), numpy input",
        a="fit", b="train_on_batch",
        compare=(Compare(TRAINING, param_spec(loop="fit", input="numpy"),
                         param_spec(loop="train_on_batch", input="numpy")),),
    ),
    Finding(
        "predict_after_compile", "001", "predict() after compile() vs before it",
        a="predict after compile", b="predict before compile",
        compare=(Compare(INFERENCE, param_spec(path="predict", stage=("compiled", "train_built")),
                         param_spec(path="predict", stage="uncompiled")),),
        note="stage=compiled: after compile(); stage=train_built: also after one train_on_batch (the seed's "
             "_make_train_function()). The seed saw predict 30x slower after compile in TF 2.0/2.1.",
    ),
    Finding(
        "call_vs_predict", "001", "model(x) vs predict() on a small batch",
        a="model(x)", b="predict",
        compare=(Compare(INFERENCE, param_spec(path=("call", "call_training_false")), param_spec(path="predict")),),
        note="path=call_training_false is model(x, training=False); both at the same stage (compiled or not).",
    ),
    Finding(
        "predict_on_batch_vs_predict", "001", "predict_on_batch() vs predict() on a small batch",
        a="predict_on_batch", b="predict",
        compare=(Compare(INFERENCE, param_spec(path="predict_on_batch"), param_spec(path="predict")),),
    ),
    Finding(
        "tf_function_vs_eager", "003/004", "tf.function vs plain eager calls",
        a="tf.function", b="eager",
        compare=(Compare(INFERENCE, param_spec(path="tf_function"), param_spec(path="call")),
                 Compare(("graphs.xla",), param_spec(call="tf.function", jit_compile="none"),
                         param_spec(call="eager", jit_compile="none")),
                 Compare(CALLS, param_spec(call="tf.function"), param_spec(call="eager"), TF),
                 Compare(CALLS, param_spec(call="compiled", api="backend"), param_spec(call="eager", api="backend"),
                         NO_TF_BACKENDS)),
        note="inference.*: tf.function(model)(x) vs model(x); graphs.xla: a Keras application's forward pass "
             "(seed 003, jit_compile=None); graphs.power/matmul_bias: seed 004's functions. On a Keras 3 cell "
             "without TF (JAX, PyTorch) seed 004's functions are compiled with jax.jit or torch.compile instead.",
    ),
    Finding(
        "xla_vs_tf_function", "003", "XLA on (jit_compile=True) vs off (False, or None: the default)",
        a="XLA on", b="XLA off",
        compare=(Compare(("graphs.xla",), param_spec(call="tf.function", jit_compile="true"),
                         param_spec(call="tf.function", jit_compile=("false", "none"))),),
    ),
    Finding(
        "keras_vs_tf_keras", "000", "Standalone keras vs tf.keras, within one TF version",
        a="keras", b="tf.keras",
        compare=(Compare(TRAINING + INFERENCE + ("input_pipelines.*",), param_spec(api="keras"),
                         param_spec(api="tf.keras")),),
        note="Only cells where standalone keras is a different package from tf.keras (TF <= 2.15 with keras "
             "2.x installed next to it) can answer this.",
    ),
    Finding(
        "tf_data_vs_numpy", "000", "tf.data (and other input pipelines) vs numpy arrays fed to fit()",
        a="tf.data", b="numpy",
        compare=(Compare(TRAINING + ("input_pipelines.*",),
                         param_spec(input=("tf.data", "tf.data_prefetch", "generator", "sequence")),
                         param_spec(input="numpy")),),
        note="input_pipelines.fit also feeds a Python generator and a keras Sequence; each line names its input.",
    ),
    Finding(
        "keras3_backends", "000/001/003", "Same Keras 3 model, which backend is fastest: TensorFlow, JAX or PyTorch?",
        a="later backend", b="earlier backend", scope="backends",
        compare=(Compare(TRAINING + INFERENCE + ("compiled.application",), param_spec(mode="eager"),
                         param_spec(mode="eager")),),
        note="Cells with the same Keras 3 version and target that differ only in backend (order: tensorflow, jax, "
             "torch), every pair; each line is time(a)/time(b) of one configuration, so below 1 means the later "
             "backend of the pair is faster. TF runs the model as tf.keras, JAX and PyTorch as keras (they have no "
             "TensorFlow); the same seed-000/001 models, and seed 003's MobileNetV2 with jit_compile=False/True "
             "(XLA on TF and JAX, torch.compile on PyTorch).",
    ),
    Finding(
        "tf_matmul_vs_numpy", "002", "tf.matmul vs np.dot on the same matrices",
        a="tf.matmul", b="np.dot",
        compare=(Compare(("tensor_ops.matmul",), param_spec(impl="tf.matmul", api="tf", mode="eager"),
                         param_spec(impl="numpy.dot", api="numpy", mode="eager"), TF),
                 Compare(("tensor_ops.matmul",), param_spec(impl="matmul", api="backend", mode="eager"),
                         param_spec(impl="numpy.dot", api="numpy", mode="eager"), NO_TF_BACKENDS)),
        note="On a Keras 3 cell without TF the framework's own product answers: jax.numpy.matmul (float64 with "
             "jax_enable_x64) or torch.matmul.",
    ),
    Finding(
        "einsum_vs_loop", "002", "One tf.einsum vs a Python loop of tf.matmul + tf.stack",
        a="einsum", b="loop + stack",
        compare=(Compare(("tensor_ops.batched_matmul",), param_spec(impl="einsum", api="tf"),
                         param_spec(impl="loop_stack", api="tf"), TF),
                 Compare(("tensor_ops.batched_matmul",), param_spec(impl="einsum", api="backend"),
                         param_spec(impl="loop_stack", api="backend"), NO_TF_BACKENDS)),
        note="On a Keras 3 cell without TF the seed's two functions run on jax.numpy or torch.",
    ),
)
