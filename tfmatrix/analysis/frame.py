"""The tidy table: one row per cell x variant, cell metadata and statistics as columns.

Statistics are recomputed here from each record's raw samples (median,
quartiles, IQR), not copied from its summary, and never derived from a mean.
Parameters become columns under their own names (``model``, ``loop``,
``input``, ...); one that would clash with a metadata column gets a
``param_`` prefix. ``params`` (a dict), ``samples`` and ``per_process``
(lists) are object columns for the claims; ``results.csv``
(``report.tables.results_csv``) writes them as JSON.
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from suite.schema import param_text  # the variant-id text, one copy for both halves

from .cells import CellResult
from .statistics.inference import Side, side_of
from .statistics.stats import estimate, spread
from .variant import Variant

CELL_COLUMNS = ["cell", "cell_status", "order", "tf", "tf_installed", "keras_flavour", "keras_version", "python",
                "target", "runner", "preset"]
RECORD_COLUMNS = ["benchmark", "id", "variant", "seed", "title", "mode", "api", "keras_used", "status", "outside",
                  "reason", "unit", "time", "pooled_p10", "median", "q1", "q3", "iqr", "min", "max", "n", "cv",
                  "unstable", "processes", "between_cv", "build_s", "first_call_s", "peak_rss_mb", "wall_s"]
OBJECT_COLUMNS = ["params", "samples", "per_process", "windows", "rounds"]
RESERVED = set(CELL_COLUMNS) | set(RECORD_COLUMNS) | set(OBJECT_COLUMNS)


def param_column(name: str) -> str:
    return "param_" + name if name in RESERVED or name.startswith(("extra_", "figure_")) else name


def _median(values: Any) -> float | None:
    vals = [float(v) for v in (values or []) if isinstance(v, (int, float)) and math.isfinite(float(v))]
    if not vals:
        return None
    s = spread(vals)
    return s.median if s else None


def round_tags(cell: CellResult, variant: Variant) -> list[str]:
    """Which round of which interleaved run each process of ``variant`` ran in; [] outside an interleaved run."""
    schedule = (cell.results.config.get("schedule") if cell.results else None) or {}
    run = schedule.get("run") if isinstance(schedule, dict) else None
    if not run or len(variant.passes) != len(variant.per_process):
        return []
    return ["%s#%s" % (run, p) for p in variant.passes]


def record_row(cell: CellResult, v: Variant) -> dict[str, Any]:
    params = dict(v.params)
    samples = list(v.samples)
    per_process = [list(p) for p in v.per_process] or ([samples] if samples else [])
    status = v.status or "error"
    sp = spread(samples) if status == "ok" else None
    row: dict[str, Any] = {
        "cell": cell.name, "cell_status": cell.status, "order": cell.order, "tf": cell.tf if cell.has_tf else "-",
        "tf_installed": cell.tf_installed, "keras_flavour": cell.keras_flavour, "keras_version": cell.keras_version,
        "python": cell.python, "target": cell.target, "runner": cell.runner, "preset": cell.preset,
        "benchmark": v.benchmark,
        "id": v.id,
        "variant": v.variant,
        "seed": v.seed,
        "title": v.title,
        "mode": v.mode,
        "api": v.api,
        "keras_used": v.keras_used,
        "status": status,
        "outside": v.outside,       # n/a as another framework's variant: not in the cell's catalogue, never run
        "reason": v.reason,
        "unit": v.unit,
        "time": None,       # below: the numbers every ratio is made of
        "pooled_p10": estimate(samples) if sp else None,      # the 10th percentile of all samples pooled
        "median": sp.median if sp else None,
        "q1": sp.q1 if sp else None,
        "q3": sp.q3 if sp else None,
        "iqr": sp.iqr if sp else None,
        "min": sp.minimum if sp else None,
        "max": sp.maximum if sp else None,
        "n": sp.n if sp else 0,
        "cv": v.cv if sp else None,
        "unstable": v.unstable if sp else False,
        "processes": len(per_process),
        "between_cv": v.between_cv,
        "build_s": _median(v.build_s),
        "first_call_s": _median(v.first_call_s),
        "peak_rss_mb": v.peak_rss_mb,
        "wall_s": v.wall_s,
        "params": params,
        "samples": samples,
        "per_process": per_process,
        # per process, the window it was sampled in; two rows with equal windows pair up sample by sample
        "windows": list(v.windows),
        # per process, "<run>#<round>" of an interleaved run: two cells' rows pair up round by round
        "rounds": round_tags(cell, v),
    }
    for name, value in params.items():
        if name in ("mode", "api"):
            continue
        row[param_column(name)] = param_text(value)
    for name, value in v.extra.items():
        if isinstance(value, (int, float, str, bool)) or value is None:
            row["extra_" + name] = value
    for name, figure in v.figures.items():       # its unit is in its name (compile_s, drift_pct_per_100_steps)
        row["figure_" + name] = figure.median
    if sp:      # the report's time: per round the 10th percentile (stats.ESTIMATOR), their geometric mean, read
        side = row_side(row, cell.name)     # as every ratio reads the row
        row["time"] = math.exp(side.mean) if side.n else row["pooled_p10"]
    return row


def results_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows that are results of their cells: without the variants of frameworks a cell does not have
    (``Variant.outside``: no record, only why, kept in the frame for the claims' reasons)."""
    return df[~df["outside"].astype(bool)] if len(df) else df


