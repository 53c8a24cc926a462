"""Each seed's claim, answered at the seed's own configuration: the report's first section.

The findings (``findings.py``) pair every configuration that differs only in
what a question asks about and count them; a claim instead names the one
configuration the seed measured (``tf.keras``, eager, the tiny model, ...)
and, for seed 000's TF1 vs TF2, the exact pair of cells the seed compared
(TF 2.0 + Keras 2.3.1 against TF 1.14 + Keras 2.2.5). A median over
configurations can hide a 30x effect behind eleven unchanged ones; a claim
never aggregates: each configuration it pins is one line, with its own ratio
and interval.

Everything that depends on benchmark or parameter names is in ``CLAIMS``
below. Pairing, ratios and intervals are the findings' own (``pairing.pair_rows``,
``moderation.judge`` and ``RatioCI.verdict``), so a change to how intervals
are computed changes the claims with it. A claim's verdict per line:

* ``holds``: the 95% interval excludes 1 on the side the claim says is
  faster (for a claim that A does *not* help: the whole interval lies above
  1/(1 + ``MARGIN``), A is not faster by more than 10%: an equivalence-style
  margin, so an unclear result is not read as "does not help");
* ``reversed``: the same on the other side (A faster by more than the margin);
* ``no clear difference``: the interval includes 1 (or, for "does not help",
  reaches past the margin), or one process a side: not enough replication;
* ``cannot exist here``: the cell lacks a side (an n/a variant, a variant that
  failed), with the reason;
* ``not measured in this run``: a side's variants are not in the cell's
  results at all (a ``--bench`` filter or a user's own selection left them
  out): nothing says the claim cannot exist there.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..versions import minor_series
from .cells import CellResult
from .claim_setups import TF_CELLS, Setup, on_backends
from .claim_setups import setup as _cmp
from .devices import seed_gpu_note
from .frame import param_text
from .hardware import same_hardware
from .noise_model import annotate
from .pairing import (
    Comparison,
    Finding,
    FindingResult,
    in_benchmarks,
    matches,
    pair_rows,
    side_missing,
)
from .statistics.inference import ALPHA, RatioCI

HOLDS, REVERSED, UNCLEAR, CANNOT = "holds", "reversed", "no clear difference", "cannot exist here"
NOT_MEASURED = "not measured in this run"
VERDICTS = (HOLDS, REVERSED, UNCLEAR, CANNOT, NOT_MEASURED)
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
                     dict(ANSWER_SMALL, loop="train_on_batch", input="numpy", api="tf.keras", mode="eager")),),
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
                     dict(path="predict", stage="uncompiled", api="tf.keras", mode="eager")),),
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
                     dict(path="predict", stage="compiled", api="tf.keras", mode="eager")),),
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

# ---------------------------------------------------------------------------


@dataclass
class ClaimLine:
    """One configuration of a claim in one cell (pair): the ratio, its interval, the verdict."""

    comparison: Comparison
    verdict: str
    size: str                       # the measured size, from side a's parameters
    standin: str = ""               # why a stand-in configuration answers here
    stopped: str = ""               # a sequential run: why its rounds stopped (``sequential.attach_stops``)

    @property
    def label(self) -> str:
        """What distinguishes this line from the cell's others (the free parameters, a side's own value)."""
        c = self.comparison
        parts = [p for p in (c.a_detail, c.b_detail) if p] + [p for p in [self.size] if p]
        return "; ".join(parts)


@dataclass
class ClaimCell:
    """A claim's answer in one cell (or, for cross-cell claims, one cell against the reference cell)."""

    cell: CellResult
    ref: CellResult | None                # side b's cell when it is another cell
    seed_cell: bool                 # the seed's own cell (pair): the headline
    lines: list[ClaimLine] = field(default_factory=list)
    reason: str = ""                # why the claim cannot exist here (no lines)
    not_measured: bool = False      # no lines because a side's variants are absent from the results (filtered out)

    @property
    def name(self) -> str:
        return self.cell.name if self.ref is None else f"{self.cell.name} vs {self.ref.name}"

    @property
    def empty_verdict(self) -> str:
        """The verdict of a cell without lines: filtered out of this run, or impossible here."""
        return NOT_MEASURED if self.not_measured else CANNOT

    @property
    def target(self) -> str:
        return self.cell.target


@dataclass
class ClaimResult:
    claim: Claim
    cells: list[ClaimCell]
    notes: list[str]

    def headline(self) -> list[ClaimCell]:
        """The seed's own cells first, then the others in report order."""
        return sorted(self.cells, key=lambda c: not c.seed_cell)

    @property
    def measured_targets(self) -> list[str]:
        return sorted({c.target for c in self.cells if c.lines})


def verdict(ci: RatioCI, expect: str) -> str:
    """A claim's verdict from a line's interval and the side the claim expects (``NOT_A``: against ``MARGIN``)."""
    if expect == NOT_A:
        edge = 1.0 / (1.0 + MARGIN)
        if not ci.replicated:
            return UNCLEAR
        return HOLDS if ci.low > edge else REVERSED if ci.high < edge else UNCLEAR
    if ci.verdict == "unclear":
        return UNCLEAR
    return HOLDS if ci.verdict == expect else REVERSED


def size_text(params: Mapping[str, Any], names: tuple[str, ...]) -> str:
    return ", ".join(f"{n}={param_text(params[n])}" for n in names if n in params)


