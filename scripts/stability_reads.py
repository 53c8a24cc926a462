"""``bench_stability.py``'s reads of two runs of the same matrix (``run1``, ``run2``: directories of cell files).

Pure functions of the cell files, each a few printed lines: what each estimator and the pairing buy
(``attribution``), the cross-cell ratios, each cell's shift, the Claims' verdicts, ``compare``'s false alarms and
its power on a slowdown injected into run 2's samples. Only what tfmatrix offers publicly.
"""
from __future__ import annotations

import dataclasses
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfmatrix.analysis.cells import CellResult, load_dir  # noqa: E402
from tfmatrix.analysis.claims.answers import compute_claims  # noqa: E402
from tfmatrix.analysis.claims.pairing import comparison_ci  # noqa: E402
from tfmatrix.analysis.compare.agreement import Agreement  # noqa: E402
from tfmatrix.analysis.compare.sets import compare_cells, compare_paths  # noqa: E402
from tfmatrix.analysis.frame import build_frame  # noqa: E402
from tfmatrix.analysis.statistics.stats import deviation, estimate  # noqa: E402
from tfmatrix.analysis.variant import Variant  # noqa: E402


def overhead_ns(cells_dir: Path) -> list[float]:
    """The harness's own cost per timed call (``selfcheck.overhead``), in ns, per cell."""
    df = build_frame(load_dir(cells_dir).cells)
    rows = df[(df["benchmark"] == "selfcheck.overhead") & (df["status"] == "ok")]
    return [float(m) * 1e9 for m in rows["median"]]


def estimators(per_process: list[list[float]]) -> dict[str, float]:
    """The same record read as each design would have: what each technique buys, from one pair of runs."""
    first = per_process[0]
    pooled = [x for p in per_process for x in p]
    return {
        "first 5 samples, median (the old count and estimator, but interleaved)": statistics.median(first[:5]),
        "all samples (adaptive), median": statistics.median(pooled),
        "first 5 samples, 10th percentile": estimate(first[:5]),
        "all samples (adaptive), 10th percentile (the report's time)": estimate(pooled),
        "all samples (adaptive), minimum": min(pooled),
    }


def attribution(run1: Path, run2: Path) -> list[str]:
    """Agreement of the two runs under each estimator, and of the comparisons paired vs unpaired."""
    cells1, cells2 = load_dir(run1).cells, load_dir(run2).cells
    df1, df2 = build_frame(cells1), build_frame(cells2)
    ok1 = {(r["cell"], r["id"]): r for _, r in df1[df1["status"] == "ok"].iterrows()}
    ok2 = {(r["cell"], r["id"]): r for _, r in df2[df2["status"] == "ok"].iterrows()}
    devs: dict[str, list[tuple[str, float]]] = {}
    for key in sorted(set(ok1) & set(ok2)):
        e1, e2 = estimators(ok1[key]["per_process"]), estimators(ok2[key]["per_process"])
        for name in e1:
            devs.setdefault(name, []).append((str(key), deviation(e1[name], e2[name])))
    lines = [Agreement.of(v).line(name) for name, v in devs.items()]
    paired = compare_cells(cells1, cells2, "run1", "run2").comparison_agreement
    apart = compare_cells(cells1, cells2, "run1", "run2", paired=False).comparison_agreement
    lines.append(paired.line("comparisons, window-mates paired process by process, cells round by round"))
    lines.append(apart.line("comparisons, every ratio unpaired (two samples of rounds)"))
    return lines


def cross_cell_ratios(run1: Path, run2: Path) -> list[str]:
    """Each variant in each cell over the same variant in every other cell, run 1 against run 2.

    What the cross-version tables, the Claims and questions are made of. Two ways
    to read each ratio: as the report does (round by round when both cells
    ran in one interleaved run, ``pairing.comparison_ci``) and as the ratio of
    the two cells' times (what a sequential run can only do).
    """
    def rows(run: Path) -> dict[tuple[str, str], Any]:
        df = build_frame(load_dir(run).cells)
        ok = df[(df["status"] == "ok") & df["time"].notna()]
        return {(str(r["id"]), str(r["cell"])): r for _, r in ok.iterrows()}

    r1, r2 = rows(run1), rows(run2)
    by_variant: dict[str, list[str]] = {}
    for vid, cell in set(r1) & set(r2):
        by_variant.setdefault(vid, []).append(cell)
    report_devs, plain_devs = [], []
    for vid, cells in by_variant.items():
        cells.sort()
        for i, x in enumerate(cells):
            for y in cells[i + 1:]:
                what = f"{vid} {x}/{y}"
                c1 = comparison_ci(r1[(vid, x)], r1[(vid, y)])
                c2 = comparison_ci(r2[(vid, x)], r2[(vid, y)])
                if c1 is not None and c2 is not None:
                    report_devs.append((what, deviation(c1.ratio, c2.ratio)))
                p1 = float(r1[(vid, x)]["time"]) / float(r1[(vid, y)]["time"])
                p2 = float(r2[(vid, x)]["time"]) / float(r2[(vid, y)]["time"])
                plain_devs.append((what, deviation(p1, p2)))
    return [Agreement.of(report_devs).line("cross-cell ratios as the report computes them"),
            Agreement.of(plain_devs).line("cross-cell ratios of the two cells' times (unpaired)")]