def build_frame(cells: list[CellResult]) -> pd.DataFrame:
    """One row per cell x variant, cells in report order, variants in catalogue order."""
    rows = [record_row(c, v) for c in cells for v in c.variants]
    if not rows:
        return pd.DataFrame(columns=CELL_COLUMNS + RECORD_COLUMNS + OBJECT_COLUMNS)
    df = pd.DataFrame(rows)
    fixed = CELL_COLUMNS + RECORD_COLUMNS
    params = [c for c in df.columns
              if c not in fixed and c not in OBJECT_COLUMNS and not c.startswith(("extra_", "figure_"))]
    extras = sorted(c for c in df.columns if c.startswith("extra_")) + sorted(
        c for c in df.columns if c.startswith("figure_"))
    head = ["benchmark", "id", "variant", "seed", "title"]
    return df[CELL_COLUMNS + head + params + [c for c in RECORD_COLUMNS if c not in head]
              + extras + OBJECT_COLUMNS]


def attach_previous(df: pd.DataFrame, previous: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the previous run's raw samples of each ok row beside it (``prev_per_process``, ``prev_windows``).

    The claims compute every line from both runs and count how far it
    moved (``pairing.comparison_cis``: shown beside it, as ``rerun``). Rows without an ok
    counterpart get None.
    """
    if not len(df):
        return df
    ok = previous[previous["status"] == "ok"] if len(previous) else previous
    by_key = {(r["cell"], r["id"]): r for _, r in ok.iterrows()} if len(ok) else {}
    out = df.copy()
    prev_pp, prev_w = [], []
    for cell, rid, status in zip(df["cell"], df["id"], df["status"], strict=True):
        row = by_key.get((cell, rid)) if status == "ok" else None
        prev_pp.append(row["per_process"] if row is not None else None)
        prev_w.append(row["windows"] if row is not None else None)
    out["prev_per_process"] = prev_pp
    out["prev_windows"] = prev_w
    return out


def row_side(row: Any, label: str, by_window: bool = False) -> Side:
    """A frame row's measurements as ``inference`` reads them: one unit per round, each process named.

    Units pair with the other side's by round tag (two cells of one
    interleaved run); ``by_window``: by the window they were sampled in
    (window-mates of one cell, measured in the same processes). ``label``
    names this side's untagged units and its processes (process ids repeat
    across containers: the label and the round keep them apart).
    """
    per_process = list(row["per_process"] or ([row["samples"]] if row["samples"] else []))
    rounds = [str(r) for r in (row.get("rounds") or [])] if hasattr(row, "get") else []
    windows = [str(w) if w is not None else "" for w in (row["windows"] or [])]
    n = len(per_process)
    rounds = rounds if len(rounds) == n else []
    windows = windows if len(windows) == n else []
    keys = [f"{row['cell']}|w:{w}" for w in windows] if by_window and windows else rounds
    processes = [f"{label}|{rounds[i] if rounds else i}|{windows[i].split(':')[0]}" if windows and windows[i] else ""
                 for i in range(n)]
    return side_of(per_process, keys, processes, label)
