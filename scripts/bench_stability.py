#!/usr/bin/env python3
"""Do two runs of the matrix agree? The reproducibility targets, measured (reported, never asserted).

Runs the matrix twice, back to back, through the real CLI (every cell measured
again: ``--redo``), each into its own reports directory, then compares the two
with ``tfmatrix compare`` and prints the targets:

* the share of variants whose medians agree within 5% (target: >= 90%) and
  within 20% (target: >= 98%), the median and worst deviation;
* the findings' comparisons: how many the report calls clear in one run are
  reversed in the other (target: none) and the share whose time ratios agree
  within 5% (target: >= 90%);
* the wall time of each run (the default ``nox -s matrix`` must stay within
  30 minutes cold on 2 cores);
* the harness's own cost per timed call (``selfcheck.overhead``; target <= 1 us);
* ``compare`` between the two runs: the share of variants called different
  (A/A false alarms; target <= 5%), with each ``--normalise``; a 10% slowdown
  injected into run 2's samples: the share called slower (target >= 90%);
* cross-cell ratios (each variant in each cell over the same variant in
  every other cell) run 1 against run 2 (target >= 90% within 5%), as the
  report computes them (round by round) and unpaired;
* each cell's median shift between the runs; every Claims line's verdict.

    python scripts/bench_stability.py                      # the default matrix, as matrix.toml says
    python scripts/bench_stability.py --only 'tf1.15-cpu' --only 'tf2.15-cpu' --rounds 1
    python scripts/bench_stability.py --schedule sequential --only 'tf2.1*' --bench 'inference.*'
    python scripts/bench_stability.py --compare-only WORK  # re-read two earlier runs in WORK/run1, WORK/run2
    python scripts/bench_stability.py --duet tf2.15-cpu tf2.21-keras3-cpu --bench 'inference.*'

``--duet A B`` answers one upgrade question (B against A) two ways, each
twice, alternating (interleaved, duet, interleaved, duet): the interleaved
schedule of the two cells and a duet (both at once, one CPU each); it prints
each one's wall time and how well B/A agrees between its two runs.

The runs' reports stay in ``--work`` (default: a new directory under /tmp):
``run1/``, ``run2/`` (each with ``cells/`` and ``index.html``), ``compare.csv``
and ``compare.html``.
"""
from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfmatrix.analysis.cells import load_dir  # noqa: E402
from tfmatrix.analysis.compare.sets import compare_paths  # noqa: E402
from tfmatrix.analysis.frame import build_frame  # noqa: E402
from tfmatrix.analysis.variant import Variant  # noqa: E402
from tfmatrix.report.compare_view import compare_csv, compare_html  # noqa: E402
from tfmatrix.results.store import write_text_atomic  # noqa: E402


def run_matrix(reports: Path, args: argparse.Namespace) -> float:
    cmd = [sys.executable, "-m", "tfmatrix", "matrix", "--redo", "--reports", str(reports), "--matrix", args.matrix,
           "--runner", args.runner]
    for o in args.only:
        cmd += ["--only", o]
    if args.preset:
        cmd += ["--preset", args.preset]
    if args.rounds:
        cmd += ["--rounds", str(args.rounds)]
    if args.schedule:
        cmd += ["--schedule", args.schedule]
    if args.processes:
        cmd += ["--processes", str(args.processes)]
    for b in args.bench:
        cmd += ["--bench", b]
    t0 = time.monotonic()
    stderr = _run(cmd, reports.parent / f"{reports.name}.log")
    took = time.monotonic() - t0
    if not (reports / "cells").is_dir():
        sys.exit(stderr[-3000:])
    return took


