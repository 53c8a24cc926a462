"""How a finding is answered: pair variants on their shared parameters, one ratio per pair.

A finding compares two sides, ``a`` and ``b``, picked by parameter values
(and, for ``scope="cells"``, by TF major version). Variants are paired when
every other parameter is equal (same benchmark, same model, same data, ...):
within one cell (``scope="cell"``), or between a cell of ``a_tf`` and the
newest cell of ``b_tf`` with the same target, on the same hardware where one
ran there (``scope="cells"``; ``hardware.same_hardware``). Each pair
gives one line: the time ratio a/b with its 95% interval (``moderation.judge``,
the one rule: window-mates paired process by process, two cells of one
interleaved run round by round, variances moderated across the lines of the
same comparison), and seed 000's signed "% faster" (positive when ``a`` is faster). Where a cell has no pair, the
finding says why (the side's n/a reason, or that it did not run there).

A finding is written in ``findings.Finding`` and ``findings.Compare``; its
answer is a ``FindingResult`` of ``Comparison`` lines. The claims
(``answers.py``) reuse the same pairing.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from suite.schema import FRAMEWORKS, param_text

from ..cells import CellResult
from ..frame import row_side
from ..hardware import same_hardware
from ..runs.noise_model import annotate
from ..statistics.inference import RatioCI, Side, contrast, ratio_ci
from ..statistics.moderation import Prior, judge
from ..statistics.stats import pct_faster, same_windows
from ..statistics.words import THIN, UNCLEAR, A, B
from .findings import FINDINGS, Compare, Finding, ParamSpec, in_benchmarks, matches, param_spec, spec_text


@dataclass
class Comparison:
    """One line of a finding: one configuration, one cell (or cell pair)."""

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
    paired: bool = True        # how its ratios are read (``comparison_cis``): False, every one unpaired

    @property
    def groups(self) -> list[GroupSummary]:
        by: dict[str, list[Comparison]] = {}
        for c in self.comparisons:
            by.setdefault(c.group, []).append(c)
        out = []
        for group, comps in by.items():
            ratios = sorted(c.ci.ratio for c in comps)
            verdicts = Counter(c.ci.verdict for c in comps)
            out.append(GroupSummary(group, comps[0].cell_a.target, len(comps), verdicts[A], verdicts[B],
                                    verdicts[UNCLEAR] + verdicts[THIN], float(pd.Series(ratios).median()), ratios[0],
                                    ratios[-1]))
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


def compute(finding: Finding, df: pd.DataFrame, cells: list[CellResult], paired: bool = True) -> FindingResult:
    result = FindingResult(finding, [], [], paired)
    df = annotate(df)
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
        if finding.scope == "backends":
            _compare_backends(finding, cmp, rows, cells, result)
        elif finding.scope == "cells":
            _compare_cells(finding, cmp, rows, cells, result)
        else:
            _compare_within(finding, cmp, rows, cells, result)
    if not result.comparisons and not result.notes:
        result.notes.append("Nothing to compare.")
    return result


def compute_all(df: pd.DataFrame, cells: list[CellResult], findings: tuple[Finding, ...] = FINDINGS,
                paired: bool = True) -> list[FindingResult]:
    """Every finding answered (``FINDINGS`` unless given); ``paired``: see ``comparison_cis``."""
    df = annotate(df)        # every variant's unit variance, once for all findings
    return [compute(f, df, cells, paired) for f in findings]


def pair_rows(finding: Finding, cmp: Compare, a_rows: pd.DataFrame, b_rows: pd.DataFrame, cell_a: CellResult,
              cell_b: CellResult, result: FindingResult) -> Counter[str]:
    """Pair ``a_rows`` with ``b_rows`` on their shared parameters; why the others could not be paired.

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
            missing[_why(ra, finding.a)] += 1
            continue
        for rb in partners:          # several when side b allows several values (jit_compile=false|none)
            if rb is None or rb["status"] != "ok":
                missing[_why(rb, finding.b)] += 1
                continue
            pairs.append((ra, rb))
    for (ra, rb), ci in zip(pairs, comparison_cis(pairs, result.paired), strict=True):
        if ci is None:
            missing["no positive time"] += 1
            continue
        result.comparisons.append(Comparison(
            benchmark=str(ra["benchmark"]), config=_config_text(ra, drop), a_detail=_detail(ra, cmp.a),
            b_detail=_detail(rb, cmp.b), cell_a=cell_a, cell_b=cell_b, time_a=float(ra["time"]),
            time_b=float(rb["time"]), ci=ci, unstable=bool(ra["unstable"]) or bool(rb["unstable"]),
            a_id=str(ra["id"]), b_id=str(rb["id"])))
    return missing


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


