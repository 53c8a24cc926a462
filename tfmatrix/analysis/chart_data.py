"""The headline charts: ``Chart``, the ``CHARTS`` table made of it (data only), and the points drawn for each.

``chart_data`` picks a chart's rows out of the frame; ``report/charts.py``
turns the result into SVG. Like the claims files, ``CHARTS`` names
benchmarks and parameters of the catalogue (``tests/test_contracts.py``
checks them).
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

import pandas as pd

from suite.schema import param_text

from .cells import CellResult
from .claims.specs import ParamSpec, matches, param_spec


@dataclass(frozen=True)
class Chart:
    """A headline chart: median time against TF version for the variants matching ``fixed``.

    One line per combination of the remaining parameters that vary (api,
    mode, stage, ...); CPU and GPU cells in side-by-side panels.
    """

    key: str
    title: str
    benchmark: str                      # a glob
    fixed: ParamSpec = field(default_factory=lambda: param_spec())


CHARTS: tuple[Chart, ...] = (
    Chart("question_small", "Seed 000 question: small model (Conv1D + Flatten), train_on_batch, numpy",
          "training.question", param_spec(model="small", loop="train_on_batch", input="numpy")),
    Chart("question_medium", "Seed 000 question: medium model (BiLSTM + LSTM), train_on_batch, numpy",
          "training.question", param_spec(model="medium", loop="train_on_batch", input="numpy")),
    Chart("answer_small_fit", "Seed 000 answer: small model, small data, fit, numpy",
          "training.answer", param_spec(model="small", data="small", loop="fit", input="numpy")),
    Chart("answer_large_fit", "Seed 000 answer: large model, medium data, fit, numpy",
          "training.answer", param_spec(model="large", loop="fit", input="numpy")),
    Chart("input_pipelines", "Seed 000: fit() fed by numpy vs tf.data vs a generator vs a Sequence, tf.keras, eager",
          "input_pipelines.fit", param_spec(api="tf.keras", mode="eager")),
    Chart("tiny_predict", "Seed 001 tiny model: predict() before/after compile, tf.keras",
          "inference.tiny", param_spec(path="predict", api="tf.keras")),
    Chart("tiny_paths", "Seed 001 tiny model, compiled, eager: predict vs model(x) vs tf.function, tf.keras",
          "inference.tiny", param_spec(stage="compiled", api="tf.keras", mode="eager")),
    Chart("matmul", "Seed 002: np.dot vs tf.matmul (api=backend: jax.numpy/torch matmul on JAX and PyTorch cells)",
          "tensor_ops.matmul"),
    Chart("xla", "Seed 003: MobileNetV2 forward pass: eager vs tf.function vs XLA", "graphs.xla",
          param_spec(model="mobilenetv2")),
    Chart("power", "Seed 004: power(x, 100): eager vs tf.function vs a Session (api=backend: eager vs jax.jit or "
          "torch.compile on JAX and PyTorch cells)", "graphs.power"),
)


@dataclass
class Point:
    cell: CellResult
    time: float        # the report's time (stats.ESTIMATOR)
    low: float         # the fastest repeat
    high: float        # the median repeat
    unstable: bool


@dataclass
class Series:
    label: str
    points: list[Point]


@dataclass
class ChartData:
    chart: Chart
    benchmarks: list[str]
    panels: dict[str, tuple[list[CellResult], list[Series]]]   # target -> (x cells, series)
    absent: dict[str, list[CellResult]] = field(default_factory=dict)   # target -> cells without these results


def chart_data(chart: Chart, df: pd.DataFrame, cells: list[CellResult]) -> ChartData | None:
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
    panels: dict[str, tuple[list[CellResult], list[Series]]] = {}
    for target in ("cpu", "gpu"):
        here = rows[rows["target"] == target]
        xs = [c for c in cells if c.name in set(here["cell"])]
        series: dict[str, list[Point]] = {}
        for _, r in here.iterrows():
            label = ", ".join(([r["benchmark"]] if multi_bench else [])
                              + [f"{k}={param_text(r['params'].get(k))}" for k in varying]) or "median"
            pts = series.setdefault(label, [])
            if r["status"] == "ok" and r["time"] is not None:
                pts.append(Point(by_cell[r["cell"]], float(r["time"]), float(r["min"]), float(r["median"]),
                                 bool(r["unstable"])))
        panels[target] = (xs, [Series(k, v) for k, v in series.items() if v])
    absent = {t: [c for c in cells if c.target == t and c.name not in set(rows["cell"])] for t in ("cpu", "gpu")}
    return ChartData(chart, sorted(set(rows["benchmark"])), panels, absent)
