"""Two result sets side by side: how far each variant moved, and whether the report's answers held.

pyperf's ``compare_to`` for a TensorFlow stack. A user checks a TF upgrade or
a change to their stack with it (two cells, or two directories of cell
files); tfmatrix checks its own reproducibility with it (the same matrix run
twice). Cells are matched by name (or given as one file each), variants by
id, and each pair gets the time ratio B/A of the report's estimator with a
bootstrap interval and a verdict. The findings are computed from each side
and matched line by line, so a comparison the report calls clear in one run
and reversed in the other is named.

Pure functions over loaded cells (``analysis.cells``) and frames
(``analysis.frame``); the command line only reads, prints and writes, and
the terminal rows, ``--csv`` and ``--html`` are views (``report.compare_view``).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import UserError
from .cells import CellResult, load_dir, load_file
from .findings import FINDINGS, FindingResult, compute_all
from .frame import build_frame
from .stats import RatioCI, deviation, noise_of, ratio_ci, round_paired_ratio_ci, welch_ratio_ci

# The agreement thresholds the project's reproducibility target is stated in.
THRESHOLDS = (0.05, 0.10, 0.20)


@dataclass(frozen=True)
class VariantChange:
    """One variant measured on both sides: time ratio B/A and its interval."""

    cell_a: str
    cell_b: str
    id: str
    benchmark: str
    time_a: float
    time_b: float
    ci: RatioCI
    noise: float                # the larger measured between-process spread of the two sides (0.1 = 10%)

    @property
    def deviation(self) -> float:
        return deviation(self.time_a, self.time_b)

    @property
    def verdict(self) -> str:
        """"slower" / "faster" (B against A), or "no clear difference": the interval spans 1 or the
        change is smaller than the measured between-process noise."""
        if not self.ci.clear or self.deviation <= self.noise:
            return "no clear difference"
        return "slower" if self.ci.low > 1.0 else "faster"


@dataclass(frozen=True)
class ComparisonChange:
    """One line of a finding, computed from each side: did its answer hold?"""

    finding: str
    group: str
    benchmark: str
    config: str
    ratio_a: float
    ratio_b: float
    verdict_a: str              # "a" / "b" / "unclear", as RatioCI.verdict
    verdict_b: str

    @property
    def deviation(self) -> float:
        return deviation(self.ratio_a, self.ratio_b)

    @property
    def reversed(self) -> bool:
        """Clear in both runs, in opposite directions."""
        return {self.verdict_a, self.verdict_b} == {"a", "b"}

    @property
    def flipped(self) -> bool:
        """Clear in one run, unclear in the other."""
        return self.verdict_a != self.verdict_b and not self.reversed


@dataclass(frozen=True)
class Agreement:
    """How many of ``deviations`` lie within each threshold, their median and the worst."""

    n: int
    within: dict[float, int]
    median: float
    worst: float
    worst_what: str = ""

    @classmethod
    def of(cls, items: Sequence[tuple[str, float]]) -> Agreement:
        devs = sorted(d for _, d in items)
        if not devs:
            return cls(0, {t: 0 for t in THRESHOLDS}, math.nan, math.nan)
        worst_what, worst = max(items, key=lambda it: it[1])
        return cls(len(devs), {t: sum(1 for d in devs if d <= t) for t in THRESHOLDS},
                   float(pd.Series(devs).median()), worst, worst_what)

    def share(self, threshold: float) -> float:
        return self.within.get(threshold, 0) / self.n if self.n else math.nan

    def line(self, what: str) -> str:
        if not self.n:
            return f"{what}: none in common"
        shares = ", ".join(f"{self.share(t):.0%} within {t:.0%}" for t in THRESHOLDS)
        return (f"{what}: {self.n} in both; {shares}; median deviation {self.median:.1%}, "
                f"worst {self.worst:.0%} ({self.worst_what})")


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
    unmeasured: int = 0               # variants with one process a side, judged against the runs' spread
    floor: float | None = None        # that spread: the 97th percentile of every variant's move (0.1 = 10%)

    def offenders(self, slower_than: float) -> list[str]:
        """What fails a CI gate (``--fail-on slower:X%``): each variant that broke, then each one clearly slower
        (the report's verdict rule: interval and noise) by more than ``slower_than`` (0.1 = 10%: the whole 95%
        interval above 1.1), worst first."""
        out = [f"broke: {what}: {why}" for what, why in self.broke]
        slow = sorted((v for v in self.variants if v.verdict == "slower" and v.ci.low > 1.0 + slower_than),
                      key=lambda v: -v.ci.ratio)
        out += [f"slower: {v.cell_b}: {v.id}: {v.ci.ratio:.3f}x [{v.ci.low:.3f}, {v.ci.high:.3f}], noise "
                f"{v.noise:.1%}" for v in slow]
        return out

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
        out = {"faster": 0, "slower": 0, "no clear difference": 0}
        for v in self.variants:
            out[v.verdict] += 1
        return out

    def summary_lines(self) -> list[str]:
        counts = self.verdicts()
        clear_a = sum(1 for c in self.comparisons if c.verdict_a != "unclear")
        return [
            f"A = {self.label_a}, B = {self.label_b}; {len(self.cells)} cell pair(s)",
            self.agreement.line("variants (times: 10th percentiles)"),
            f"verdicts, B against A: {counts['slower']} slower, {counts['faster']} faster, "
            f"{counts['no clear difference']} no clear difference",
            self.comparison_agreement.line("findings' comparisons (time ratios)"),
            f"findings' comparisons clear in A: {clear_a}; reversed in B: {len(self.reversed)}; "
            f"clear in one and unclear in the other: {sum(1 for c in self.comparisons if c.flipped)}",
            self.host_line(),
        ] + ([self.floor_line()] if self.unmeasured else [])

    def floor_line(self) -> str:
        return (f"{self.unmeasured} variants have one process a side (a run with --rounds 1, or from before the "
                f"interleaved schedule): no noise of their own was measured, so each must move more than "
                f"{FLOOR_Q:.0%} of the other variants did between the runs ({self.floor or 0.0:.1%} here) to be "
                f"called different; use --rounds 2 or more for verdicts that resolve smaller changes")

    def host_line(self) -> str:
        moved = f"every variant together moved B/A {self.shift:.3f} (median)" if self.shift else \
            "too few variants to tell what the whole run moved by"
        if self.host_a and self.host_b:
            host = (f"the host reference workload {self.host_a * 1e3:.2f} ms in A, {self.host_b * 1e3:.2f} ms in B "
                    f"(B/A {self.host_b / self.host_a:.3f})")
        else:
            host = "no host reference on both sides (runs before the interleaved schedule)"
        how = {"none": "ratios as measured (--normalise host|run takes a common move out)",
               "host": f"ratios divided by the host reference's B/A {self.scale:.3f}",
               "run": f"ratios divided by the common move {self.scale:.3f}: a change that slowed every variant "
                      "alike is not seen"}[self.normalise]
        if self.normalise == "host" and self.scale == 1.0:
            how = "ratios as measured (no host reference on both sides)"
        return f"{moved}; {host}; {how}"


# --------------------------------------------------------------------------- pure core


def variant_changes(df_a: pd.DataFrame, df_b: pd.DataFrame, pairs: Sequence[tuple[str, str]], scale_b: float = 1.0
                    ) -> tuple[list[VariantChange], list[str], list[str]]:
    """Every variant measured ok in both cells of each pair, and those ok on one side only.

    Two cells of one interleaved run are paired round by round (the spread of
    the per-round ratios is the noise). Two runs are compared by Welch's t on
    each side's process times (its rounds: the spread between them is the
    noise). Results with one process a side (older runs) fall back to a
    bootstrap of the samples with the between-process spread as noise.
    ``scale_b``: what B moved by in common (``--normalise``), taken out.
    """
    changes: list[VariantChange] = []
    only_a: list[str] = []
    only_b: list[str] = []
    for name_a, name_b in pairs:
        rows_a = _ok_rows(df_a, name_a)
        rows_b = _ok_rows(df_b, name_b)
        only_a += [f"{name_a}: {i}" for i in rows_a if i not in rows_b]
        only_b += [f"{name_b}: {i}" for i in rows_b if i not in rows_a]
        for vid, ra in rows_a.items():
            rb = rows_b.get(vid)
            if rb is None:
                continue
            pp_a = ra["per_process"] or [ra["samples"]]
            pp_b = rb["per_process"] or [rb["samples"]]
            key = f"compare|{name_a}|{name_b}|{vid}"
            ci = None
            if ra["rounds"] and rb["rounds"] and scale_b == 1.0:
                ci = round_paired_ratio_ci(pp_b, pp_a, rb["rounds"], ra["rounds"], key=key)
            if ci is None:
                ci = welch_ratio_ci(pp_b, pp_a, shift=scale_b)
            if ci is None:
                ci = ratio_ci([[x / scale_b for x in p] for p in pp_b], pp_a, key=key, noise=0.0)
                if ci is not None:
                    ci = dataclasses.replace(ci, noise=noise_of(pp_a, pp_b))
            if ci is None:
                continue
            changes.append(VariantChange(name_a, name_b, str(vid), str(ra["benchmark"]), float(ra["time"]),
                                         float(rb["time"]) / scale_b, ci, ci.noise))
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


def host_reference(cells: Sequence[CellResult]) -> float | None:
    """The median time of the host's reference workload over a run (``hostspeed``), from its cells' files."""
    for cell in cells:
        series = (cell.results.config.get("host_speed") if cell.results else None) or []
        values = [float(p[2]) for p in series if isinstance(p, list) and len(p) == 3]
        if values:
            return float(pd.Series(values).median())
    return None


def _ok_rows(df: pd.DataFrame, cell: str) -> dict[str, Any]:
    if not len(df):
        return {}
    rows = df[(df["cell"] == cell) & (df["status"] == "ok") & df["time"].notna()]
    return {str(r["id"]): r for _, r in rows.iterrows()}


def comparison_changes(results_a: Iterable[FindingResult], results_b: Iterable[FindingResult]
                       ) -> list[ComparisonChange]:
    """The findings' lines present in both runs, matched by finding, cell(s) and configuration."""
    def index(results: Iterable[FindingResult]) -> dict[tuple[str, ...], Any]:
        out: dict[tuple[str, ...], Any] = {}
        for r in results:
            for c in r.comparisons:
                out[(r.finding.key, c.group, c.benchmark, c.config, c.a_detail, c.b_detail)] = c
        return out

    ia, ib = index(results_a), index(results_b)
    return [ComparisonChange(key[0], key[1], key[2], key[3] + (f" [{key[4]} / {key[5]}]" if key[4] or key[5] else ""),
                             ca.ci.ratio, ib[key].ci.ratio, ca.ci.verdict, ib[key].ci.verdict)
            for key, ca in ia.items() if key in ib]