def cell_shifts(run1: Path, run2: Path) -> str:
    """Median run2/run1 time ratio per cell: how far each cell moved as a whole."""
    def times(run: Path) -> dict[tuple[str, str], float]:
        df = build_frame(load_dir(run).cells)
        return {(str(r["cell"]), str(r["id"])): float(r["time"]) for _, r in df[df["status"] == "ok"].iterrows()}

    t1, t2 = times(run1), times(run2)
    per_cell: dict[str, list[float]] = {}
    for key in set(t1) & set(t2):
        per_cell.setdefault(key[0], []).append(t2[key] / t1[key])
    shifts = {c: statistics.median(v) for c, v in per_cell.items()}
    return "per-cell median run2/run1: " + ", ".join(f"{c} {s:.3f}" for c, s in sorted(shifts.items())) + \
        f" (range {min(shifts.values()):.3f}-{max(shifts.values()):.3f})"


def claims_agreement(run1: Path, run2: Path) -> str:
    """Every Claims line (claim x cell x configuration) in both runs: same verdict, changed, reversed."""
    def lines(run: Path) -> dict[tuple[str, str, str, str], str]:
        cells = load_dir(run).cells
        out = {}
        for result in compute_claims(build_frame(cells), cells):
            for cell in result.headline():
                for line in cell.lines:
                    out[(result.claim.key, cell.cell.name, line.comparison.config, line.standin)] = line.verdict
        return out

    a, b = lines(run1), lines(run2)
    common = set(a) & set(b)
    changed = [k for k in common if a[k] != b[k]]
    rev = [k for k in changed if {a[k], b[k]} == {"holds", "reversed"}]
    text = f"Claims lines in both runs: {len(common)}; same verdict {len(common) - len(changed)}, changed " \
           f"{len(changed)}, reversed {len(rev)}"
    for k in changed[:8]:
        text += f"\n    changed: {k[0]} {k[1]} {k[2]}: {a[k]} -> {b[k]}"
    return text


def slowed(cells: list[CellResult], factor: float, every: int = 1) -> tuple[list[CellResult], set[tuple[str, str]]]:
    """Copies of ``cells`` with every ``every``-th record's samples times ``factor`` (ok ones); which were slowed."""
    out, hit = [], set()
    for c in cells:
        c = dataclasses.replace(c)
        if c.results is not None:
            recs = []
            for i, rec in enumerate(c.results.records):
                rec = dict(rec)
                if rec.get("status") == "ok" and i % every == 0:
                    rec["per_process"] = [[x * factor for x in p] for p in rec["per_process"]]
                    rec["samples"] = [x * factor for x in rec["samples"]]
                    hit.add((c.name, str(rec["id"])))
                recs.append(rec)
            c.results = dataclasses.replace(c.results, records=recs)
            c.variants = tuple(Variant.of(r) for r in recs)      # what the frame reads: built once, so again
        out.append(c)
    return out, hit


def injected(run1: Path, run2: Path, factor: float = 1.10) -> list[str]:
    """Run 2's samples of every variant times ``factor``: how often compare calls that change slower.

    The change is synthetic, the noise around it is what the two runs really
    measured: the detection power of the verdict rule at this machine's noise.
    """
    cells1, cells2 = load_dir(run1).cells, load_dir(run2).cells
    out = []
    for mode in ("none", "host", "run", "cell"):
        if mode == "run":      # a change to every variant is what --normalise run cannot see per variant
            out.append(f"normalise={mode}: not applicable (every variant slowed alike)")
            continue
        if mode == "cell":     # the default for two runs of the same cells: one variant in five slowed, per cell
            out += [subset_injected(cells1, cells2, f) for f in (1.05, 1.10, 1.20)]
            continue
        result = compare_cells(cells1, slowed(cells2, factor)[0], "run1", f"run2 x{factor}", normalise=mode)
        counts = result.verdicts()
        n = len(result.variants)
        out.append(f"normalise={mode}: a {factor - 1:.0%} slowdown called slower in {counts['slower']} of {n} "
                   f"variants ({counts['slower'] / n:.0%})")
    return out


def subset_injected(cells1: list[CellResult], cells2: list[CellResult], factor: float) -> str:
    """Every fifth ok variant of each cell of run 2 made ``factor`` slower: found by the default compare?"""
    slow, hit = slowed(cells2, factor, every=5)
    result = compare_cells(cells1, slow, "run1", f"run2 x{factor}")
    changed = [v for v in result.variants if (v.cell_b, v.id) in hit]
    same = [v for v in result.variants if (v.cell_b, v.id) not in hit]
    found = sum(1 for v in changed if v.verdict == "slower")
    wrong = sum(1 for v in same if v.verdict in ("slower", "faster"))
    return (f"default (each cell's move out): one variant in five {factor - 1:.0%} slower: found {found} of "
            f"{len(changed)} ({found / max(1, len(changed)):.0%}); unchanged called different {wrong} of {len(same)} "
            f"({wrong / max(1, len(same)):.1%})")


def false_alarms(run1: Path, run2: Path) -> list[str]:
    """``compare`` between two runs of unchanged code (A/A), with each ``--normalise``: the share called different."""
    out = []
    for mode in ("none", "cell", "host", "run"):
        result = compare_paths(run1, run2, normalise=mode)
        counts = result.verdicts()
        n = len(result.variants)
        called = counts["slower"] + counts["faster"]
        out.append(f"A/A, normalise={mode}: {called} of {n} variants called different ({called / n:.1%}: "
                   f"{counts['slower']} slower, {counts['faster']} faster); {result.host_line()}")
    return out
