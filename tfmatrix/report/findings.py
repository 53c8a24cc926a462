"""The seeds' questions answered from the data, and the headline charts.

Everything in the report that depends on benchmark or parameter names is in
the two tables at the top of this module, ``FINDINGS`` and ``CHARTS``: when
the catalogue changes (``python -m suite list`` shows the parameter names in
each variant id), adjust them here and nowhere else.

A finding compares two sides, ``a`` and ``b``, picked by parameter values
(and, for ``scope="cells"``, by TF major version). Variants are paired when
every other parameter is equal (same benchmark, same model, same data, ...):
within one cell (``scope="cell"``), or between a cell of ``a_tf`` and the
newest cell of ``b_tf`` with the same target (``scope="cells"``). Each pair
gives one line: the time ratio ``median(a) / median(b)`` with a 95%
bootstrap confidence interval from the raw samples, and seed 000's signed
"% faster" (positive when ``a`` is faster). Where a cell has no pair, the
finding says why (the side's n/a reason, or that it did not run there).
"""
from __future__ import annotations

import dataclasses
import fnmatch
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd

from .frame import param_text
from .load import Cell
from .stats import RatioCI, paired_ratio_ci, pct_faster, ratio_ci, same_windows

ParamSpec = Mapping[str, "str | tuple[str, ...]"]


def _p(**params: str | tuple[str, ...]) -> ParamSpec:
    return MappingProxyType(dict(params))


@dataclass(frozen=True)
class Compare:
    """Where a finding looks: benchmarks (globs) and the parameter values that make each side."""

    benchmarks: tuple[str, ...]
    a: ParamSpec
    b: ParamSpec


@dataclass(frozen=True)
class Finding:
    key: str
    seed: str
    question: str
    a: str                              # side labels; the ratio is time(a) / time(b)
    b: str
    compare: tuple[Compare, ...]
    scope: str = "cell"                 # "cell": a and b in one cell; "cells": a and b in different cells
    a_tf: int | None = None             # scope "cells": TF major version of each side's cells
    b_tf: int | None = None
    note: str = ""


@dataclass(frozen=True)
class Chart:
    """A headline chart: median time against TF version for the variants matching ``fixed``.

    One line per combination of the remaining parameters that vary (api,
    mode, stage, ...); CPU and GPU cells in side-by-side panels.
    """

    key: str
    title: str
    benchmark: str                      # a glob
    fixed: ParamSpec = field(default_factory=lambda: _p())


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

# ---------------------------------------------------------------------------


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


@dataclass
class Comparison:
    """One line of a finding: one configuration, one cell (or cell pair)."""

    benchmark: str
    config: str                # the parameters both sides share
    a_detail: str              # the side's own parameter values where the spec allows several
    b_detail: str
    cell_a: Cell
    cell_b: Cell
    median_a: float
    median_b: float
    ci: RatioCI
    unstable: bool
    a_id: str = ""             # the variant ids, for links to their cross-version table rows
    b_id: str = ""

    @property
    def pct(self) -> float:
        return pct_faster(self.ci.ratio)

    @property
    def pct_low(self) -> float:          # the % interval, from the ratio interval's ends
        return pct_faster(self.ci.high)

    @property
    def pct_high(self) -> float:
        return pct_faster(self.ci.low)

    @property
    def group(self) -> str:
        if self.cell_a is self.cell_b:
            return self.cell_a.name
        return f"{self.cell_a.name} vs {self.cell_b.name}"


@dataclass
class GroupSummary:
    """A finding's answer for one cell (or cell pair): counts and the median ratio."""

    group: str
    target: str
    n: int
    a_faster: int
    b_faster: int
    unclear: int
    median_ratio: float
    min_ratio: float
    max_ratio: float


@dataclass
class FindingResult:
    finding: Finding
    comparisons: list[Comparison]
    notes: list[str]

    @property
    def groups(self) -> list[GroupSummary]:
        by: dict[str, list[Comparison]] = {}
        for c in self.comparisons:
            by.setdefault(c.group, []).append(c)
        out = []
        for group, comps in by.items():
            ratios = sorted(c.ci.ratio for c in comps)
            verdicts = Counter(c.ci.verdict for c in comps)
            out.append(GroupSummary(group, comps[0].cell_a.target, len(comps), verdicts["a"], verdicts["b"],
                                    verdicts["unclear"], float(pd.Series(ratios).median()), ratios[0], ratios[-1]))
        return out