NORMALISE = ("none", "host", "run")
FLOOR_Q = 0.97


def run_noise_floor(variants: Sequence[VariantChange]) -> tuple[list[VariantChange], float | None, int]:
    """Variants compared with one process a side get the two runs' own spread as their noise; with that
    spread (the median floor) and how many variants it applied to.

    A single process per side measures no between-process spread, so its
    interval (a bootstrap of one process's samples) is far too narrow: read
    that way, two runs of the same code called half the variants different
    (docs/measurement.md). What two runs do tell is how far variants move
    between them as a whole: each such variant must move further than
    ``FLOOR_Q`` of the *other* variants did, the common move taken out (so
    a slowdown of every variant alike is still seen). In two runs of the
    same code that calls about 3% different, by construction. Variants
    with processes to compare keep their own measured noise.
    """
    # the bootstrap fallback of ``variant_changes`` (Welch and round pairing resample nothing)
    alone = [i for i, v in enumerate(variants) if v.ci.resamples > 0]
    if not alone or len(variants) < 3:
        return list(variants), None, 0
    logs = np.log([max(v.ci.ratio, 1e-12) for v in variants])
    moves = np.abs(logs - np.median(logs))
    out = list(variants)
    floors = []
    for i in alone:
        others = np.delete(moves, i)
        floor = float(np.expm1(np.quantile(others, FLOOR_Q)))
        floors.append(floor)
        v = out[i]
        noise = max(v.noise, floor)
        out[i] = dataclasses.replace(v, noise=noise, ci=dataclasses.replace(v.ci, noise=max(v.ci.noise, noise)))
    return out, float(np.median(floors)), len(alone)


