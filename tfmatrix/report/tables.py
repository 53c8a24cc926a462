"""Cross-version tables: per benchmark, rows are variants and columns are cells in TF order.

Each value is the report's time for a variant (per round the 10th percentile
of its raw samples, ``stats.ESTIMATOR``; the geometric mean over its rounds:
the numbers every ratio is made of) with the median below it, coloured by its
ratio to the baseline cell's time for the same variant. The baseline is
the cell named by the user for every column, or by default the oldest cell
of the column's target (CPU columns against the oldest CPU cell, GPU columns
against the oldest GPU cell, so the colours compare versions, not devices).
Where the default baseline lacks a variant, the oldest cell of that target
that has it stands in, and the table marks it. ``results_csv``: the whole
frame, one row per cell x variant, as ``results.csv``.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from suite.schema import param_text

from ..analysis.cells import CellResult
from ..analysis.frame import OBJECT_COLUMNS
from ..analysis.statistics.inference import RatioCI
from ..errors import UserError
from ..results.csv_files import frame_csv


@dataclass
class Baselines:
    explicit: CellResult | None                  # the user's choice, for every column
    by_target: dict[str, CellResult]             # the default: oldest cell with results, per target
    note: str | None = None                      # why a preferred baseline was passed over

    def for_target(self, target: str) -> CellResult | None:
        return self.explicit or self.by_target.get(target)

    def describe(self) -> str:
        if self.explicit:
            return f"{self.explicit.name} (chosen)"
        return "; ".join(f"{t.upper()}: {c.name} (oldest)" for t, c in sorted(self.by_target.items()))


def resolve_baselines(cells: list[CellResult], baseline: str | None, source: str = "baseline",
                      fallback: bool = False) -> Baselines:
    """The baseline rule, in one place: the named cell when it has results, else the oldest cell per target.

    A baseline the user named (``--baseline``) must exist and have results, or
    it is an error naming ``source``; with ``fallback`` (``matrix.toml``'s
    baseline, which may not have run yet) the default stands in and ``note``
    says so.
    """
    note = None
    if baseline:
        named = [c for c in cells if c.name == baseline]
        if named and named[0].has_records:
            return Baselines(named[0], {})
        if fallback:
            note = f"baseline {baseline} has no results yet: the report compares with the oldest cell"
        elif not named:
            names = ", ".join(c.name for c in cells) or "none"
            raise UserError(f"{source} {baseline!r}: no such cell in the results; cells are: {names}")
        else:
            raise UserError(f"{source} {baseline!r}: that cell has no results (status {named[0].status}); "
                            "pick a cell that ran")
    by_target: dict[str, CellResult] = {}
    for c in cells:
        if c.has_records:
            by_target.setdefault(c.target, c)
    return Baselines(None, by_target, note)


def fmt_seconds(s: float | None) -> str:
    if s is None or not isinstance(s, (int, float)) or math.isnan(s):
        return ""
    if s == 0:
        return "0 s"
    rounded = float(f"{s:.3g}")       # the unit is chosen after rounding: 0.0009996 s is "1 ms", not "1e+03 µs"
    if abs(rounded) >= 1000:
        return f"{s:.0f} s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(rounded) >= scale:
            return f"{rounded / scale:.3g} {unit}"
    return f"{rounded / 1e-9:.3g} ns"


def fmt_interval(ci: RatioCI, sep: str = "–", spec: str = ".3g") -> str:
    """A ratio's 95% interval as text, or why it has none (one process a side: nothing replicates it)."""
    if not ci.replicated:
        return "no interval (one process a side)"
    return f"{ci.low:{spec}}{sep}{ci.high:{spec}}"


def fmt_change(ratio: float) -> str:
    """A time ratio as a change: +12% (slower) / −8% (faster), the candidate's (or B's) time against the other's."""
    return f"{(ratio - 1.0) * 100:+.0f}%".replace("-", "−")


def ratio_colour(ratio: float) -> str:
    """Green when faster than the baseline, red when slower; stronger up to 4x either way."""
    strength = min(abs(math.log2(ratio)) / 2.0, 1.0) if ratio > 0 else 0.0
    hue = 130 if ratio < 1 else 0
    light = 97 - 27 * strength
    return f"hsl({hue}, 70%, {light:.0f}%)"


@dataclass
class Value:
    status: str                 # ok | n/a | error | timeout | missing | outside (another framework's variant)
    text: str = ""
    spread: str = ""
    ratio: float | None = None
    colour: str = ""
    title: str = ""
    sort: float | None = None
    unstable: bool = False
    baseline: bool = False      # this value is its row's baseline
    stand_in: bool = False      # ... standing in for a baseline cell that lacks the variant


def row_anchor(variant_id: str) -> str:
    """The HTML id of a variant's cross-version table row: the claims link to it.

    Variant ids hold brackets, commas and '=' (valid in an id, awkward in a
    URL fragment), so everything but letters, digits, '.', '_' and '-'
    becomes '_'; the ids stay readable and distinct.
    """
    return "row-" + re.sub(r"[^A-Za-z0-9._-]+", "_", variant_id)


@dataclass
class Row:
    id: str
    params: list[str]
    values: list[Value]

    @property
    def anchor(self) -> str:
        return row_anchor(self.id)