def _run(cmd: list[str], log: Path) -> str:
    """Run one tfmatrix command, its progress into ``log``; Ctrl-C is passed on and waited for.

    ``subprocess.run`` kills its child 0.25 s after a KeyboardInterrupt, which left the matrix's live cell
    containers running; the matrix cleans up itself when it gets the SIGINT and the time to act on it.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=out)
        try:
            proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            proc.wait()
            raise
    return log.read_text()


def overhead_ns(cells_dir: Path) -> list[float]:
    df = build_frame(load_dir(cells_dir).cells)
    rows = df[(df["benchmark"] == "selfcheck.overhead") & (df["status"] == "ok")]
    return [float(m) * 1e9 for m in rows["median"]]


def _estimators(per_process: list[list[float]]) -> dict[str, float]:
    """The same record read as each design would have: what each technique buys, from one pair of runs."""
    first = per_process[0]
    pooled = [x for p in per_process for x in p]
    return {
        "first 5 samples, median (the old count and estimator, but interleaved)": statistics.median(first[:5]),
        "all samples (adaptive), median": statistics.median(pooled),
        "first 5 samples, 10th percentile": _p10(first[:5]),
        "all samples (adaptive), 10th percentile (the report's time)": _p10(pooled),
        "all samples (adaptive), minimum": min(pooled),
    }


def _p10(values: list[float]) -> float:
    from tfmatrix.analysis.statistics.stats import estimate

    return estimate(values)


def attribution(run1: Path, run2: Path) -> list[str]:
    """Agreement of the two runs under each estimator, and of the comparisons paired vs unpaired."""
    from tfmatrix.analysis import pairing  # pair_rows looks comparison_cis up here
    from tfmatrix.analysis.compare.agreement import Agreement
    from tfmatrix.analysis.compare.sets import compare_cells
    from tfmatrix.analysis.frame import row_side
    from tfmatrix.analysis.statistics.inference import contrast, ratio_ci
    from tfmatrix.analysis.statistics.stats import deviation

    def unpaired(pairs):      # every ratio as two independent samples: no window or round pairing
        out = []
        for ra, rb in pairs:
            c = contrast(row_side(dict(ra, rounds=[], windows=[]), "a"), row_side(dict(rb, rounds=[], windows=[]), "b"))
            out.append(ratio_ci(c) if c is not None else None)
        return out

    cells1, cells2 = load_dir(run1).cells, load_dir(run2).cells
    df1, df2 = build_frame(cells1), build_frame(cells2)
    ok1 = {(r["cell"], r["id"]): r for _, r in df1[df1["status"] == "ok"].iterrows()}
    ok2 = {(r["cell"], r["id"]): r for _, r in df2[df2["status"] == "ok"].iterrows()}
    devs: dict[str, list[tuple[str, float]]] = {}
    for key in sorted(set(ok1) & set(ok2)):
        e1, e2 = _estimators(ok1[key]["per_process"]), _estimators(ok2[key]["per_process"])
        for name in e1:
            devs.setdefault(name, []).append((str(key), deviation(e1[name], e2[name])))
    lines = [Agreement.of(v).line(name) for name, v in devs.items()]
    paired = compare_cells(cells1, cells2, "run1", "run2").comparison_agreement
    original = pairing.comparison_cis
    try:
        pairing.comparison_cis = unpaired
        apart = compare_cells(cells1, cells2, "run1", "run2").comparison_agreement
    finally:
        pairing.comparison_cis = original
    lines.append(paired.line("comparisons, window-mates paired process by process, cells round by round"))
    lines.append(apart.line("comparisons, every ratio unpaired (two samples of rounds)"))
    return lines


def cross_cell_ratios(run1: Path, run2: Path) -> list[str]:
    """Each variant in each cell over the same variant in every other cell, run 1 against run 2.

    What the cross-version tables, findings and Claims are made of. Two ways
    to read each ratio: as the report does (round by round when both cells
    ran in one interleaved run, ``pairing.comparison_ci``) and as the ratio of
    the two cells' times (what a sequential run can only do).
    """
    from tfmatrix.analysis.compare.agreement import Agreement
    from tfmatrix.analysis.pairing import comparison_ci
    from tfmatrix.analysis.statistics.stats import deviation

    def rows(run: Path) -> dict[tuple[str, str], object]:
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
    from tfmatrix.analysis.claims import compute_claims

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


def injected(run1: Path, run2: Path, factor: float = 1.10) -> list[str]:
    """Run 2's samples of every variant times ``factor``: how often compare calls that change slower.

    The change is synthetic, the noise around it is what the two runs really
    measured: the detection power of the verdict rule at this machine's noise.
    """
    import dataclasses

    from tfmatrix.analysis.compare.sets import compare_cells

    cells1, cells2 = load_dir(run1).cells, load_dir(run2).cells
    out = []
    for mode in ("none", "host", "run", "cell"):
        slowed = [dataclasses.replace(c) for c in cells2]
        for c in slowed:
            if c.results is None:
                continue
            recs = []
            for rec in c.results.records:
                rec = dict(rec)
                if rec.get("status") == "ok":
                    rec["per_process"] = [[x * factor for x in p] for p in rec["per_process"]]
                    rec["samples"] = [x * factor for x in rec["samples"]]
                recs.append(rec)
            c.results = dataclasses.replace(c.results, records=recs)
            c.variants = tuple(Variant.of(r) for r in recs)      # what the frame reads: built once, so again
        if mode == "run":      # a change to every variant is what --normalise run cannot see per variant
            out.append(f"normalise={mode}: not applicable (every variant slowed alike)")
            continue
        if mode == "cell":     # the default for two runs of the same cells: one variant in five slowed, per cell
            out += [subset_injected(cells1, cells2, f) for f in (1.05, 1.10, 1.20)]
            continue
        result = compare_cells(cells1, slowed, "run1", f"run2 x{factor}", normalise=mode)
        counts = result.verdicts()
        n = len(result.variants)
        out.append(f"normalise={mode}: a {factor - 1:.0%} slowdown called slower in {counts['slower']} of {n} "
                   f"variants ({counts['slower'] / n:.0%})")
    return out


def subset_injected(cells1: list, cells2: list, factor: float) -> str:
    """Every fifth ok variant of each cell of run 2 made ``factor`` slower: found by the default compare?"""
    import dataclasses

    from tfmatrix.analysis.compare.sets import compare_cells

    slowed, hit = [], set()
    for c in cells2:
        c = dataclasses.replace(c)
        if c.results is not None:
            recs = []
            for i, rec in enumerate(c.results.records):
                rec = dict(rec)
                if rec.get("status") == "ok" and i % 5 == 0:
                    rec["per_process"] = [[x * factor for x in p] for p in rec["per_process"]]
                    rec["samples"] = [x * factor for x in rec["samples"]]
                    hit.add((c.name, str(rec["id"])))
                recs.append(rec)
            c.results = dataclasses.replace(c.results, records=recs)
            c.variants = tuple(Variant.of(r) for r in recs)
        slowed.append(c)
    result = compare_cells(cells1, slowed, "run1", f"run2 x{factor}")
    changed = [v for v in result.variants if (v.cell_b, v.id) in hit]
    same = [v for v in result.variants if (v.cell_b, v.id) not in hit]
    found = sum(1 for v in changed if v.verdict == "slower")
    wrong = sum(1 for v in same if v.verdict in ("slower", "faster"))
    return (f"default (each cell's move out): one variant in five {factor - 1:.0%} slower: found {found} of "
            f"{len(changed)} ({found / max(1, len(changed)):.0%}); unchanged called different {wrong} of {len(same)} "
            f"({wrong / max(1, len(same)):.1%})")


def false_alarms(run1: Path, run2: Path) -> list[str]:
    from tfmatrix.analysis.compare.sets import compare_paths

    out = []
    for mode in ("none", "cell", "host", "run"):
        result = compare_paths(run1, run2, normalise=mode)
        counts = result.verdicts()
        n = len(result.variants)
        called = counts["slower"] + counts["faster"]
        out.append(f"A/A, normalise={mode}: {called} of {n} variants called different ({called / n:.1%}: "
                   f"{counts['slower']} slower, {counts['faster']} faster); {result.host_line()}")
    return out


def duet_versus_interleaved(work: Path, a: str, b: str, args: argparse.Namespace) -> None:
    """The same upgrade question by each technique, twice each, alternating; B/A run-to-run agreement."""
    common = ["--matrix", args.matrix, "--runner", args.runner] + [x for pat in args.bench for x in ("--bench", pat)]
    if args.rounds:
        common += ["--rounds", str(args.rounds)]
    if args.preset:
        common += ["--preset", args.preset]
    how = {"interleaved": ["matrix", "--redo", "--only", a, "--only", b],
           "duet": ["duet", a, b]}
    walls: dict[str, list[float]] = {k: [] for k in how}
    for rep in (1, 2):
        for kind, cmd in how.items():
            out = work / f"{kind}{rep}"
            t0 = time.monotonic()
            _run([sys.executable, "-m", "tfmatrix", *cmd, *common, "--reports", str(out)], work / f"{kind}{rep}.log")
            walls[kind].append(time.monotonic() - t0)
            print(f"{kind} run {rep}: {walls[kind][-1]:.0f} s", flush=True)
    for kind in how:
        cells = "cells"
        print(f"{kind}: {', '.join(f'{w:.0f} s' for w in walls[kind])}; B/A run 1 against run 2:")
        for line in cross_cell_ratios(work / f"{kind}1" / cells, work / f"{kind}2" / cells):
            print("  " + line)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matrix", default=str(ROOT / "matrix.toml"))
    p.add_argument("--only", action="append", default=[], metavar="GLOB", help="cells (repeatable)")
    p.add_argument("--preset", help="override every cell's preset")
    p.add_argument("--rounds", type=int, help="override matrix.toml's rounds")
    p.add_argument("--runner", default="auto", choices=("auto", "docker", "venv"))
    p.add_argument("--work", type=Path, help="where run1/ and run2/ go (default: a new temporary directory)")
    p.add_argument("--compare-only", type=Path, metavar="WORK", help="only compare WORK/run1 and WORK/run2")
    p.add_argument("--duet", nargs=2, metavar=("CELL_A", "CELL_B"),
                   help="one upgrade question: the interleaved schedule against a duet, twice each")
    p.add_argument("--bench", action="append", default=[], metavar="PATTERN", help="the variants (repeatable)")
    p.add_argument("--processes", type=int, help="fresh processes per variant in each round")
    p.add_argument("--schedule", choices=("interleaved", "sequential"), help="override the schedule")
    args = p.parse_args()

    work = args.compare_only or args.work or Path(tempfile.mkdtemp(prefix="tfmatrix-stability-"))
    if args.duet:
        duet_versus_interleaved(work, args.duet[0], args.duet[1], args)
        return 0
    if not args.compare_only:
        for name in ("run1", "run2"):
            took = run_matrix(work / name, args)
            print(f"{name}: {took:.0f} s ({took / 60:.1f} min) -> {work / name}", flush=True)
    result = compare_paths(work / "run1" / "cells", work / "run2" / "cells")
    write_text_atomic(work / "compare.csv", compare_csv(result))
    write_text_atomic(work / "compare.html", compare_html(result))
    for line in result.summary_lines():
        print(line)
    agr, cmp = result.agreement, result.comparison_agreement
    print(f"target >= 90% of medians within 5%: {agr.share(0.05):.0%} -> "
          f"{'met' if agr.share(0.05) >= 0.9 else 'MISSED'}")
    print(f"target >= 98% of medians within 20%: {agr.share(0.20):.0%} -> "
          f"{'met' if agr.share(0.20) >= 0.98 else 'MISSED'}")
    print(f"target: no clear comparison reversed: {len(result.reversed)} -> "
          f"{'met' if not result.reversed else 'MISSED'}")
    print(f"target >= 90% of comparison ratios within 5%: {cmp.share(0.05):.0%} -> "
          f"{'met' if cmp.share(0.05) >= 0.9 else 'MISSED'}")
    for c in result.reversed[:10]:
        print(f"  reversed: {c.finding} {c.group}: {c.config}: {c.ratio_a:.3g} then {c.ratio_b:.3g}")
    ns = overhead_ns(work / "run2" / "cells")
    if ns:
        print(f"harness overhead per timed call: {min(ns):.0f}-{max(ns):.0f} ns (target <= 1000 ns)")
    print(f"target >= 80% of variant times within 5%: {agr.share(0.05):.0%} -> "
          f"{'met' if agr.share(0.05) >= 0.8 else 'MISSED'}")
    print("compare between the two runs (target <= 5% called different):")
    for line in false_alarms(work / "run1" / "cells", work / "run2" / "cells"):
        print("  " + line)
    print("a 10% slowdown injected into run 2's samples (target: called slower >= 90% of the time):")
    for line in injected(work / "run1" / "cells", work / "run2" / "cells"):
        print("  " + line)
    print("cross-cell ratios, run 1 against run 2 (target >= 90% within 5%):")
    for line in cross_cell_ratios(work / "run1" / "cells", work / "run2" / "cells"):
        print("  " + line)
    print(cell_shifts(work / "run1" / "cells", work / "run2" / "cells"))
    print(claims_agreement(work / "run1" / "cells", work / "run2" / "cells"))
    print("what each technique buys (the same two runs read as each design would have):")
    for line in attribution(work / "run1" / "cells", work / "run2" / "cells"):
        print("  " + line)
    print(f"details: {work / 'compare.html'}, {work / 'compare.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