Row = Any      # a frame row (pandas Series) or any mapping with the frame's columns


def _key(row: Row, drop: set[str]) -> tuple[Any, ...]:
    params = row["params"]
    return (row["benchmark"],) + tuple(sorted((k, param_text(v)) for k, v in params.items() if k not in drop))


def _config_text(row: Row, drop: set[str]) -> str:
    return ", ".join(f"{k}={param_text(v)}" for k, v in row["params"].items() if k not in drop)


def _detail(row: Row, spec: ParamSpec) -> str:
    return ", ".join(f"{k}={param_text(row['params'][k])}" for k, v in spec.items() if isinstance(v, tuple))


def _first_line(text: Any) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0][:300] if lines else ""


def _why(row: Row | None, side: str) -> str:
    if row is None:
        return f"no {side} counterpart ran"
    return f"{side} {row['status']}: {_first_line(row['reason']) or 'no reason given'}"


def compute(finding: Finding, df: pd.DataFrame, cells: list[Cell]) -> FindingResult:
    result = FindingResult(finding, [], [])
    globs = tuple(g for cmp in finding.compare for g in cmp.benchmarks)
    relevant = df[[in_benchmarks(b, globs) for b in df["benchmark"]]] if len(df) else df
    if not len(relevant):
        have = sorted(set(df["benchmark"])) if len(df) else []
        known = f" (benchmarks in this report: {', '.join(have)})" if have else ""
        result.notes.append(f"No cell has results for {', '.join(globs)}{known}: this finding cannot be answered yet.")
        return result
    without = [c for c in cells if c.name not in set(relevant["cell"])]
    if without:
        listed = ", ".join(f"{c.name} ({c.status if c.status != 'ok' else 'not in its selection'})" for c in without)
        result.notes.append(f"No results for {', '.join(globs)} in: {listed}.")
    for cmp in finding.compare:
        rows = relevant[[in_benchmarks(b, cmp.benchmarks) for b in relevant["benchmark"]]]
        if not len(rows):
            continue
        if finding.scope == "cells":
            _compare_cells(finding, cmp, rows, cells, result)
        else:
            _compare_within(finding, cmp, rows, cells, result)
    if not result.comparisons and not result.notes:
        result.notes.append("Nothing to compare.")
    return result


def _pair(finding: Finding, cmp: Compare, a_rows: pd.DataFrame, b_rows: pd.DataFrame, cell_a: Cell, cell_b: Cell,
          result: FindingResult) -> Counter[str]:
    """Pair ``a_rows`` with ``b_rows`` on their shared parameters; why the others could not be paired."""
    drop = set(cmp.a) | set(cmp.b)
    b_by_key: dict[tuple[Any, ...], list[Row]] = {}
    for _, row in b_rows.iterrows():
        b_by_key.setdefault(_key(row, drop), []).append(row)
    missing: Counter[str] = Counter()
    for _, ra in a_rows.iterrows():
        partners = b_by_key.get(_key(ra, drop)) or [None]
        if ra["status"] != "ok":
            missing[_why(ra, finding.a)] += 1
            continue
        for rb in partners:          # several when side b allows several values (jit_compile=false|none)
            if rb is None or rb["status"] != "ok":
                missing[_why(rb, finding.b)] += 1
                continue
            key = "|".join([finding.key, cell_a.name, cell_b.name, str(ra["id"]), str(rb["id"])])
            ci = comparison_ci(ra, rb, key)
            if ci is None:
                missing["no positive median"] += 1
                continue
            result.comparisons.append(Comparison(
                benchmark=str(ra["benchmark"]), config=_config_text(ra, drop), a_detail=_detail(ra, cmp.a),
                b_detail=_detail(rb, cmp.b), cell_a=cell_a, cell_b=cell_b, median_a=float(ra["median"]),
                median_b=float(rb["median"]), ci=ci, unstable=bool(ra["unstable"]) or bool(rb["unstable"]),
                a_id=str(ra["id"]), b_id=str(rb["id"])))
    return missing


