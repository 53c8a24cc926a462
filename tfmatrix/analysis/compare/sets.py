"""Two result sets side by side: how far each variant moved, and whether the report's answers held.

pyperf's ``compare_to`` for a TensorFlow stack. A user checks a TF upgrade or
a change to their stack with it (two cells, or two directories of cell
files); tfmatrix checks its own reproducibility with it (the same matrix run
twice). Cells are matched by name (or given as one file each), variants by
id, and each pair gets the time ratio B/A with its interval and a verdict
from the one rule every verdict uses (``moderation.judge``: per round the
log of its 10th percentile, process effects out, variances moderated per
benchmark; two runs of the same cells also have each cell's common move
taken out and shown). The list of changes is read at a 5% false-discovery
rate, the gate family-wise (``multiplicity``). The seeds' questions are computed
from each side and matched line by line, so a comparison the report calls
clear in one run and reversed in the other is named.

Pure functions over loaded cells (``analysis.cells``) and frames
(``analysis.frame``), but for ``load_side`` and ``compare_paths``, which read
the two sides (and a noise model) from disk. What it finds is a
``result.CompareResult``; the command line prints and writes it, and
the terminal rows, ``--csv`` and ``--html`` are views (``report.compare_view``).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import UserError
from ..cells import CellResult, load_dir, load_file
from ..claims.answers import compute_claims
from ..claims.files import questions
from ..frame import build_frame, row_side
from ..runs.control import container_reference, control_moves, host_reference
from ..runs.kept import (
    HISTORY_SOURCE,
    SOURCE,
    RunSpread,
    history_means,
    history_model,
    pair_priors,
    run_means,
    run_spread,
)
from ..runs.noise_model import CONTROL, NoiseModel, history_beside, pooled, run_ids
from ..runs.run_level import MIN_RUNS, run_levels
from ..statistics.inference import ratio_ci
from ..statistics.moderation import Limit, judge, summed, with_extra
from ..statistics.multiplicity import bh
from .agreement import ComparisonChange, comparison_changes
from .result import CompareResult, VariantChange


def variant_changes(df_a: pd.DataFrame, df_b: pd.DataFrame, pairs: Sequence[tuple[str, str]], scale_b: float = 1.0,
                    per_cell: bool = False, noise: NoiseModel | None = None, by_window: bool = False,
                    history: NoiseModel | None = None,
                    controls: dict[tuple[str, str], tuple[float, float, float]] | None = None,
                    spread: RunSpread | None = None, limits: Mapping[tuple[str, str], Limit] | None = None,
                    ) -> tuple[list[VariantChange], list[str], list[str]]:
    """Every variant measured ok in both cells of each pair, and those ok on one side only.

    All of them are judged together (``moderation.judge``): two cells of one
    interleaved run pair round by round, two runs are compared on their
    rounds' means; each variance is moderated across the variants of its
    benchmark (or its cell pair); ``per_cell``: each cell's common move (per
    slice of processes) is taken out, as for two runs of the same cells.
    ``scale_b``: what B moved by in common (``--normalise host|run``), taken out.
    ``noise``: a replicated run's noise model, for variants with one process a side.
    ``history``: each variant's own noise in runs kept before (``runs.kept``), a
    prior for every variant it has (replicated or not). ``controls``: per cell
    pair, its control's move (``control``), taken out of its variants instead
    of their family's own (``per_cell``). ``spread``: each variant's
    run-to-run wander in the kept runs (``runs.kept.run_spread``), added to
    its contrast (two runs only: window-mates share their run).
    ``by_window``: A and B are window-mates of one run (``ab``): paired process
    by process, each process's effect estimated from both sides' variants.
    ``limits``: per (cell B, variant id), what its moderation's prior may lend
    it when judged early (``moderation.Limit``: ``ab``'s looks).
    """
    found: list[tuple[str, str, str, Any, Any]] = []
    only_a: list[str] = []
    only_b: list[str] = []
    for name_a, name_b in pairs:
        rows_a = _ok_rows(df_a, name_a)
        rows_b = _ok_rows(df_b, name_b)
        only_a += [f"{name_a}: {i}" for i in rows_a if i not in rows_b]
        only_b += [f"{name_b}: {i}" for i in rows_b if i not in rows_a]
        found += [(name_a, name_b, vid, ra, rows_b[vid]) for vid, ra in rows_a.items() if vid in rows_b]
    shift = math.log(scale_b)
    sides = []
    for name_a, name_b, _, ra, rb in found:
        b = row_side(rb, name_b if by_window else f"B|{name_b}", by_window)
        if shift:
            b = dataclasses.replace(b, logs=tuple(y - shift for y in b.logs))
        sides.append((b, row_side(ra, name_a if by_window else f"A|{name_a}", by_window)))
    families = [(name_a, name_b, frozenset(b.processes), frozenset(a.processes))
                for (name_a, name_b, *_), (b, a) in zip(found, sides, strict=True)] if per_cell else None
    priors = [pair_priors(name_a, name_b, vid, a.n < 2 and b.n < 2, noise, history)
              for (name_a, name_b, vid, *_), (b, a) in zip(found, sides, strict=True)] \
        if noise is not None or history is not None else None
    anchors = [controls.get((name_a, name_b)) for name_a, name_b, *_ in found] if controls else None
    contrasts, _ = judge(sides, [str(ra["benchmark"]) for *_, ra, _ in found], families, priors,
                         within=[(name_a, name_b) for name_a, name_b, *_ in found], anchors=anchors,
                         limits=[limits.get((name_b, vid)) for _, name_b, vid, *_ in found] if limits else None)
    if spread is not None and not by_window:
        added = [[p for p in (spread.of_pair((name_a, vid), (name_b, vid)),
                              spread.level_of_pair(name_a, name_b) if anchors and anchors[i] is not None else None)
                  if p is not None] for i, (name_a, name_b, vid, *_) in enumerate(found)]
        contrasts = [with_extra(c, *summed(parts)) if c is not None and not c.paired and parts else c
                     for c, parts in zip(contrasts, added, strict=True)]
    qs = bh([c.p() if c is not None else math.nan for c in contrasts])
    changes = []
    for (name_a, name_b, vid, ra, rb), (b, a), c, q in zip(found, sides, contrasts, qs, strict=True):
        if c is None:
            continue
        ci = ratio_ci(c)
        changes.append(VariantChange(name_a, name_b, str(vid), str(ra["benchmark"]), math.exp(a.mean),
                                     math.exp(b.mean), ci, ci.noise, c, q,
                                     (float(ra["pooled_p10"]), float(rb["pooled_p10"]) / scale_b)))
    return changes, only_a, only_b


def common_shift(df_a: pd.DataFrame, df_b: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> float | None:
    """How much every variant moved in common between two runs: the median B/A time ratio over all of them.

    On a shared host a whole run is faster or slower than another (the
    host's mood over its stretch of time); an interleaved run shares that
    mood across its cells, so it shows as one common factor.
    """
    ratios = []
    for name_a, name_b in pairs:
        rows_a, rows_b = _ok_rows(df_a, name_a), _ok_rows(df_b, name_b)
        ratios += [float(rb["time"]) / float(rows_a[vid]["time"]) for vid, rb in rows_b.items()
                   if vid in rows_a and float(rows_a[vid]["time"]) > 0]
    return float(np.exp(np.median(np.log(ratios)))) if len(ratios) >= 10 else None


def _ok_rows(df: pd.DataFrame, cell: str) -> dict[str, Any]:
    if not len(df):
        return {}
    rows = df[(df["cell"] == cell) & (df["status"] == "ok") & df["time"].notna()]
    return {str(r["id"]): r for _, r in rows.iterrows()}


def compare_cells(cells_a: list[CellResult], cells_b: list[CellResult], label_a: str, label_b: str,
                  pairs: Sequence[tuple[str, str]] | None = None, normalise: str = "auto",
                  noise: NoiseModel | None = None, history: NoiseModel | None = None,
                  spread: RunSpread | None = None, paired: bool = True) -> CompareResult:
    """Compare two loaded result sets; ``pairs`` (cell in A, cell in B) default to equal names.

    ``normalise``: take out of every ratio how much B moved in common with A:
    ``cell``, each cell's own common move (two runs of the same cells: a
    whole cell moved up to 15% between two runs of the same code; each is
    shown); ``control``, each cell's move from its containers' reference
    workload (``control``: a change of a whole cell is judged; a pair without
    it on both sides falls back to ``cell``); ``host``, the host's reference
    workload (both runs need its series); ``run``, the median ratio over every variant compared (a change
    that slows every variant alike then goes unseen: say so); ``auto``:
    ``cell`` when every pair is a cell with itself, else ``none``. ``noise``,
    ``history``, ``spread``: see ``variant_changes``. ``paired=False``: the
    questions' ratios matched line by line are each read unpaired
    (``pairing.comparison_cis``), to measure what their pairing buys.
    """
    if pairs is None:
        names_b = {c.name for c in cells_b}
        pairs = [(c.name, c.name) for c in cells_a if c.name in names_b and c.has_records]
    if normalise == "auto":
        normalise = "cell" if pairs and all(a == b for a, b in pairs) else "none"
    df_a, df_b = build_frame(cells_a), build_frame(cells_b)
    host_a, host_b = host_reference(cells_a), host_reference(cells_b)
    shift = common_shift(df_a, df_b, pairs)
    scale = 1.0
    if normalise == "host" and host_a and host_b:
        scale = host_b / host_a
    elif normalise == "run" and shift:
        scale = shift
    controls = control_moves(cells_a, cells_b, pairs) if normalise == "control" else {}
    variants, only_a, only_b = variant_changes(df_a, df_b, pairs, scale, normalise in ("cell", "control"), noise,
                                               history=history, controls=controls, spread=spread)
    moves: dict[str, float] = {}
    refs: dict[str, float] = {}
    if normalise in ("cell", "control"):
        by_a, by_b = {c.name: c for c in cells_a}, {c.name: c for c in cells_b}
        for a, b in pairs:
            logs = [math.log(v.time_b / v.time_a) for v in variants
                    if v.cell_a == a and v.cell_b == b and v.time_a > 0 and v.time_b > 0]
            name = a if a == b else f"{a} -> {b}"
            if logs:
                moves[name] = float(np.exp(np.median(logs)))
            ref_a, ref_b = container_reference(by_a[a]), container_reference(by_b[b])
            if ref_a and ref_b:
                refs[name] = ref_b / ref_a
    comparisons: list[ComparisonChange] = []
    if all(a == b for a, b in pairs):   # same cells on both sides: the questions can be matched line by line
        comparisons = comparison_changes(compute_claims(df_a, cells_a, questions(), paired=paired),
                                         compute_claims(df_b, cells_b, questions(), paired=paired))
    return CompareResult(label_a, label_b, variants, comparisons, only_a, only_b, list(pairs), host_a, host_b,
                         scale, broken(df_a, df_b, pairs), normalise, shift,
                         sum(1 for v in variants if not v.ci.replicated), moves, refs,
                         controls={(a if a == b else f"{a} -> {b}"): math.exp(m[0]) for (a, b), m in controls.items()},
                         spread=spread)


def broken(df_a: pd.DataFrame, df_b: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Variants ok in A whose B record is an error or a timeout, with B's reason."""
    out = []
    for name_a, name_b in pairs:
        ok_a = _ok_rows(df_a, name_a)
        if not len(df_b):
            continue
        rows_b = df_b[(df_b["cell"] == name_b) & df_b["status"].isin(["error", "timeout"])]
        for _, rb in rows_b.iterrows():
            if str(rb["id"]) in ok_a:
                out.append((f"{name_b}: {rb['id']}", str(rb["reason"] or rb["status"]).splitlines()[0]))
    return out


def load_side(path: Path) -> list[CellResult]:
    """A directory of cell files, or one cell file."""
    if path.is_dir():
        loaded = load_dir(path)
        if loaded.refused:
            raise UserError(f"{loaded.refused[0].reason}; move it out of {path} to compare the rest")
        return loaded.cells
    if path.is_file():
        return [load_file(path)]
    raise UserError(f"{path}: no such file or directory; give a directory of cell files (reports/cells) or "
                    "one cell file")


def compare_paths(a: Path, b: Path, cells: Sequence[str] = (), normalise: str = "auto",
                  kept: Sequence[Path] = ()) -> CompareResult:
    """``tfmatrix compare A B``: two directories (cells matched by name) or two cell files (compared as a pair).

    ``cells`` narrow the comparison before anything is computed, so the
    summary (common move, false-discovery list, gate) is about the variants
    the table shows. The run archive kept beside either side
    (``reports/runs``) lends its variances to variants with one process a side
    (``runs.noise_model.history_beside``). ``kept``: earlier runs of
    the same cells (directories of cell files, neither A nor B): each variant's
    own noise in them is its prior (``runs.kept``) and, with two or more, how
    far its runs wander beyond their rounds joins its contrast
    (``run_spread``); with ``MIN_RUNS`` or more, each cell's move between A
    and B is also judged against their spread (``run_levels``). Without
    ``kept``, the archive's runs other than A's and B's are the kept runs of
    the last two: what the series and the report read.
    """
    kept_runs = [load_side(k) for k in kept]
    history = history_model(kept_runs) if kept_runs else None
    cells_a, cells_b = load_side(a), load_side(b)
    kept_means = [run_means(k) for k in kept_runs]
    beside = history_beside(a, b)
    if not kept_runs and beside is not None:        # the archive's runs but A's and B's
        kept_means = history_means(beside[0], without=[*run_ids(cells_a), *run_ids(cells_b)])
    levels = run_levels([{k: m for k, m in run.items() if k[1] != CONTROL} for run in kept_means]) \
        if len(kept_means) >= MIN_RUNS else {}
    spread = run_spread(kept_means, SOURCE if kept_runs else HISTORY_SOURCE)
    pairs: list[tuple[str, str]] | None = None
    if a.is_file() and b.is_file():
        pairs = [(cells_a[0].name, cells_b[0].name)]
    if cells:
        wanted = set(cells)
        names_b = {c.name for c in cells_b}
        known = {p for pair in (pairs or [(c.name, c.name) for c in cells_a if c.name in names_b]) for p in pair}
        unknown = wanted - known
        if unknown:
            raise UserError(f"--cell {sorted(unknown)[0]!r}: not a cell with results on both sides; cells: "
                            + ", ".join(sorted(known)))
        if pairs is None:
            cells_a = [c for c in cells_a if c.name in wanted]
            cells_b = [c for c in cells_b if c.name in wanted]
    model = (pooled(beside[0]) or NoiseModel({}, str(beside[1]))) if beside is not None else None
    result = dataclasses.replace(
        compare_cells(cells_a, cells_b, str(a), str(b), pairs, normalise, model, history, spread),
        run_levels=levels)
    if not result.cells:
        raise UserError(f"{a} and {b} have no cell with results in common; name two cell files to compare "
                        "two different cells")
    return result
