#!/usr/bin/env python3
"""Do two runs of the matrix agree? The reproducibility targets, measured (reported, never asserted).

Runs the matrix twice, back to back, through the real CLI (every cell measured
again: ``--redo``), each into its own reports directory, then compares the two
with ``tfmatrix compare`` and prints the targets:

* the share of variants whose medians agree within 5% (target: >= 90%) and
  within 20% (target: >= 98%), the median and worst deviation;
* the seeds' questions' lines: how many the report calls clear in one run are
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
and ``compare.html``. The runs are ``stability_runs.py``'s, the reads of the
two runs ``stability_reads.py``'s.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from stability_reads import (  # noqa: E402
    attribution,
    cell_shifts,
    claims_agreement,
    cross_cell_ratios,
    false_alarms,
    injected,
    overhead_ns,
)
from stability_runs import duet_versus_interleaved, run_matrix  # noqa: E402

from tfmatrix.analysis.compare.sets import compare_paths  # noqa: E402
from tfmatrix.report.compare_view import compare_csv, compare_html  # noqa: E402
from tfmatrix.results.store import write_text_atomic  # noqa: E402


def parser() -> argparse.ArgumentParser:
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
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
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
        print(f"  reversed: {c.question} {c.group}: {c.config}: {c.ratio_a:.3g} then {c.ratio_b:.3g}")
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
