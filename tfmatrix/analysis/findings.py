"""The seeds' questions (``FINDINGS``) and the headline charts (``CHARTS``): data only.

Everything in the report that depends on benchmark or parameter names is in
the two tables in this module, ``FINDINGS`` and ``CHARTS``: when the
catalogue changes (``python -m suite list`` shows the parameter names in each
variant id), adjust them here and nowhere else; ``tests/test_contracts.py``
checks every name against the catalogue. How a finding is answered (pairing,
ratios, intervals) is in ``pairing.py``; the chart model in ``chart_model.py``.
The names below are re-exported so callers keep importing them from here.
"""
from __future__ import annotations

import pandas as pd

from .cells import CellResult
from .chart_data import Chart, ChartData, Point, Series, chart_data
from .pairing import (
    Compare,
    Comparison,
    Finding,
    FindingResult,
    GroupSummary,
    ParamSpec,
    _p,
    _pair,
    _side_missing,
    comparison_ci,
    compute,
    in_benchmarks,
    matches,
    spec_text,
)

__all__ = [
    "CHARTS", "FINDINGS", "Chart", "ChartData", "Compare", "Comparison", "Finding", "FindingResult", "GroupSummary",
    "ParamSpec", "Point", "Series", "_p", "_pair", "_side_missing", "chart_data", "comparison_ci", "compute",
    "compute_all", "in_benchmarks", "matches", "spec_text",
]  # fmt: skip

# ---------------------------------------------------------------------------
# THE TABLE: benchmark and parameter names the report depends on.
# ---------------------------------------------------------------------------

TRAINING = ("training.*",)
INFERENCE = ("inference.*",)
CALLS = ("graphs.power", "graphs.matmul_bias")       # call=eager|tf.function|session

FINDINGS: tuple[Finding, ...] = (
    Finding(
        "tf2_vs_tf1", "000", "TF2 vs TF1: is TF2 slower at training, configuration by configuration?",
        a="TF 2.x", b="TF 1.x", scope="cells", a_tf=2, b_tf=1,
        compare=(Compare(TRAINING, _p(), _p()),),
        note="Same model, data, loop, input, Keras API and execution mode on both sides; the TF 1.x side is the "
             "newest TF 1.x cell with the same target. The seed found TF1 47% to 276% faster (TF 1.14 + Keras "
             "2.2.5 vs TF 2.0 + Keras 2.3.1, GPU).",
    ),
    Finding(
        "tf2_eager_vs_tf1_graph", "000", "TF2 as users run it (eager, the default) vs TF1 as users ran it (graph)",
        a="TF 2.x eager", b="TF 1.x graph", scope="cells", a_tf=2, b_tf=1,
        compare=(Compare(TRAINING, _p(mode="eager"), _p(mode="graph")),),
        note="The seed's headline comparison: each version in its default execution mode.",
    ),
    Finding(
        "graph_vs_eager", "000/004", "Graph vs eager execution, within one TF version",
        a="graph", b="eager",
        compare=(Compare(TRAINING + INFERENCE, _p(mode="graph"), _p(mode="eager")),
                 Compare(CALLS, _p(call="session", mode="graph"), _p(call="eager", mode="eager"))),
        note="Keras: tf.compat.v1.disable_eager_execution() (TF2) or TF1's default; graphs.*: a tf.compat.v1 "
             "Session running the graph. The seed's 'GvE', +% when graph is faster.",
    ),
    Finding(
        "fit_vs_train_on_batch", "000", "fit() vs train_on_batch(), numpy input",
        a="fit", b="train_on_batch",
        compare=(Compare(TRAINING, _p(loop="fit", input="numpy"), _p(loop="train_on_batch", input="numpy")),),
    ),
    Finding(
        "predict_after_compile", "001", "predict() after compile() vs before it",
        a="predict after compile", b="predict before compile",
        compare=(Compare(INFERENCE, _p(path="predict", stage=("compiled", "train_built")),
                         _p(path="predict", stage="uncompiled")),),
        note="stage=compiled: after compile(); stage=train_built: also after one train_on_batch (the seed's "
             "_make_train_function()). The seed saw predict 30x slower after compile in TF 2.0/2.1.",
    ),
    Finding(
        "call_vs_predict", "001", "model(x) vs predict() on a small batch",
        a="model(x)", b="predict",
        compare=(Compare(INFERENCE, _p(path=("call", "call_training_false")), _p(path="predict")),),
        note="path=call_training_false is model(x, training=False); both at the same stage (compiled or not).",
    ),
    Finding(
        "predict_on_batch_vs_predict", "001", "predict_on_batch() vs predict() on a small batch",
        a="predict_on_batch", b="predict",
        compare=(Compare(INFERENCE, _p(path="predict_on_batch"), _p(path="predict")),),
    ),
    Finding(
        "tf_function_vs_eager", "003/004", "tf.function vs plain eager calls",
        a="tf.function", b="eager",
        compare=(Compare(INFERENCE, _p(path="tf_function"), _p(path="call")),
                 Compare(("graphs.xla",), _p(call="tf.function", jit_compile="none"),
                         _p(call="eager", jit_compile="none")),
                 Compare(CALLS, _p(call="tf.function"), _p(call="eager"))),
        note="inference.*: tf.function(model)(x) vs model(x); graphs.xla: a Keras application's forward pass "
             "(seed 003, jit_compile=None); graphs.power/matmul_bias: seed 004's functions.",
    ),
    Finding(
        "xla_vs_tf_function", "003", "XLA on (jit_compile=True) vs off (False, or None: the default)",
        a="XLA on", b="XLA off",
        compare=(Compare(("graphs.xla",), _p(call="tf.function", jit_compile="true"),
                         _p(call="tf.function", jit_compile=("false", "none"))),),
    ),
    Finding(
        "keras_vs_tf_keras", "000", "Standalone keras vs tf.keras, within one TF version",
        a="keras", b="tf.keras",
        compare=(Compare(TRAINING + INFERENCE + ("input_pipelines.*",), _p(api="keras"), _p(api="tf.keras")),),
        note="Only cells where standalone keras is a different package from tf.keras (TF <= 2.15 with keras "
             "2.x installed next to it) can answer this.",
    ),
    Finding(
        "tf_data_vs_numpy", "000", "tf.data (and other input pipelines) vs numpy arrays fed to fit()",
        a="tf.data", b="numpy",
        compare=(Compare(TRAINING + ("input_pipelines.*",),
                         _p(input=("tf.data", "tf.data_prefetch", "generator", "sequence")), _p(input="numpy")),),
        note="input_pipelines.fit also feeds a Python generator and a keras Sequence; each line names its input.",
    ),
    Finding(
        "keras3_backends", "000/001/003", "Same Keras 3 model, which backend is fastest: TensorFlow, JAX or PyTorch?",
        a="later backend", b="earlier backend", scope="backends",
        compare=(Compare(TRAINING + INFERENCE + ("compiled.application",), _p(mode="eager"), _p(mode="eager")),),
        note="Cells with the same Keras 3 version and target that differ only in backend (order: tensorflow, jax, "
             "torch), every pair; each line is time(a)/time(b) of one configuration, so below 1 means the later "
             "backend of the pair is faster. TF runs the model as tf.keras, JAX and PyTorch as keras (they have no "
             "TensorFlow); the same seed-000/001 models, and seed 003's MobileNetV2 with jit_compile=False/True "
             "(XLA on TF and JAX, torch.compile on PyTorch).",
    ),
    Finding(
        "tf_matmul_vs_numpy", "002", "tf.matmul vs np.dot on the same matrices",
        a="tf.matmul", b="np.dot",
        compare=(Compare(("tensor_ops.matmul",), _p(impl="tf.matmul", api="tf", mode="eager"),
                         _p(impl="numpy.dot", api="numpy", mode="eager")),),
    ),
    Finding(
        "einsum_vs_loop", "002", "One tf.einsum vs a Python loop of tf.matmul + tf.stack",
        a="einsum", b="loop + stack",
        compare=(Compare(("tensor_ops.batched_matmul",), _p(impl="einsum"), _p(impl="loop_stack")),),
    ),
)