def _finding_for(claim: Claim, setup: Setup) -> Finding:
    """The findings' pairing wants a Finding: the claim's labels and key (the bootstrap seed's key)."""
    return Finding("claim-" + claim.key, claim.seed, claim.claim, claim.a, claim.b, (setup.compare,))


def _where(rows: pd.DataFrame, mask: list[bool]) -> pd.DataFrame:
    """Rows where ``mask`` holds (a plain list of no booleans would select columns instead)."""
    return rows[pd.Series(mask, index=rows.index, dtype=bool)]


def _side_rows(rows: pd.DataFrame, cell: CellResult, spec: Mapping[str, Any]) -> pd.DataFrame:
    mine = _where(rows, [c == cell.name for c in rows["cell"]])
    return _where(mine, [matches(p, spec) for p in mine["params"]])


def answer_cell(claim: Claim, rows: pd.DataFrame, cell: CellResult, ref: CellResult | None,
                seed_cell: bool, alpha: float = ALPHA) -> ClaimCell:
    """The claim in one cell (against ``ref`` for cross-cell claims): its seed setup, else a stand-in."""
    out = ClaimCell(cell, ref, seed_cell)
    reasons: list[str] = []
    absent = True                   # every setup lacks a side's rows entirely: filtered out, not impossible
    own_reason = ""                 # why the cell's own framework's setup (JAX, PyTorch) found nothing
    for setup in claim.setups:
        if not setup.applies(cell):
            continue
        cmp = setup.compare
        here = _where(rows, [in_benchmarks(b, cmp.benchmarks) for b in rows["benchmark"]])
        a_rows = _side_rows(here, cell, cmp.a)
        b_rows = _side_rows(here, ref or cell, cmp.b)
        why = [w for w in (side_missing(claim.a, cmp.a, a_rows, cmp.benchmarks),
                           side_missing(claim.b, cmp.b, b_rows, cmp.benchmarks)) if w]
        absent = absent and (not len(a_rows) or not len(b_rows))
        if not why:
            result = FindingResult(_finding_for(claim, setup), [], [])
            missing = pair_rows(result.finding, cmp, a_rows, b_rows, cell, ref or cell, result)
            why = [f"{r} ({n})" for r, n in missing.most_common(2)] if not result.comparisons else []
            by_id = {str(r["id"]): r["params"] for _, r in a_rows.iterrows()}
            for c in result.comparisons:
                if alpha != ALPHA:      # a sequential run's looks: the interval its verdict was made on
                    c = dataclasses.replace(c, ci=c.ci.at(1 - alpha))
                out.lines.append(ClaimLine(c, verdict(c.ci, claim.expected(cell.target)),
                                           size_text(by_id.get(c.a_id, {}), claim.size), setup.standin))
        if out.lines:
            if reasons:
                for line in out.lines:
                    line.standin = f"{line.standin} (the seed's configuration: {reasons[0]})"
            return out
        reasons.append("; ".join(why) or "nothing to pair")
        own_reason = reasons[-1] if cmp.backends else own_reason
    out.reason = own_reason or reasons[0]
    out.not_measured = absent
    return out


def compute_claim(claim: Claim, df: pd.DataFrame, cells: list[CellResult], alpha: float = ALPHA) -> ClaimResult:
    """The claim in every cell that can answer it; ``alpha``: each line's test (a sequential run's per look)."""
    result = ClaimResult(claim, [], [])
    df = annotate(df)
    globs = tuple(g for s in claim.setups for g in s.compare.benchmarks)
    rows = _where(df, [in_benchmarks(b, globs) for b in df["benchmark"]])
    ran = [c for c in cells if c.has_records]
    for target in sorted({c.target for c in ran}, key=lambda t: (t != "cpu", t)):
        here = [c for c in ran if c.target == target and (claim.tf_major is None or c.tf_major == claim.tf_major)]
        refs: list[CellResult] = []
        if claim.ref_cell is not None:
            refs = [c for c in ran if c.target == target and claim.ref_cell.matches(c)]
            if not refs:
                result.notes.append(f"{target.upper()}: no {claim.ref_cell.text()} cell ran, so {claim.a} cannot be "
                                    f"compared with {claim.b}, the seed's pair (cells: "
                                    f"{', '.join(c.name for c in here)}).")
                continue
        for cell in here:
            ref = same_hardware(cell, refs)          # the seed's pair on this cell's hardware, when it ran there
            if cell is ref:
                continue
            seed = claim.seed_cell is not None and claim.seed_cell.matches(cell)
            result.cells.append(answer_cell(claim, rows, cell, ref, seed, alpha))
        if claim.seed_cell is not None and not any(c.seed_cell for c in result.cells if c.target == target):
            result.notes.append(f"{target.upper()}: no {claim.seed_cell.text()} cell ran (the seed's own); "
                                "the other cells answer below.")
    if "gpu" in claim.seed_device and "gpu" not in result.measured_targets:
        result.notes.append(seed_gpu_note(ran, [c for c in result.cells if c.target == "gpu"]))
    return result


def compute_claims(df: pd.DataFrame, cells: list[CellResult], claims: tuple[Claim, ...] = CLAIMS,
                   alpha: float = ALPHA) -> list[ClaimResult]:
    df = annotate(df)        # every variant's unit variance, once for all claims
    return [compute_claim(c, df, cells, alpha) for c in claims]
