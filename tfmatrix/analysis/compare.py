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
rate, the gate family-wise (``multiplicity``). The findings are computed
from each side and matched line by line, so a comparison the report calls
clear in one run and reversed in the other is named.

Pure functions over loaded cells (``analysis.cells``) and frames
(``analysis.frame``); the command line only reads, prints and writes, and
the terminal rows, ``--csv`` and ``--html`` are views (``report.compare_view``).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import UserError
from . import noise_model
from .agreement import Agreement, ComparisonChange, comparison_changes
from .cells import CellResult, load_dir, load_file
from .control import container_reference, control_moves, host_reference, uniform_note
from .findings import FINDINGS
from .frame import build_frame, row_side
from .history import SOURCE as HISTORY
from .history import history_model, pair_priors
from .noise_model import NoiseModel
from .pairing import compute_all
from .run_level import MIN_RUNS, RunLevel, run_levels
from .statistics.inference import ALPHA, Contrast, RatioCI, ratio_ci
from .statistics.moderation import judge
from .statistics.multiplicity import bh, gate
from .statistics.stats import deviation

FDR = 0.05      # the false-discovery rate a list of changed variants is read at

@dataclass(frozen=True)
class VariantChange:
    """One variant measured on both sides: time ratio B/A, its interval and what it rests on."""

    cell_a: str
    cell_b: str
    id: str
    benchmark: str
    time_a: float               # exp(mean per-round log p10): the numbers the ratio is made of (time_b / time_a)
    time_b: float
    ci: RatioCI
    noise: float                # what one round's ratio wanders by (its SD, relative: 0.1 = 10%); shown, not a rule
    contrast: Contrast | None = None
    q: float = math.nan         # its Benjamini-Hochberg adjusted p-value among the variants compared
    pooled: tuple[float, float] = (math.nan, math.nan)   # the pooled p10 of all samples, A and B (labelled so)

    @property
    def deviation(self) -> float:
        return deviation(self.time_a, self.time_b)

    @property
    def verdict(self) -> str:
        """"slower"/"faster" (B against A), "no clear difference", or "not enough replication"."""
        if not self.ci.replicated:
            return "not enough replication"
        if not self.ci.clear:
            return "no clear difference"
        return "slower" if self.ci.low > 1.0 else "faster"

    @property
    def discovery(self) -> bool:
        """Changed, and still so when the whole list is read at a ``FDR`` false-discovery rate."""
        return self.verdict in ("slower", "faster") and self.q < FDR


