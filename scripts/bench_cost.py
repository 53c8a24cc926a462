#!/usr/bin/env python3
"""Where a run's time went and where its noise came from; Kalibera & Jones's samples per process, per benchmark.

Reads a finished run (``reports/cells/*.json`` and the cells' logs) and prints:

* per cell: the wall time of its measured processes (from the log's
  ``[suite] ok: ... in N s`` lines), split into process start (import and
  worker start: the processes' wall less their variants'), model builds,
  first calls (tracing, XLA compiles), warm-up and calibration, samples, and
  the rest (garbage collections, bookkeeping);
* per benchmark: the sample-level and process-level noise (log SDs), what a
  process and a sample cost, the samples a process took and the number
  Kalibera & Jones's rule gives (``scripts/cost.py``).

    python scripts/bench_cost.py reports            # the last matrix run
    python scripts/bench_cost.py /work/stab/run1 --top 15
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SLICE_DONE = re.compile(r"^\[suite\] ok: .* in (\d+) s -> /out/r(\d+)-")


def slice_seconds(log: Path) -> float:
    """The measured processes' wall time: every slice's ``in N s`` (the plan's fingerprint excluded)."""
    if not log.exists():
        return math.nan
    return float(sum(int(m.group(1)) for line in log.read_text(errors="replace").splitlines()
                     if (m := SLICE_DONE.match(line))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a reports directory (with cells/)")
    ap.add_argument("--top", type=int, default=20, help="benchmarks to list (most expensive first)")
    args = ap.parse_args()
    from cost import by_benchmark, cell_spent, levels

    from tfmatrix.analysis.cells import load_dir

    cells = load_dir(Path(args.run) / "cells").cells
    found = []
    totals = {"start": 0.0, "build": 0.0, "first": 0.0, "warm": 0.0, "samples": 0.0, "other": 0.0}
    print(f"{'cell':26s} {'processes':>9s} {'start':>7s} {'build':>7s} {'first':>7s} {'warm-up':>7s} "
          f"{'samples':>7s} {'other':>7s}   (seconds, all rounds)")
    for cell in cells:
        if not cell.has_records:        # skipped (a GPU cell on a host without one) or failed before measuring
            continue
        s = cell_spent(cell)
        walls = slice_seconds(cell.path.with_suffix(".log"))
        start = max(0.0, walls - s.total) if math.isfinite(walls) else math.nan
        variant_processes = sum(len(v.per_process) for v in cell.variants if v.ok)
        overhead = start / variant_processes if variant_processes and math.isfinite(start) else 0.0
        found += [x for v in cell.variants if v.ok and (x := levels(v, overhead)) is not None]
        for key, value in zip(totals, (start, s.build, s.first_call, s.warmup, s.samples, s.other), strict=True):
            totals[key] += value if math.isfinite(value) else 0.0
        print(f"{cell.name:26s} {walls:9.0f} {start:7.0f} {s.build:7.0f} {s.first_call:7.0f} {s.warmup:7.0f} "
              f"{s.samples:7.0f} {s.other:7.0f}")
    whole = sum(totals.values())
    if whole:
        print("share of the measured processes' time: " + ", ".join(f"{k} {v / whole:.0%}" for k, v in totals.items()))
    print()
    print(f"{'benchmark':32s} {'variants':>8s} {'sd sample':>9s} {'sd process':>10s} {'c process':>9s} "
          f"{'c sample':>8s} {'n now':>5s} {'n K&J':>5s}")
    for b in by_benchmark(found)[:args.top]:
        print(f"{b.benchmark:32s} {b.variants:8d} {b.sd_sample:9.1%} {b.sd_process:10.1%} {b.c_process:8.2f}s "
              f"{b.c_sample * 1e3:6.0f}ms {b.samples_now:5.0f} {b.best_samples:5.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