def _answer(finding: Finding, cmp: Compare, text: str, labels: tuple[str, str], a_rows: pd.DataFrame,
            b_rows: pd.DataFrame, cell_a: CellResult, cell_b: CellResult, result: FindingResult) -> None:
    """One cell's (or cell pair's) lines of a finding, with a note on what could not be paired, or why none."""
    why = sides_missing(labels, cmp, a_rows, b_rows)
    if why:
        result.notes.append(f"{text}: nothing to compare: {'; '.join(why)}.")
        return
    before = len(result.comparisons)
    missing = pair_rows(finding, cmp, a_rows, b_rows, cell_a, cell_b, result)
    _note_missing(text, missing, len(result.comparisons) - before, result)


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


def _compare_within(finding: Finding, cmp: Compare, rows: pd.DataFrame, cells: list[CellResult],
                    result: FindingResult) -> None:
    for cell in cells:
        mine = rows[rows["cell"] == cell.name]
        if not len(mine) or not cmp.applies(cell):
            continue
        a_rows = mine[[matches(p, cmp.a) for p in mine["params"]]]
        b_rows = mine[[matches(p, cmp.b) for p in mine["params"]]]
        _answer(finding, cmp, cell.name, (finding.a, finding.b), a_rows, b_rows, cell, cell, result)


def _compare_cells(finding: Finding, cmp: Compare, rows: pd.DataFrame, cells: list[CellResult],
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
        # each a cell against the newest b cell on its own hardware (the newest of all where none ran there)
        refs = {c.name: same_hardware(c, b_cells[::-1]) or b_cells[-1] for c in a_cells}
        used = [c for c in b_cells if any(r is c for r in refs.values())]
        for cell in a_cells:
            ref = refs[cell.name]
            if cell is ref:
                continue
            b_rows = rows[(rows["cell"] == ref.name) & pd.Series([matches(p, cmp.b) for p in rows["params"]],
                                                                  index=rows.index)]
            mine = rows[rows["cell"] == cell.name]
            a_rows = mine[[matches(p, cmp.a) for p in mine["params"]]]
            _answer(finding, cmp, f"{cell.name} vs {ref.name}", (finding.a, finding.b), a_rows, b_rows, cell, ref,
                    result)
        older = [c.name for c in b_cells if not any(c is u for u in used)]
        if older:
            on = " on each hardware" if len(used) > 1 else ""
            result.notes.append(f"{target.upper()} cells: {finding.a} is compared with "
                                f"{', '.join(c.name for c in used)}, the newest {finding.b} cell{on}; "
                                f"{', '.join(older)} appear{'s' * (len(older) == 1)} in the tables.")


def _compare_backends(finding: Finding, cmp: Compare, rows: pd.DataFrame, cells: list[CellResult],
                      result: FindingResult) -> None:
    """Same Keras 3 version and target, different backend: every pair, later backend (a) over earlier (b).

    A TF cell runs the Keras 3 model as ``api=tf.keras``, a JAX/PyTorch cell as ``api=keras``
    (there is no tf.keras without TF): the api is left out of the pairing key.
    """
    with_rows = [c for c in cells if c.name in set(rows["cell"]) and c.backend in FRAMEWORKS]
    groups: dict[tuple[str, str], list[CellResult]] = {}
    for c in with_rows:
        groups.setdefault((c.target, c.keras_version), []).append(c)
    for (target, keras), group in sorted(groups.items(), key=lambda kv: (kv[0][0] != "cpu", kv[0])):
        by_backend = {str(c.backend): c for c in sorted(group, key=lambda c: c.name)}
        if len(by_backend) < 2:
            others = sorted({c.keras_version for c in with_rows if c.target == target} - {keras})
            result.notes.append(f"{target.upper()}, Keras {keras}: only {', '.join(sorted(by_backend))} ran it"
                                + (f" (other Keras 3 versions: {', '.join(others)})" if others else "")
                                + "; nothing to compare.")
            continue
        ordered = [by_backend[b] for b in FRAMEWORKS if b in by_backend]
        for i, cell_b in enumerate(ordered):
            for cell_a in ordered[i + 1:]:
                api_a, api_b = (("tf.keras" if c.backend == "tensorflow" else "keras") for c in (cell_a, cell_b))
                pair = Compare(cmp.benchmarks, param_spec(api=api_a), param_spec(api=api_b))
                a_rows = rows[(rows["cell"] == cell_a.name) & pd.Series(
                    [matches(p, pair.a) and matches(p, cmp.a) for p in rows["params"]], index=rows.index)]
                b_rows = rows[(rows["cell"] == cell_b.name) & pd.Series(
                    [matches(p, pair.b) and matches(p, cmp.b) for p in rows["params"]], index=rows.index)]
                _answer(finding, pair, f"{cell_a.name} ({cell_a.backend}) vs {cell_b.name} ({cell_b.backend})",
                        (cell_a.backend or "?", cell_b.backend or "?"), a_rows, b_rows, cell_a, cell_b, result)