def comparison_ci(ra: Row, rb: Row, key: str) -> RatioCI | None:
    """Time ratio a/b of two frame rows: paired round by round when they were sampled in the same windows.

    When the frame carries the previous run's samples of both rows
    (``frame.attach_previous``), the same ratio is computed from them and
    how far it moved between the runs joins the noise a verdict must beat.
    """
    ci = _ratio(ra["per_process"] or [ra["samples"]], rb["per_process"] or [rb["samples"]], ra["windows"],
                rb["windows"], key)
    prev_a, prev_b = _get(ra, "prev_per_process"), _get(rb, "prev_per_process")
    if ci is None or not prev_a or not prev_b:
        return ci
    before = _ratio(prev_a, prev_b, _get(ra, "prev_windows") or [], _get(rb, "prev_windows") or [], key)
    if before is None:
        return ci
    moved = max(ci.ratio, before.ratio) / min(ci.ratio, before.ratio) - 1.0
    return dataclasses.replace(ci, noise=max(ci.noise, moved), rerun=before.ratio)


def _ratio(a: Any, b: Any, wa: Any, wb: Any, key: str) -> RatioCI | None:
    if same_windows(wa, wb):
        return paired_ratio_ci(a, b, key=key)
    return ratio_ci(a, b, key=key)


def _get(row: Row, column: str) -> Any:
    value = row.get(column) if hasattr(row, "get") else None
    return value if isinstance(value, list) else None


def _side_missing(label: str, spec: ParamSpec, rows: pd.DataFrame, where: tuple[str, ...]) -> str | None:
    """Why a side has no usable rows in a cell, or None when it has some."""
    if not len(rows):
        return f"no {label} variant ({spec_text(spec) or 'any'}) in its {', '.join(where)} results"
    if (rows["status"] == "ok").any():
        return None
    reasons = Counter(f"{r['status']}: {_first_line(r['reason'])}" for _, r in rows.iterrows())
    return f"{label} is " + "; ".join(r for r, _ in reasons.most_common(2))


def _note_missing(cell_text: str, missing: Counter[str], paired: int, result: FindingResult) -> None:
    if not missing:
        return
    total = sum(missing.values())
    reasons = "; ".join(f"{r} ({n})" for r, n in missing.most_common(3))
    if len(missing) > 3:
        reasons += f"; and {len(missing) - 3} more"
    if paired:
        result.notes.append(f"{cell_text}: {total} configuration{'s' * (total != 1)} not compared: {reasons}.")
    else:
        result.notes.append(f"{cell_text}: nothing to compare: {reasons}.")


def _compare_within(finding: Finding, cmp: Compare, rows: pd.DataFrame, cells: list[Cell],
                    result: FindingResult) -> None:
    for cell in cells:
        mine = rows[rows["cell"] == cell.name]
        if not len(mine):
            continue
        a_rows = mine[[matches(p, cmp.a) for p in mine["params"]]]
        b_rows = mine[[matches(p, cmp.b) for p in mine["params"]]]
        why = [w for w in (_side_missing(finding.a, cmp.a, a_rows, cmp.benchmarks),
                           _side_missing(finding.b, cmp.b, b_rows, cmp.benchmarks)) if w]
        if why:
            result.notes.append(f"{cell.name}: nothing to compare: {'; '.join(why)}.")
            continue
        before = len(result.comparisons)
        missing = _pair(finding, cmp, a_rows, b_rows, cell, cell, result)
        _note_missing(cell.name, missing, len(result.comparisons) - before, result)


