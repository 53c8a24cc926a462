"""How a claim's two sides are paired: variants on their shared parameters, one ratio per pair.

A claim's configuration (``specs.Compare``) picks each side's variants by
parameter values, in one cell or in two (side b's in its reference cell).
Variants are paired when every other parameter is equal (same benchmark,
same model, same data, ...). Each pair gives one ``Comparison``: the time
ratio a/b with its 95% interval (``moderation.judge``, the one rule:
window-mates paired process by process, two cells of one interleaved run
round by round, variances moderated across the lines of the same
comparison). What could not be paired is counted by why (the side's n/a reason,
or that it did not run there). ``answers.py`` makes a claim's lines of them.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from suite.schema import param_text

from ..cells import CellResult
from ..frame import row_side
from ..statistics.inference import RatioCI, Side, contrast, ratio_ci
from ..statistics.moderation import Prior, judge
from ..statistics.stats import same_windows
from .specs import Compare, ParamSpec, spec_text


@dataclass
class Comparison:
    """One line of a claim: one configuration, one cell (or cell pair)."""

    benchmark: str
    config: str                # the parameters both sides share
    a_detail: str              # the side's own parameter values where the spec allows several
    b_detail: str
    cell_a: CellResult
    cell_b: CellResult
    time_a: float              # exp(mean per-round log p10) of each side: the numbers its ratio is made of
    time_b: float
    ci: RatioCI
    unstable: bool
    a_id: str = ""             # the variant ids, for links to their cross-version table rows
    b_id: str = ""

    @property
    def group(self) -> str:
        if self.cell_a is self.cell_b:
            return self.cell_a.name
        return f"{self.cell_a.name} vs {self.cell_b.name}"


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


def pair_rows(labels: tuple[str, str], cmp: Compare, a_rows: pd.DataFrame, b_rows: pd.DataFrame,
              cell_a: CellResult, cell_b: CellResult, paired: bool = True) -> tuple[list[Comparison], Counter[str]]:
    """Pair ``a_rows`` with ``b_rows`` on their shared parameters: the lines, and why the others could not be paired
    (``labels``: the sides' names, for those reasons; ``paired``: see ``comparison_cis``).

    The pairs are judged together (``moderation.judge``): each line's
    variance is moderated across the lines of its benchmark here, or, for
    window-mates, towards what their benchmark's variants measured in this
    run (``noise_model.annotate``, when the frame carries it).
    """
    drop = set(cmp.a) | set(cmp.b)
    b_by_key: dict[tuple[Any, ...], list[Row]] = {}
    for _, row in b_rows.iterrows():
        b_by_key.setdefault(_key(row, drop), []).append(row)
    missing: Counter[str] = Counter()
    pairs: list[tuple[Row, Row]] = []
    for _, ra in a_rows.iterrows():
        partners = b_by_key.get(_key(ra, drop)) or [None]
        if ra["status"] != "ok":
            missing[_why(ra, labels[0])] += 1
            continue
        for rb in partners:          # several when side b allows several values (jit_compile=false|none)
            if rb is None or rb["status"] != "ok":
                missing[_why(rb, labels[1])] += 1
                continue
            pairs.append((ra, rb))
    lines: list[Comparison] = []
    for (ra, rb), ci in zip(pairs, comparison_cis(pairs, paired), strict=True):
        if ci is None:
            missing["no positive time"] += 1
            continue
        lines.append(Comparison(
            benchmark=str(ra["benchmark"]), config=_config_text(ra, drop), a_detail=_detail(ra, cmp.a),
            b_detail=_detail(rb, cmp.b), cell_a=cell_a, cell_b=cell_b, time_a=float(ra["time"]),
            time_b=float(rb["time"]), ci=ci, unstable=bool(ra["unstable"]) or bool(rb["unstable"]),
            a_id=str(ra["id"]), b_id=str(rb["id"])))
    return lines, missing


def _window_mates(ra: Row, rb: Row) -> bool:
    return bool(ra["cell"] == rb["cell"] and same_windows(ra["windows"], rb["windows"]))


def _unit_prior(row: Row) -> Prior | None:
    """The row's unit variance as its benchmark's variants measured it (``noise_model.annotate``), if known."""
    s2 = row.get("unit_s2") if hasattr(row, "get") else None
    d = row.get("unit_d") if hasattr(row, "get") else None
    if s2 is None or d is None or not math.isfinite(float(s2)) or not math.isfinite(float(d)):
        return None
    source = row.get("unit_src") if hasattr(row, "get") else None
    return Prior(float(s2), float(d), str(source or "its benchmark in this run"))


def _sides(ra: Row, rb: Row, prefix: str = "") -> tuple[Side, Side]:
    """Window-mates pair process by process; two cells of one interleaved run, round by round."""
    by_window = _window_mates(ra, rb)
    return (row_side(ra, f"{prefix}a|{ra['cell']}", by_window),
            row_side(rb, f"{prefix}b|{rb['cell']}", by_window))


def comparison_cis(pairs: Sequence[tuple[Row, Row]], paired: bool = True) -> list[RatioCI | None]:
    """Time ratio a/b of each pair of frame rows, judged together (variances moderated per benchmark).

    When the frame carries the previous run's samples of both rows
    (``frame.attach_previous``), the same ratio in that run is computed and
    shown beside it (``rerun``); it is not a second test. ``paired=False``:
    each ratio on its own from two independent samples of rounds (no window
    or round pairing, no moderation): what the pairing buys, measured.
    """
    if not paired:      # each row's rounds an independent sample: no round tags or windows to pair by
        bare = [[row_side(dict(r, rounds=[], windows=[]), s) for r, s in ((ra, "a"), (rb, "b"))] for ra, rb in pairs]
        return [ratio_ci(c) if (c := contrast(*sides)) is not None else None for sides in bare]
    sides = [_sides(ra, rb) for ra, rb in pairs]
    priors = [(_unit_prior(ra), _unit_prior(rb)) if _window_mates(ra, rb) else (None, None) for ra, rb in pairs]
    contrasts, _ = judge(sides, [str(ra["benchmark"]) for ra, _ in pairs], priors=priors)
    out: list[RatioCI | None] = []
    for (ra, rb), c in zip(pairs, contrasts, strict=True):
        if c is None:
            out.append(None)
            continue
        prev_a, prev_b = _get(ra, "prev_per_process"), _get(rb, "prev_per_process")
        rerun = None
        if prev_a and prev_b:
            before = contrast(*_sides({**_previous(ra), "cell": ra["cell"]}, {**_previous(rb), "cell": rb["cell"]},
                                      "prev"))
            rerun = before.ratio if before is not None else None
        out.append(ratio_ci(c, rerun))
    return out


def comparison_ci(ra: Row, rb: Row) -> RatioCI | None:
    """One pair's ratio a/b on its own (``comparison_cis`` of one)."""
    return comparison_cis([(ra, rb)])[0]


def _previous(row: Row) -> dict[str, Any]:
    return {"per_process": _get(row, "prev_per_process") or [], "samples": [], "windows": _get(row, "prev_windows")
            or [], "rounds": []}


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


def sides_missing(labels: tuple[str, str], cmp: Compare, a_rows: pd.DataFrame, b_rows: pd.DataFrame) -> list[str]:
    """Why side a or side b (``labels``) has no usable rows in a cell; empty when both have some."""
    return [w for w in (_side_missing(labels[0], cmp.a, a_rows, cmp.benchmarks),
                        _side_missing(labels[1], cmp.b, b_rows, cmp.benchmarks)) if w]
