#!/usr/bin/env python3
"""Does A/B inside one run find small changes? The A/B goals, measured (reported, never asserted).

Writes two versions of one benchmark file: every variant runs ``REPS``
TensorFlow ops per call in ``base``; in ``head`` 60% of the variants are
unchanged, a sixth each do 5%, 10% or 20% more work (21, 22 or 24 ops for 20).
Runs them with ``tfmatrix ab`` through the real CLI (Docker, the cell's
image, the interleaved schedule, both sides window-mates) and prints the
goals: unchanged variants called different (<= 5%), the 5% and 10% changes
found (>= 80%, >= 90%), how many cases the order test called
order-dependent (which side went first moved them: no verdict), and what the
run cost.

    python scripts/bench_ab.py --cell tf2.15-cpu            # ab's rounds and samples, the seed preset
    python scripts/bench_ab.py --rounds 8 --samples 16 --cases 15

Measure with nothing else running on the host.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPS = 20
CHANGES = (0, 0, 0, 5, 10, 20)      # per case, cycling: half unchanged, a sixth each at +5%, +10%, +20%
KINDS = ("matmul64", "matmul16", "add", "reduce")

TEMPLATE = '''"""bench_ab's file, {side}: {reps} ops per call, or more where this side changed them."""
from suite.api import UserBenchmark

HEAD = {head}
CHANGES = {changes!r}
REPS = {reps}


class Work(UserBenchmark):
    name = "ab.work"
    params = {{"kind": {kinds!r}, "case": list(range({cases}))}}
    apis = ("tf",)

    def setup(self, p, env):
        tf = env.tf
        change = CHANGES[p["case"] % len(CHANGES)] if HEAD else 0
        reps = REPS + REPS * change // 100
        size = 64 if p["kind"] == "matmul64" else 16
        x = tf.constant(env.rng(p["case"]).rand(size, size).astype("float32"))
        op = {{"matmul64": tf.matmul, "matmul16": tf.matmul, "add": tf.add,
              "reduce": lambda a, b: tf.reduce_sum(a)}}[p["kind"]]

        def step():
            for _ in range(reps):
                op(x, x)
        return step


BENCHMARKS = [Work()]
'''


def write_files(where: Path, cases: int) -> tuple[Path, Path]:
    out = []
    for side, head in (("base", False), ("head", True)):
        path = where / side / "bench_ab_work.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TEMPLATE.format(side=side, head=head, changes=CHANGES, reps=REPS, kinds=KINDS, cases=cases))
        out.append(path)
    return out[0], out[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", action="append", default=[], help="cell(s) to measure in (default tf2.15-cpu)")
    ap.add_argument("--rounds", type=int, help="rounds (default: ab's)")
    ap.add_argument("--cases", type=int, default=25, help="cases per kind (4 kinds; default 25: 100 variants a side)")
    ap.add_argument("--preset", default="seed")
    ap.add_argument("--runner", choices=("docker", "venv"), help="where the cells run (default: ab's, Docker)")
    ap.add_argument("--samples", type=int, help="samples per process (default: ab's)")
    ap.add_argument("--work", help="directory for the files and the run (default: a new one under /tmp)")
    ap.add_argument("--analyse-only", action="store_true", help="re-read the run in --work")
    args = ap.parse_args()
    from tfmatrix.analysis.cells import load_dir
    from tfmatrix.analysis.compare.ab import ROUNDS, SAMPLES, compare_sides
    from tfmatrix.analysis.runs.noise_model import history_at, pooled, run_ids
    from tfmatrix.analysis.stopping import run_alpha, run_cap

    work = Path(args.work or tempfile.mkdtemp(prefix="bench-ab-"))
    cells = args.cell or ["tf2.15-cpu"]
    base, head = write_files(work, args.cases)
    wall = None
    if not args.analyse_only:
        cmd = [sys.executable, "-m", "tfmatrix", "ab", str(base), str(head), "--preset", args.preset,
               "--reports", str(work / "run"), "--fail-on", "slower:0%", "--rows", "5"]
        if args.samples:
            cmd += ["--samples", str(args.samples)]
        if args.rounds:
            cmd += ["--rounds", str(args.rounds)]
        if args.runner:
            cmd += ["--runner", args.runner]
        for c in cells:
            cmd += ["--cell", c]
        t0 = time.monotonic()
        done = subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True)
        wall = time.monotonic() - t0
        (work / "ab.log").write_text(done.stdout + done.stderr)
        print(done.stdout[-3000:])
    loaded = load_dir(work / "run" / "cells").cells
    # as ab judged it: 5% over its looks; early cases' priors limited by the earlier ab runs' noise kept there
    result = compare_sides(loaded, alpha=run_alpha(loaded), cap=run_cap(loaded),
                           history=pooled(history_at(work / "run"), without=run_ids(loaded)))
    rounds_run = max((len(v.per_process) for c in loaded for v in c.variants if v.ok), default=0)
    by_change: dict[int, list[str]] = {}
    for v in result.variants:
        case = int(v.id.split("case=")[1].split(",")[0])
        by_change.setdefault(CHANGES[case % len(CHANGES)], []).append(v.verdict)
    print(f"A/B in one run: {len(result.variants)} variants, up to {args.rounds or ROUNDS} rounds ({rounds_run} run) x "
          f"{args.samples or SAMPLES} samples, cells {', '.join(cells)}, judged at {result.alpha:.2%}"
          + (f", wall {wall / 60:.1f} min" if wall else "") + f" (files and run in {work})")
    for change, verdicts in sorted(by_change.items()):
        called = sum(1 for x in verdicts if x in ("slower", "faster"))
        slower = sum(1 for x in verdicts if x == "slower")
        what = "called different" if change == 0 else "found slower"
        share = (called if change == 0 else slower) / len(verdicts)
        goal = {0: "goal <= 5%", 5: "goal >= 80%", 10: "goal >= 90%"}.get(change, "")
        ordered = sum(1 for x in verdicts if x == "order-dependent")
        print(f"  +{change:2d}% work: {share:5.1%} {what} ({called if change == 0 else slower} of {len(verdicts)}; "
              f"{goal}); {ordered} order-dependent")
    mdes = sorted(v.ci.mde for v in result.variants if v.ci.mde == v.ci.mde)
    if mdes:
        print(f"  smallest change resolved (80%): median {mdes[len(mdes) // 2]:.1%}, best {mdes[0]:.1%}, "
              f"worst {mdes[-1]:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