def compare_cells(cells_a: list[CellResult], cells_b: list[CellResult], label_a: str, label_b: str,
                  pairs: Sequence[tuple[str, str]] | None = None, normalise: str = "none") -> CompareResult:
    """Compare two loaded result sets; ``pairs`` (cell in A, cell in B) default to equal names.

    ``normalise``: take out of every ratio how much B moved in common with A:
    ``host``, the host's reference workload (both runs need its series);
    ``run``, the median ratio over every variant compared (a change that
    slows every variant alike then goes unseen: say so).
    """
    if pairs is None:
        names_b = {c.name for c in cells_b}
        pairs = [(c.name, c.name) for c in cells_a if c.name in names_b and c.has_records]
    df_a, df_b = build_frame(cells_a), build_frame(cells_b)
    host_a, host_b = host_reference(cells_a), host_reference(cells_b)
    shift = common_shift(df_a, df_b, pairs)
    scale = 1.0
    if normalise == "host" and host_a and host_b:
        scale = host_b / host_a
    elif normalise == "run" and shift:
        scale = shift
    variants, only_a, only_b = variant_changes(df_a, df_b, pairs, scale)
    variants, floor, unmeasured = run_noise_floor(variants)
    comparisons: list[ComparisonChange] = []
    if all(a == b for a, b in pairs):   # same cells on both sides: the findings can be matched line by line
        comparisons = comparison_changes(compute_all(df_a, cells_a, FINDINGS), compute_all(df_b, cells_b, FINDINGS))
    return CompareResult(label_a, label_b, variants, comparisons, only_a, only_b, list(pairs), host_a, host_b,
                         scale, broken(df_a, df_b, pairs), normalise, shift, unmeasured, floor)


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


