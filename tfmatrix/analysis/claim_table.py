"""The claims table: each seed's claim (``Claim``), the configuration it was made at, and ``CLAIMS``, data only.

One row per claim the seeds make (../shared/seeds/000..004): its sentence,
its two sides (``Setup``: benchmark globs and the parameter values of each
side, the seed's own configuration first, then stand-ins), the side the
claim says is faster, the seed's own figures and cell. With
``claim_setups.BACKEND_ANSWERS`` (the JAX and PyTorch answers) this is all the
claims know of benchmark and parameter names; ``tests/test_contracts.py``
checks them against the catalogue. How a claim is answered in a cell, and
its verdicts, is ``claims.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..versions import minor_series
from .cells import CellResult
from .claim_setups import TF_CELLS, Setup, on_backends
from .claim_setups import setup as _cmp

NOT_A = "not_a"       # a claim that side a does not help: judged against MARGIN, not against 1
MARGIN = 0.10         # "does not help": a is not faster by more than this (its interval says so)


@dataclass(frozen=True)
class CellMatch:
    """A cell by TF minor series and (optionally) Keras version: how a seed names its setup."""

    tf: str                         # "2.0", "1.14"
    keras: str = ""                 # a version prefix ("2.3.1"); "" for any

    def matches(self, cell: CellResult) -> bool:
        return minor_series(cell.tf) == self.tf and (not self.keras or cell.keras_version.startswith(self.keras))

    def text(self) -> str:
        return f"TF {self.tf}" + (f" + Keras {self.keras}" if self.keras else "")


@dataclass(frozen=True)
class Claim:
    key: str
    seed: str
    claim: str                      # the claim, in one sentence
    a: str                          # side labels; the ratio is time(a) / time(b)
    b: str
    setups: tuple[Setup, ...]
    expect: str                     # "a" or "b": the side the claim says is faster; NOT_A: a does not help
    seed_figure: str                # the seed's own numbers
    seed_setup: str                 # the seed's version, device, model
    seed_size: str                  # the seed's shape / size
    size: tuple[str, ...]           # parameters that state the measured size
    seed_device: str = "unstated"   # cpu | gpu | cpu+gpu | unstated
    seed_cell: CellMatch | None = None      # the seed's own cell (side a's cell for cross-cell claims)
    ref_cell: CellMatch | None = None       # cross-cell claims: side b's cell; every other cell is compared with it
    expect_gpu: str | None = None           # where the claim differs on a GPU (XLA)
    tf_major: int | None = None             # only cells of this TF major version (side a's, cross-cell)
    finding: str = ""                       # the finding this claim heads (its key in FINDINGS)

    def expected(self, target: str) -> str:
        return self.expect_gpu if target == "gpu" and self.expect_gpu else self.expect

    def rule(self) -> str:
        """How the verdict is decided, in words (shown in the report and in claims.csv)."""
        def one(expect: str) -> str:
            if expect == NOT_A:
                return (f"holds when {self.a} is shown not to be faster by more than {MARGIN:.0%} (95% CI of time "
                        f"A/B above {1 / (1 + MARGIN):.3f}); reversed when it is shown faster by more (CI below); "
                        "otherwise no clear difference: not shown either way")
            side, other = (self.a, self.b) if expect == "a" else (self.b, self.a)
            return (f"holds when {side} is clearly faster (95% CI of time A/B {'below' if expect == 'a' else 'above'} "
                    f"1); reversed when {other} is")
        text = one(self.expect)
        if self.expect_gpu and self.expect_gpu != self.expect:
            text = f"CPU: {text}; GPU: {one(self.expect_gpu)}"
        return text


# ---------------------------------------------------------------------------
# THE TABLE: one row per claim the seeds make (../shared/seeds/000..004).
# ---------------------------------------------------------------------------

TF1_SEED, TF2_SEED = CellMatch("1.14", "2.2.5"), CellMatch("2.0", "2.3.1")
Q_TOB = {"loop": "train_on_batch", "input": "numpy"}
ANSWER_SMALL = {"model": "small", "data": "small"}
EFFNET = "measured on the stand-in MobileNetV2 (every TF has it; EfficientNetV2S needs tf.keras 2.8+)"

CLAIMS: tuple[Claim, ...] = (
    Claim(
        "tf1_faster_train_on_batch", "000", "TF1 runs train_on_batch() faster than TF2.",
        a="TF 2.0 + Keras 2.3.1", b="TF 1.14 + Keras 2.2.5",
        setups=(_cmp(("training.question",), dict(Q_TOB, api="keras", mode="eager"),
                     dict(Q_TOB, api="keras", mode="graph")),),
        expect="b", seed_cell=TF2_SEED, ref_cell=TF1_SEED, tf_major=2, finding="tf2_vs_tf1",
        seed_figure="TF1 47% to 276% faster (time TF2/TF1 1.47 to 3.76)",
        seed_setup="standalone keras, each TF in its default mode (TF2 eager, TF1 graph), train_on_batch, numpy; "
                   "the question's small (Conv1D) and medium (BiLSTM) models; GTX 1070 GPU",
        seed_size="batch_shape=32x400x16", size=("model", "batch_shape", "width"), seed_device="gpu",
    ),
    Claim(
        "tf2_graph_no_help", "000", "Disabling eager execution in TF2 does not make train_on_batch() faster "
        "consistently.", a="TF2 graph", b="TF2 eager",
        setups=(_cmp(("training.question",), dict(Q_TOB, api="keras", mode="graph"),
                     dict(Q_TOB, api="keras", mode="eager")),),
        expect=NOT_A, seed_cell=TF2_SEED, tf_major=2, finding="graph_vs_eager",
        seed_figure="no figure: 'does not help; sometimes graph helps considerably, other times it is slower'",
        seed_setup="TF 2.0 + Keras 2.3.1, standalone keras, train_on_batch, numpy, the question's models; GPU",
        seed_size="batch_shape=32x400x16", size=("model", "batch_shape", "width"), seed_device="gpu",
    ),
    Claim(
        "fit_slower_than_train_on_batch", "000", "With tf.keras in eager mode, fit() is slower per batch than "
        "train_on_batch() (numpy input).", a="fit", b="train_on_batch",
        setups=(_cmp(("training.answer",), dict(ANSWER_SMALL, loop="fit", input="numpy", api="tf.keras",
                                                mode="eager"),
                     dict(ANSWER_SMALL, loop="train_on_batch", input="numpy", api="tf.keras", mode="eager"),
                     backends=TF_CELLS),
                *on_backends("fit_slower_than_train_on_batch")),
        expect="b", seed_cell=TF2_SEED, finding="fit_vs_train_on_batch",
        seed_figure="no single figure: DON'T 'fit() + numpy + tf.keras + TF1/TF2 + Eager'; DO 'train_on_batch() "
                    "+ numpy + tf.keras'",
        seed_setup="TF 1.14 and 2.0, tf.keras, eager, numpy; the answer's small Conv1D model and data; GPU",
        seed_size="batch_shape=32x140x30", size=("batch_shape", "width"), seed_device="gpu",
    ),
    Claim(
        "keras_slower_than_tf_keras", "000", "Standalone keras is slower than tf.keras with fit() on small models "
        "and data.", a="keras", b="tf.keras",
        setups=(_cmp(("training.answer",), dict(ANSWER_SMALL, loop="fit", input="numpy", mode="graph",
                                                api="keras"),
                     dict(ANSWER_SMALL, loop="fit", input="numpy", mode="graph", api="tf.keras")),),
        expect="b", seed_cell=TF2_SEED, finding="keras_vs_tf_keras",
        seed_figure="keras vs tf.keras 18% to 40% apart, 32% on average (TF1 and TF2); DON'T 'fit() + numpy + keras "
                    "for small & medium models'",
        seed_setup="TF 1.14 + Keras 2.2.5 and TF 2.0 + Keras 2.3.1, fit, numpy, graph (standalone keras on TF1 "
                   "runs only in graph mode); GPU",
        seed_size="batch_shape=32x140x30", size=("batch_shape", "width"), seed_device="gpu",
    ),
    Claim(
        "tf_data_faster_than_numpy", "000", "In eager mode fit() is slower on numpy arrays than on a "
        "tf.data.Dataset (numpy input pays a conversion per call).", a="tf.data", b="numpy",
        setups=(_cmp(("training.answer",), dict(ANSWER_SMALL, loop="fit", input="tf.data", api="tf.keras",
                                                mode="eager"),
                     dict(ANSWER_SMALL, loop="fit", input="numpy", api="tf.keras", mode="eager")),),
        expect="a", seed_cell=TF2_SEED, finding="tf_data_vs_numpy",
        seed_figure="no figure: 'Eager is slower w/ Numpy inputs' (profiler); the TF developer: the Dataset "
                    "conversion is a one-time overhead",
        seed_setup="TF 2.0, tf.keras, eager, fit; the answer's Conv1D models; GPU",
        seed_size="batch_shape=32x140x30", size=("batch_shape", "width"), seed_device="gpu",
    ),
    Claim(
        "predict_slower_after_compile", "001", "predict() is about 30x slower after compile() (TF 2.0/2.1).",
        a="predict after compile", b="predict before compile",
        setups=(_cmp(("inference.tiny",), dict(path="predict", stage="compiled", api="tf.keras", mode="eager"),
                     dict(path="predict", stage="uncompiled", api="tf.keras", mode="eager"), backends=TF_CELLS),
                *on_backends("predict_slower_after_compile")),
        expect="b", seed_cell=CellMatch("2.0"), finding="predict_after_compile",
        seed_figure="0.99 s before vs 29.8 s after compile() for 1000 calls: 30x",
        seed_setup="TF 2.0/2.1, tf.keras, eager, the tiny model (Dense(2) + Dense(1)); device not stated",
        seed_size="batch_shape=32x4, 1000 calls", size=("batch_shape",),
    ),
    Claim(
        "call_and_predict_on_batch_fix", "001", "On a small batch, model(x) and predict_on_batch() are faster "
        "than predict() (the fix for the slow compiled predict).", a="model(x) or predict_on_batch", b="predict",
        setups=(_cmp(("inference.tiny",), dict(path=("call", "predict_on_batch"), stage="compiled",
                                               api="tf.keras", mode="eager"),
                     dict(path="predict", stage="compiled", api="tf.keras", mode="eager"), backends=TF_CELLS),
                *on_backends("call_and_predict_on_batch_fix")),
        expect="a", seed_cell=CellMatch("2.1"), finding="call_vs_predict",
        seed_figure="no timing: 'the current best practice for small batches is model(x)'; predict_on_batch "
                    "'worth trying, especially with TF 2.1'",
        seed_setup="TF 2.1, tf.keras, eager, compiled tiny model",
        seed_size="batch_shape=32x4", size=("batch_shape",),
    ),
    Claim(
        "tf_matmul_faster_than_np_dot", "002", "tf.matmul multiplies two large matrices faster than np.dot.",
        a="tf.matmul", b="np.dot",
        setups=(_cmp(("tensor_ops.matmul",), dict(impl="tf.matmul", api="tf", mode="eager"),
                     dict(impl="numpy.dot", api="numpy", mode="eager"), backends=TF_CELLS),
                *on_backends("tf_matmul_faster_than_np_dot")),
        expect="a", finding="tf_matmul_vs_numpy",
        seed_figure="np.dot 5.61 s, tf.matmul 0.77 s: 7.3x",
        seed_setup="TF 2.x eager, float64; i9-9900K CPU for np.dot, RTX 2060 SUPER GPU for tf.matmul",
        seed_size="n=10000", size=("n",), seed_device="gpu",
    ),
    Claim(
        "einsum_faster_than_loop", "002", "One tf.einsum is faster than a Python loop of tf.matmul + tf.stack.",
        a="einsum", b="loop + stack",
        setups=(_cmp(("tensor_ops.batched_matmul",), dict(impl="einsum", mode="eager"),
                     dict(impl="loop_stack", mode="eager"), backends=TF_CELLS),
                *on_backends("einsum_faster_than_loop")),
        expect="a", finding="einsum_vs_loop",
        seed_figure="loop 0.40 s, einsum 0.28 s: 1.4x",
        seed_setup="TF 2.x eager, float32; RTX 2060 SUPER GPU",
        seed_size="a_shape=1000x100x1000, b_shape=1000x1000", size=("a_shape", "b_shape"), seed_device="gpu",
    ),
    Claim(
        "tf_function_speeds_up_forward", "003", "tf.function (jit_compile=None) speeds up a Keras model's forward "
        "pass on a CPU.", a="tf.function", b="eager",
        setups=(_cmp(("graphs.xla",), dict(model="efficientnetv2s", call="tf.function", jit_compile="none"),
                     dict(model="efficientnetv2s", call="eager", jit_compile="none")),
                _cmp(("graphs.xla",), dict(model="mobilenetv2", call="tf.function", jit_compile="none"),
                     dict(model="mobilenetv2", call="eager", jit_compile="none"), standin=EFFNET)),
        expect="a", seed_cell=CellMatch("2.13"), finding="tf_function_vs_eager",
        seed_figure="0.531 s eager vs 0.094 s tf.function per call: 5.6x",
        seed_setup="TF 2.13, tf.keras EfficientNetV2S (weights=None), one image; CPU",
        seed_size="input_shape=1x384x384x3", size=("model", "input_shape"), seed_device="cpu",
    ),
    Claim(
        "xla_slower_on_cpu_faster_on_gpu", "003", "jit_compile=True (XLA) is slower than plain tf.function on a "
        "CPU and faster on a GPU.", a="XLA on", b="tf.function",
        setups=(_cmp(("graphs.xla",), dict(model="efficientnetv2s", call="tf.function", jit_compile="true"),
                     dict(model="efficientnetv2s", call="tf.function", jit_compile="none")),
                _cmp(("graphs.xla",), dict(model="mobilenetv2", call="tf.function", jit_compile="true"),
                     dict(model="mobilenetv2", call="tf.function", jit_compile="none"), standin=EFFNET)),
        expect="b", expect_gpu="a", seed_cell=CellMatch("2.13"), finding="xla_vs_tf_function",
        seed_figure="CPU: 1.59 s vs 0.094 s (16.9x slower); GPU (the answer, Kaggle): 11.6 ms vs 15.5 ms "
                    "(1.3x faster)",
        seed_setup="TF 2.13, tf.keras EfficientNetV2S, one image; CPU (question) and GPU (answer)",
        seed_size="input_shape=1x384x384x3", size=("model", "input_shape"), seed_device="cpu+gpu",
    ),
    Claim(
        "tf_function_faster_power", "004", "tf.function runs power(x, 100) faster than eager execution.",
        a="tf.function", b="eager",
        setups=(_cmp(("graphs.power",), dict(call="tf.function"), dict(call="eager"), backends=TF_CELLS),
                *on_backends("tf_function_faster_power")),
        expect="a", finding="tf_function_vs_eager",
        seed_figure="eager 1.78 s vs graph 0.53 s for 1000 calls: 3.3x",
        seed_setup="TF 2.x (the tf.function guide), int32, 100 chained tf.matmul; device not stated",
        seed_size="shape=10x10, exponent=100", size=("shape", "exponent"),
    ),
    Claim(
        "python_args_retrace", "004", "Passing a new Python number to a tf.function retraces it on every call, "
        "so each call is slower than with tensor arguments.", a="Python ints", b="tensors",
        setups=(_cmp(("graphs.tracing",), dict(arg="python_distinct"), dict(arg="tensor"), backends=TF_CELLS),
                *on_backends("python_args_retrace")),
        expect="b",
        seed_figure="no timing: 'Tracing!' printed for each new Python value; tensors trace once",
        seed_setup="TF 2.x, tf.function(x * x + tf.constant(2)), scalar arguments",
        seed_size="scalar arguments", size=(),
    ),
)
