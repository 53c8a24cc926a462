#!/usr/bin/env python3
"""How reproducible are the suite's numbers? (issue target, reported, never asserted)

Runs one cell twice with the same preset (default: standard) through the real
CLI and compares the two runs variant by variant:

* the share of variants whose medians agree within 5% (target: at least 90%
  on a 2-core machine), and whether the ones that do not are the ones flagged
  unstable in either run;
* the harness overhead per timed call (the ``selfcheck.overhead`` median;
  target: at most 1 microsecond).

    python scripts/bench_stability.py --cell tf2.15-cpu
    python scripts/bench_stability.py --cell tf1.15-cpu --runner docker --only 'training.*'
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 0.05


def run_once(cell: str, preset: str, runner: str, only: list[str], reports: Path) -> dict:
    args = [sys.executable, "-m", "tfmatrix", "cell", cell, "--preset", preset, "--runner", runner,
            "--reports", str(reports)]
    for o in only:
        args += ["--only", o]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    doc_path = reports / "cells" / ("%s.json" % cell)
    if not doc_path.exists():
        sys.exit(proc.stderr[-3000:])
    doc = json.loads(doc_path.read_text())
    if doc["status"] != "ok":
        sys.exit("%s: %s" % (doc["status"], doc["reason"]))
    return doc


def compare(a: dict, b: dict) -> dict:
    ra = {r["id"]: r for r in a["results"]["records"] if r["status"] == "ok"}
    rb = {r["id"]: r for r in b["results"]["records"] if r["status"] == "ok"}
    rows = []
    for vid in sorted(set(ra) & set(rb)):
        ma, mb = ra[vid]["stats"]["median"], rb[vid]["stats"]["median"]
        diff = abs(ma - mb) / min(ma, mb)
        rows.append({"id": vid, "median_1": ma, "median_2": mb, "diff": diff,
                     "unstable": bool(ra[vid]["unstable"] or rb[vid]["unstable"])})
    within = [r for r in rows if r["diff"] <= TOLERANCE]
    outside = [r for r in rows if r["diff"] > TOLERANCE]
    flagged = [r for r in outside if r["unstable"]]
    overhead = [r["stats"]["median"] for r in a["results"]["records"] if r["benchmark"] == "selfcheck.overhead"
                and r["status"] == "ok"]
    return {
        "variants": len(rows),
        "within_5pct": len(within),
        "within_share": len(within) / len(rows) if rows else None,
        "outside": len(outside),
        "outside_flagged_unstable": len(flagged),
        "outside_not_flagged": [r["id"] for r in outside if not r["unstable"]],
        "max_diff": max((r["diff"] for r in rows), default=None),
        "harness_overhead_s": overhead[0] if overhead else None,
        "rows": rows,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cell", required=True)
    p.add_argument("--preset", default="standard", choices=("quick", "standard", "full"))
    p.add_argument("--runner", default="venv", choices=("venv", "docker"))
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--out", default="build/bench-stability.json")
    a = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tfmatrix-stability-"))
    docs = [run_once(a.cell, a.preset, a.runner, a.only, work / ("run%d" % i)) for i in (1, 2)]
    result = compare(*docs)
    result.update({"cell": a.cell, "preset": a.preset, "runner": a.runner,
                   "run_s": [d["timings"].get("run_s") for d in docs]})
    out = ROOT / a.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    share = result["within_share"]
    print("%s, %s preset, %s runner: %d of %d variants agree within 5%% (%.0f%%; target >= 90%%); "
          "%d outside, %d of them flagged unstable; largest difference %.1f%%"
          % (a.cell, a.preset, a.runner, result["within_5pct"], result["variants"], 100 * (share or 0),
             result["outside"], result["outside_flagged_unstable"], 100 * (result["max_diff"] or 0)))
    if result["harness_overhead_s"] is not None:
        print("harness overhead per timed call: %.0f ns (target <= 1000 ns)" % (result["harness_overhead_s"] * 1e9))
    for vid in result["outside_not_flagged"]:
        print("  outside 5%% but not flagged unstable: %s" % vid)
    print("runs took %s s; details in %s" % (", ".join("%.0f" % s for s in result["run_s"] if s), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