def _compare_cells(finding: Finding, cmp: Compare, rows: pd.DataFrame, cells: list[Cell],
                   result: FindingResult) -> None:
    with_rows = [c for c in cells if c.name in set(rows["cell"])]
    for target in sorted({c.target for c in with_rows}, key=lambda t: (t != "cpu", t)):
        here = [c for c in with_rows if c.target == target]
        a_cells = [c for c in here if finding.a_tf is None or c.tf_major == finding.a_tf]
        b_cells = [c for c in here if finding.b_tf is None or c.tf_major == finding.b_tf]
        if not a_cells or not b_cells:
            lacking = finding.a if not a_cells else finding.b
            listed = f" (cells: {', '.join(c.name for c in here)})" if here else ""
            result.notes.append(f"{target.upper()} cells: no {lacking} cell with results for "
                                f"{', '.join(cmp.benchmarks)}, so nothing to compare{listed}.")
            continue
        ref = b_cells[-1]          # the newest cell of side b
        in_ref = rows["cell"] == ref.name
        b_rows = rows[in_ref & pd.Series([matches(p, cmp.b) for p in rows["params"]], index=rows.index)]
        for cell in a_cells:
            if cell is ref:
                continue
            mine = rows[rows["cell"] == cell.name]
            a_rows = mine[[matches(p, cmp.a) for p in mine["params"]]]
            text = f"{cell.name} vs {ref.name}"
            why = [w for w in (_side_missing(finding.a, cmp.a, a_rows, cmp.benchmarks),
                               _side_missing(finding.b, cmp.b, b_rows, cmp.benchmarks)) if w]
            if why:
                result.notes.append(f"{text}: nothing to compare: {'; '.join(why)}.")
                continue
            before = len(result.comparisons)
            missing = _pair(finding, cmp, a_rows, b_rows, cell, ref, result)
            _note_missing(text, missing, len(result.comparisons) - before, result)
        if len(b_cells) > 1:
            older = ", ".join(c.name for c in b_cells[:-1])
            result.notes.append(f"{target.upper()} cells: {finding.a} is compared with {ref.name}, the newest "
                                f"{finding.b} cell; {older} appear{'s' * (len(b_cells) == 2)} in the tables.")


def compute_all(df: pd.DataFrame, cells: list[Cell], findings: tuple[Finding, ...] = FINDINGS) -> list[FindingResult]:
    return [compute(f, df, cells) for f in findings]


# -- charts -----------------------------------------------------------------------

@dataclass
class Point:
    cell: Cell
    median: float
    q1: float
    q3: float
    unstable: bool


@dataclass
class Series:
    label: str
    points: list[Point]


@dataclass
class ChartData:
    chart: Chart
    benchmarks: list[str]
    panels: dict[str, tuple[list[Cell], list[Series]]]   # target -> (x cells, series)
    absent: dict[str, list[Cell]] = field(default_factory=dict)   # target -> cells without these results


def chart_data(chart: Chart, df: pd.DataFrame, cells: list[Cell]) -> ChartData | None:
    """The points of one headline chart; None when no cell has matching results."""
    if not len(df):
        return None
    rows = df[[fnmatch.fnmatchcase(b, chart.benchmark) and matches(p, chart.fixed)
               for b, p in zip(df["benchmark"], df["params"], strict=True)]]
    if not len(rows):
        return None
    fixed = set(chart.fixed)
    varying = []
    names: list[str] = []
    for p in rows["params"]:
        for k in p:
            if k not in fixed and k not in names:
                names.append(k)
    for k in names:
        if len({param_text(p.get(k)) for p in rows["params"]}) > 1:
            varying.append(k)
    multi_bench = rows["benchmark"].nunique() > 1
    by_cell = {c.name: c for c in cells}
    panels: dict[str, tuple[list[Cell], list[Series]]] = {}
    for target in ("cpu", "gpu"):
        here = rows[rows["target"] == target]
        xs = [c for c in cells if c.name in set(here["cell"])]
        series: dict[str, list[Point]] = {}
        for _, r in here.iterrows():
            label = ", ".join(([r["benchmark"]] if multi_bench else [])
                              + [f"{k}={param_text(r['params'].get(k))}" for k in varying]) or "median"
            pts = series.setdefault(label, [])
            if r["status"] == "ok" and r["median"] is not None:
                pts.append(Point(by_cell[r["cell"]], float(r["median"]), float(r["q1"]), float(r["q3"]),
                                 bool(r["unstable"])))
        panels[target] = (xs, [Series(k, v) for k, v in series.items() if v])
    absent = {t: [c for c in cells if c.target == t and c.name not in set(rows["cell"])] for t in ("cpu", "gpu")}
    return ChartData(chart, sorted(set(rows["benchmark"])), panels, absent)