@dataclass
class BenchTable:
    benchmark: str
    title: str
    seed: str
    constant: str               # parameters with one value across the table
    param_names: list[str]
    columns: list[CellResult]
    rows: list[Row] = field(default_factory=list)

    @property
    def targets(self) -> list[str]:
        return sorted({c.target for c in self.columns})


def _value(row: Any | None) -> Value:
    if row is None:
        return Value("missing", "", title="not run in this cell")
    status = row["status"]
    if bool(row.get("outside", False)):
        return Value("outside", "–", title=f"not in this cell's catalogue: {row['reason']}")
    if status != "ok":
        reason = str(row["reason"] or "").strip()
        return Value(status, status, title=reason.splitlines()[0][:500] if reason else status)
    time, med, q1, q3 = float(row["time"]), float(row["median"]), float(row["q1"]), float(row["q3"])
    title = (f"time (10th percentile a round, geometric mean) {fmt_seconds(time)}, pooled 10th percentile "
             f"{fmt_seconds(float(row['pooled_p10']))}, fastest {fmt_seconds(float(row['min']))}, median "
             f"{fmt_seconds(med)}, IQR {fmt_seconds(q3 - q1)} (q1 {fmt_seconds(q1)}, q3 {fmt_seconds(q3)}), "
             f"n={int(row['n'])}")
    if row["processes"] and int(row["processes"]) > 1 and row["between_cv"] is not None:
        title += f", {int(row['processes'])} processes (CV between them {100 * float(row['between_cv']):.1f}%)"
    if row["cv"] is not None and not pd.isna(row["cv"]):
        title += f", CV {100 * float(row['cv']):.1f}%"
    if row["unstable"]:
        title += "; UNSTABLE: the spread is too large to trust small differences"
    return Value("ok", fmt_seconds(time), "median " + fmt_seconds(med), title=title, sort=time,
                 unstable=bool(row["unstable"]))


def build_tables(df: pd.DataFrame, cells: list[CellResult], baselines: Baselines) -> list[BenchTable]:
    tables: list[BenchTable] = []
    if not len(df):
        return tables
    for bench in list(dict.fromkeys(df["benchmark"])):
        rows = df[df["benchmark"] == bench]
        columns = [c for c in cells if c.name in set(rows["cell"])]
        ids = list(dict.fromkeys(rows["id"]))
        first = rows.drop_duplicates("id").set_index("id")
        names: list[str] = []
        for p in first["params"]:
            for k in p:
                if k not in names:
                    names.append(k)
        values_of = {k: [param_text(p.get(k, "")) for p in first["params"]] for k in names}
        varying = [k for k in names if len(set(values_of[k])) > 1]
        constant = ", ".join(f"{k}={values_of[k][0]}" for k in names if k not in varying)
        table = BenchTable(bench, str(first["title"].iloc[0] if "title" in first else ""), str(first["seed"].iloc[0]),
                           constant, varying, columns)
        lookup = {(r["cell"], r["id"]): r for _, r in rows.iterrows()}
        for vid in ids:
            params = first.loc[vid, "params"]
            vals = [_value(lookup.get((c.name, vid))) for c in columns]
            _colour(vals, columns, baselines)
            table.rows.append(Row(vid, [param_text(params.get(k, "")) for k in varying], vals))
        tables.append(table)
    return tables


def _colour(vals: list[Value], columns: list[CellResult], baselines: Baselines) -> None:
    """Ratios against each column's baseline for this row (with a stand-in when the default lacks it)."""
    base_for: dict[str, int | None] = {}
    for target in {c.target for c in columns}:
        chosen = baselines.for_target(target)
        idx = next((i for i, c in enumerate(columns) if chosen is not None and c.name == chosen.name), None)
        if idx is not None and vals[idx].status == "ok":
            base_for[target] = idx
        elif baselines.explicit is None:
            idx = next((i for i, c in enumerate(columns) if c.target == target and vals[i].status == "ok"), None)
            if idx is not None:
                vals[idx].stand_in = True
            base_for[target] = idx
        else:
            base_for[target] = None
    for i, (v, c) in enumerate(zip(vals, columns, strict=True)):
        b = base_for[c.target]
        if v.status != "ok" or v.sort is None:
            continue
        base = vals[b].sort if b is not None else None
        if b is None or not base:
            v.title += "; no baseline value for this variant"
            continue
        v.ratio = v.sort / base
        if i == b:
            v.baseline = True
            v.title += "; the baseline for this row" + (
                " (standing in: the baseline cell lacks this variant)" if v.stand_in else "")
        else:
            v.colour = ratio_colour(v.ratio)
            v.title += f"; {v.ratio:.2f}x the baseline ({columns[b].name})"


def results_csv(df: pd.DataFrame) -> str:
    """``results.csv``: the frame with list/dict columns as JSON and full float precision, its text inert in a
    spreadsheet (``results.csv_files.frame_csv``)."""
    out = df.copy()
    for col in OBJECT_COLUMNS:
        if col in out.columns:
            out[col] = [json.dumps(v, separators=(",", ":")) for v in out[col]]
    return frame_csv(out.drop(columns=["order"]), float_format="%.9g")