CHARTS: tuple[Chart, ...] = (
    Chart("question_small", "Seed 000 question: small model (Conv1D + Flatten), train_on_batch, numpy",
          "training.question", _p(model="small", loop="train_on_batch", input="numpy")),
    Chart("question_medium", "Seed 000 question: medium model (BiLSTM + LSTM), train_on_batch, numpy",
          "training.question", _p(model="medium", loop="train_on_batch", input="numpy")),
    Chart("answer_small_fit", "Seed 000 answer: small model, small data, fit, numpy",
          "training.answer", _p(model="small", data="small", loop="fit", input="numpy")),
    Chart("answer_large_fit", "Seed 000 answer: large model, medium data, fit, numpy",
          "training.answer", _p(model="large", loop="fit", input="numpy")),
    Chart("input_pipelines", "Seed 000: fit() fed by numpy vs tf.data vs a generator vs a Sequence, tf.keras, eager",
          "input_pipelines.fit", _p(api="tf.keras", mode="eager")),
    Chart("tiny_predict", "Seed 001 tiny model: predict() before/after compile, tf.keras",
          "inference.tiny", _p(path="predict", api="tf.keras")),
    Chart("tiny_paths", "Seed 001 tiny model, compiled, eager: predict vs model(x) vs tf.function, tf.keras",
          "inference.tiny", _p(stage="compiled", api="tf.keras", mode="eager")),
    Chart("matmul", "Seed 002: np.dot vs tf.matmul", "tensor_ops.matmul"),
    Chart("xla", "Seed 003: MobileNetV2 forward pass: eager vs tf.function vs XLA", "graphs.xla",
          _p(model="mobilenetv2")),
    Chart("power", "Seed 004: power(x, 100): eager vs tf.function vs a Session", "graphs.power"),
)



def compute_all(df: pd.DataFrame, cells: list[CellResult],
                findings: tuple[Finding, ...] = FINDINGS) -> list[FindingResult]:
    return [compute(f, df, cells) for f in findings]
