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
* the harness's own cost per timed call (``selfcheck.overhead``; target <= 1 us).

    python scripts/bench_stability.py                      # the default matrix, as matrix.toml says
    python scripts/bench_stability.py --only 'tf1.15-cpu' --only 'tf2.15-cpu' --rounds 1
    python scripts/bench_stability.py --compare-only WORK  # re-read two earlier runs in WORK/run1, WORK/run2

The runs' reports stay in ``--work`` (default: a new directory under /tmp):
``run1/``, ``run2/`` (each with ``cells/`` and ``index.html``), ``compare.csv``
and ``compare.html``.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfmatrix.compare import compare_paths, to_csv, to_html  # noqa: E402
from tfmatrix.report.frame import build_frame  # noqa: E402
from tfmatrix.report.load import load_dir  # noqa: E402
from tfmatrix.results import write_text_atomic  # noqa: E402


def run_matrix(reports: Path, args: argparse.Namespace) -> float:
    cmd = [sys.executable, "-m", "tfmatrix", "matrix", "--redo", "--reports", str(reports), "--matrix", args.matrix,
           "--runner", args.runner]
    for o in args.only:
        cmd += ["--only", o]
    if args.preset:
        cmd += ["--preset", args.preset]
    if args.rounds:
        cmd += ["--rounds", str(args.rounds)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.monotonic() - t0
    if not (reports / "cells").is_dir():
        sys.exit(proc.stderr[-3000:])
    return took


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
    from tfmatrix.report.stats import estimate

    return estimate(values)


def attribution(run1: Path, run2: Path) -> list[str]:
    """Agreement of the two runs under each estimator, and of the comparisons paired vs unpaired."""
    from tfmatrix.compare import Agreement, compare_cells, deviation
    from tfmatrix.report import pairing  # _pair looks comparison_ci up here
    from tfmatrix.report.stats import ratio_ci

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
    original = pairing.comparison_ci
    try:
        pairing.comparison_ci = lambda ra, rb, key: ratio_ci(ra["per_process"], rb["per_process"], key=key)
        unpaired = compare_cells(cells1, cells2, "run1", "run2").comparison_agreement
    finally:
        pairing.comparison_ci = original
    lines.append(paired.line("comparisons, window-mates paired round by round"))
    lines.append(unpaired.line("comparisons, every ratio unpaired (ratio of medians)"))
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matrix", default=str(ROOT / "matrix.toml"))
    p.add_argument("--only", action="append", default=[], metavar="GLOB", help="cells (repeatable)")
    p.add_argument("--preset", help="override every cell's preset")
    p.add_argument("--rounds", type=int, help="override matrix.toml's rounds")
    p.add_argument("--runner", default="auto", choices=("auto", "docker", "venv"))
    p.add_argument("--work", type=Path, help="where run1/ and run2/ go (default: a new temporary directory)")
    p.add_argument("--compare-only", type=Path, metavar="WORK", help="only compare WORK/run1 and WORK/run2")
    args = p.parse_args()

    work = args.compare_only or args.work or Path(tempfile.mkdtemp(prefix="tfmatrix-stability-"))
    if not args.compare_only:
        for name in ("run1", "run2"):
            took = run_matrix(work / name, args)
            print(f"{name}: {took:.0f} s ({took / 60:.1f} min) -> {work / name}", flush=True)
    result = compare_paths(work / "run1" / "cells", work / "run2" / "cells")
    write_text_atomic(work / "compare.csv", to_csv(result))
    write_text_atomic(work / "compare.html", to_html(result))
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
    print("what each technique buys (the same two runs read as each design would have):")
    for line in attribution(work / "run1" / "cells", work / "run2" / "cells"):
        print("  " + line)
    print(f"details: {work / 'compare.html'}, {work / 'compare.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