# --------------------------------------------------------------------------- I/O edges


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


def compare_paths(a: Path, b: Path, cells: Sequence[str] = (), normalise: str = "none") -> CompareResult:
    """``tfmatrix compare A B``: two directories (cells matched by name) or two cell files (compared as a pair)."""
    cells_a, cells_b = load_side(a), load_side(b)
    pairs: list[tuple[str, str]] | None = None
    if a.is_file() and b.is_file():
        pairs = [(cells_a[0].name, cells_b[0].name)]
    result = compare_cells(cells_a, cells_b, str(a), str(b), pairs, normalise)
    if cells:
        wanted = set(cells)
        unknown = wanted - {n for pair in result.cells for n in pair}
        if unknown:
            raise UserError(f"--cell {sorted(unknown)[0]!r}: not a cell with results on both sides; cells: "
                            + ", ".join(sorted({p[0] for p in result.cells})))
        result.variants = [v for v in result.variants if v.cell_a in wanted or v.cell_b in wanted]
        result.comparisons = [c for c in result.comparisons if any(n in c.group.split(" vs ") for n in wanted)]
        result.cells = [p for p in result.cells if p[0] in wanted or p[1] in wanted]
    if not result.cells:
        raise UserError(f"{a} and {b} have no cell with results in common; name two cell files to compare "
                        "two different cells")
    return result