@dataclass
class CompareResult:
    label_a: str
    label_b: str
    variants: list[VariantChange]
    comparisons: list[ComparisonChange]
    only_a: list[str] = field(default_factory=list)    # "cell: id" measured ok on one side only
    only_b: list[str] = field(default_factory=list)
    cells: list[tuple[str, str]] = field(default_factory=list)
    host_a: float | None = None       # the host reference's median time in each run (hostspeed), when recorded
    host_b: float | None = None
    scale: float = 1.0                # B's times were divided by this (--normalise: host_b / host_a)
    broke: list[tuple[str, str]] = field(default_factory=list)   # ("cell: id", reason): ok in A, failed in B
    normalise: str = "none"
    shift: float | None = None        # the median B/A over every variant: what the whole run moved by
    unreplicated: int = 0             # variants with one process a side and no variance from elsewhere
    cell_moves: dict[str, float] = field(default_factory=dict)   # per cell pair: its median B/A, when taken out
    cell_refs: dict[str, float] = field(default_factory=dict)    # per cell pair: its containers' reference B/A
    run_levels: dict[str, RunLevel] = field(default_factory=dict)  # per cell: its spread over the runs kept
    controls: dict[str, float] = field(default_factory=dict)     # per cell pair: the control's B/A taken out
    alpha: float = ALPHA              # each variant's test and the gate's (a sequential ab: 5% over its looks)

    def offenders(self, slower_than: float) -> list[str]:
        """What fails a CI gate (``--fail-on slower:X%``): each variant that broke, then each one slower with
        family-wise confidence (Holm over every variant compared: an unchanged run fails at most 5% of the
        time) and its own 95% interval above 1 + ``slower_than``, worst first."""
        out = [f"broke: {what}: {why}" for what, why in self.broke]
        calls = gate([v.contrast for v in self.variants], slower_than, self.alpha)
        slow = sorted((v for v, call in zip(self.variants, calls, strict=True) if call.fails),
                      key=lambda v: -v.ci.ratio)
        out += [f"slower: {v.cell_b}: {v.id}: {v.ci.ratio:.3f}x [{v.ci.low:.3f}, {v.ci.high:.3f}], noise "
                f"{v.noise:.1%}" for v in slow]
        return out

    def gate_line(self, slower_than: float) -> str:
        """What the gate could see: the smallest slowdown that fails it (80% of the time), over the variants."""
        mdes = sorted(c.mde for c in gate([v.contrast for v in self.variants], slower_than, self.alpha)
                      if math.isfinite(c.mde))
        blind = len(self.variants) - len(mdes)
        if not mdes:
            return ("the gate could see no slowdown: no variant has replicated measurements (run --rounds 2 or "
                    "more)")
        median = mdes[len(mdes) // 2]
        return (f"the gate finds a slowdown of {median:.0%} or more in half the variants (80% of the time), "
                f"{mdes[0]:.0%} in the best measured, {mdes[-1]:.0%} in the worst; smaller ones cannot be seen by "
                f"this comparison" + (f"; {blind} variant(s) not gated: not enough replication" if blind else "")
                + self.uniform_note())

    def uniform_note(self) -> str:
        """Can a slowdown of a whole slice or cell fail the gate? (``control.uniform_note``)"""
        return uniform_note(self.normalise, self.cell_moves, self.controls, self.run_levels)

    @property
    def agreement(self) -> Agreement:
        return Agreement.of([(f"{v.cell_b}: {v.id}", v.deviation) for v in self.variants])

    @property
    def comparison_agreement(self) -> Agreement:
        return Agreement.of([(f"{c.finding} {c.group}: {c.config}", c.deviation) for c in self.comparisons])

    @property
    def reversed(self) -> list[ComparisonChange]:
        return [c for c in self.comparisons if c.reversed]

    def verdicts(self) -> dict[str, int]:
        out = {"faster": 0, "slower": 0, "no clear difference": 0, "not enough replication": 0}
        for v in self.variants:
            out[v.verdict] += 1
        return out

    def counts_text(self) -> str:
        """'N slower, N faster, N no clear difference[, N not enough replication]': compare's and ab's summary."""
        counts = self.verdicts()
        return (f"{counts['slower']} slower, {counts['faster']} faster, {counts['no clear difference']} no clear "
                "difference" + (f", {counts['not enough replication']} not enough replication"
                                if counts["not enough replication"] else ""))

    def summary_lines(self) -> list[str]:
        clear_a = sum(1 for c in self.comparisons if c.verdict_a != "unclear")
        return [
            f"A = {self.label_a}, B = {self.label_b}; {len(self.cells)} cell pair(s)",
            self.agreement.line("variants (times: geometric mean of the rounds' 10th percentiles)"),
            f"verdicts, B against A: {self.counts_text()}",
        ] + ([self.discovery_line()] if self.unreplicated < len(self.variants) else []) + [
            self.resolution_line(),
            self.prior_line(),
            self.comparison_agreement.line("findings' comparisons (time ratios)"),
            f"findings' comparisons clear in A: {clear_a}; reversed in B: {len(self.reversed)}; "
            f"clear in one and unclear in the other: {sum(1 for c in self.comparisons if c.flipped)}",
            self.host_line(),
        ] + ([self.replication_line()] if self.unreplicated else [])

    def discovery_line(self) -> str:
        found = [v for v in self.variants if v.discovery]
        slower = sum(1 for v in found if v.verdict == "slower")
        return (f"read as one list at a {FDR:.0%} false-discovery rate (Benjamini-Hochberg): {slower} slower, "
                f"{len(found) - slower} faster; each variant's own verdict is a {self.alpha * 100:.3g}% test, so about "
                f"1 in {round(1 / self.alpha)} unchanged variants is called different by chance")

    def resolution_line(self) -> str:
        mdes = sorted(v.ci.mde for v in self.variants if math.isfinite(v.ci.mde))
        if not mdes:
            return "no variant has replicated measurements: no change can be resolved"
        return (f"smallest change resolved (80% of the time): {mdes[len(mdes) // 2]:.0%} at the median variant, "
                f"{mdes[0]:.0%} at best, {mdes[-1]:.0%} at worst; a \"no clear difference\" says nothing about "
                "changes smaller than its own")

    def prior_line(self) -> str:
        """What share of the comparisons had a variance prior, and from where (``moderation``, ``history``)."""
        kinds = {"moderated": 0, "history": 0, "noise model": 0}
        for v in self.variants:
            prior = v.contrast.prior if v.contrast is not None else ""
            if prior:
                kinds["history" if HISTORY in prior else "noise model" if prior.startswith("noise model")
                      else "moderated"] += 1
        n = max(1, len(self.variants))
        if not sum(kinds.values()):
            return "variance priors: none (each variant judged on its own rounds, where it has two or more)"
        return (f"variance priors: {sum(kinds.values()) / n:.0%} of the variants compared ("
                f"{kinds['moderated'] / n:.0%} moderated across their benchmark or cell pair, "
                f"{kinds['history'] / n:.0%} their own noise in the kept runs, "
                f"{kinds['noise model'] / n:.0%} a noise model file)")

    def replication_line(self) -> str:
        return (f"{self.unreplicated} variants have one process a side and no noise model from a replicated run: "
                "not enough replication for a verdict (run --rounds 2 or more, or give --noise-model FILE from a "
                "replicated run of the same cells)")

    def host_line(self) -> str:
        moved = f"every variant together moved B/A {self.shift:.3f} (median)" if self.shift else \
            "too few variants to tell what the whole run moved by"
        if self.host_a and self.host_b:
            host = (f"the host reference workload {self.host_a * 1e3:.2f} ms in A, {self.host_b * 1e3:.2f} ms in B "
                    f"(B/A {self.host_b / self.host_a:.3f})")
        else:
            host = "no host reference on both sides (runs before the interleaved schedule)"
        moves = ", ".join(f"{cell} {move:.3f}" + self._move_note(cell, move) for cell, move in self.cell_moves.items())
        how = {"none": "ratios as measured (--normalise cell|host|run takes a common move out)",
               "cell": f"each cell's common move taken out ({moves}): a run-level move of a whole cell, which one "
                       "run a side cannot tell from the run's own drift, is shown, not judged",
               "control": "each cell's move taken from its containers' reference workload ("
                          + ", ".join(f"{c} {m:.3f}" for c, m in self.controls.items()) + "): a change that slowed "
                          "a whole cell is judged" + (f"; common move taken out where there is none ({moves})"
                                                      if len(self.controls) < len(self.cell_moves) else ""),
               "host": f"ratios divided by the host reference's B/A {self.scale:.3f}",
               "run": f"ratios divided by the common move {self.scale:.3f}: a change that slowed every variant "
                      "alike is not seen"}[self.normalise]
        if self.normalise == "host" and not (self.host_a and self.host_b):
            how = "ratios as measured (no host reference on both sides)"
        if self.normalise == "run" and not self.shift:
            how = "ratios as measured (too few variants to find the common move: --normalise run needs 10)"
        return f"{moved}; {host}; {how}"

    def _move_note(self, cell: str, move: float) -> str:
        notes = []
        if cell in self.cell_refs:
            notes.append(f"its containers' own reference {self.cell_refs[cell]:.3f}")
        if cell in self.run_levels:
            notes.append(self.run_levels[cell].text(move))
        return f" ({'; '.join(notes)})" if notes else ""


# --------------------------------------------------------------------------- pure core


def variant_changes(df_a: pd.DataFrame, df_b: pd.DataFrame, pairs: Sequence[tuple[str, str]], scale_b: float = 1.0,
                    per_cell: bool = False, noise: NoiseModel | None = None, by_window: bool = False,
                    history: NoiseModel | None = None,
                    controls: dict[tuple[str, str], tuple[float, float, float]] | None = None,
                    ) -> tuple[list[VariantChange], list[str], list[str]]:
    """Every variant measured ok in both cells of each pair, and those ok on one side only.

    All of them are judged together (``moderation.judge``): two cells of one
    interleaved run pair round by round, two runs are compared on their
    rounds' means; each variance is moderated across the variants of its
    benchmark (or its cell pair); ``per_cell``: each cell's common move (per
    slice of processes) is taken out, as for two runs of the same cells.
    ``scale_b``: what B moved by in common (``--normalise host|run``), taken out.
    ``noise``: a replicated run's noise model, for variants with one process a side.
    ``history``: each variant's own noise in runs kept before (``history``), a
    prior for every variant it has (replicated or not). ``controls``: per cell
    pair, its control's move (``control``), taken out of its variants instead
    of their family's own (``per_cell``).
    ``by_window``: A and B are window-mates of one run (``ab``): paired process
    by process, each process's effect estimated from both sides' variants.
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
                         within=[(name_a, name_b) for name_a, name_b, *_ in found], anchors=anchors)
    qs = bh([c.p() if c is not None else math.nan for c in contrasts])
    changes = []
    for (name_a, name_b, vid, ra, rb), (b, a), c, q in zip(found, sides, contrasts, qs, strict=True):
        if c is None:
            continue
        ci = ratio_ci(c)
        changes.append(VariantChange(name_a, name_b, str(vid), str(ra["benchmark"]), math.exp(a.mean),
                                     math.exp(b.mean), ci, ci.noise, c, q,
                                     (float(ra["time"]), float(rb["time"]) / scale_b)))
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
                  noise: NoiseModel | None = None, history: NoiseModel | None = None) -> CompareResult:
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
    ``history``: see ``variant_changes``.
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
                                               history=history, controls=controls)
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
    if all(a == b for a, b in pairs):   # same cells on both sides: the findings can be matched line by line
        comparisons = comparison_changes(compute_all(df_a, cells_a, FINDINGS), compute_all(df_b, cells_b, FINDINGS))
    return CompareResult(label_a, label_b, variants, comparisons, only_a, only_b, list(pairs), host_a, host_b,
                         scale, broken(df_a, df_b, pairs), normalise, shift,
                         sum(1 for v in variants if not v.ci.replicated), moves, refs,
                         controls={(a if a == b else f"{a} -> {b}"): math.exp(m[0]) for (a, b), m in controls.items()})


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
                  noise: Path | None = None, kept: Sequence[Path] = ()) -> CompareResult:
    """``tfmatrix compare A B``: two directories (cells matched by name) or two cell files (compared as a pair).

    ``cells`` narrow the comparison before anything is computed, so the
    summary (common move, false-discovery list, gate) is about the variants
    the table shows. ``noise``: a noise model file (default: the one kept
    beside either side, ``reports/noise-model.json``). ``kept``: earlier runs of
    the same cells (directories of cell files, neither A nor B): each variant's
    own noise in them is its prior (``history``); with ``MIN_RUNS`` or more,
    each cell's move between A and B is also judged against their spread.
    """
    kept_runs = [load_side(k) for k in kept]
    levels = run_levels(kept_runs) if len(kept_runs) >= MIN_RUNS else {}
    history = history_model(kept_runs) if kept_runs else None
    cells_a, cells_b = load_side(a), load_side(b)
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
    model = noise_model.load(noise) if noise is not None else noise_model.beside(a, b)
    result = dataclasses.replace(
        compare_cells(cells_a, cells_b, str(a), str(b), pairs, normalise, model, history), run_levels=levels)
    if not result.cells:
        raise UserError(f"{a} and {b} have no cell with results in common; name two cell files to compare "
                        "two different cells")
    return result
