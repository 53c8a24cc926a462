#!/usr/bin/env python3
"""Does the series name a step, and only a real one? The series goals on real kept runs (reported, never asserted).

Runs the same cell again and again (an existing environment: ``--python``,
default the tests' Keras 3 virtualenv), each run the matrix command with a
user file of ``KINDS`` x ``CASES`` NumPy variants, ``REPS`` calls of their
work per timed call. From run ``--step-at`` on, one variant does 20% more
work (12 calls for 10); from run ``--whole-at`` on, every variant does.
Each run's report keeps the run (``reports/runs/``); after each run the
script reads the series as ``tfmatrix series`` does and prints after how
many runs the one variant's step and the whole file's were named, and every
step named in a variant that never changed (a false step).

    python scripts/bench_series.py --runs 10 --step-at 4 --whole-at 7 --out /tmp/series
    python scripts/bench_series.py --runs 10 --step-at 99 --whole-at 99 --cases 25 --out /tmp/null   # false steps
    python scripts/bench_series.py --runs 5 --whole-at 3 --busy 1:2,3:1 --out /tmp/drift   # a drifting host
    python scripts/bench_series.py --wander /tmp/null/reports ...   # the whole-cell wander for noise_tails.toml

``--busy RUN:N`` runs N busy processes beside run RUN (other work on the
host: its reference workload moves as on a busy day).

Measure with nothing else running on the host.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPS = 10
KINDS = ("matmul", "sum", "sort", "cumsum")
CASES = 2
# NumPy's 96x96 matmul runs at one of two speeds per process here (about 190 or 340 us: a process's state), so
# with three processes a run its run mean jumps; the changed variant is a sort by default (--changed matmul: the
# harder case)

TEMPLATE = '''"""bench_series's file: {reps} calls of the work, or {more} where ONE or WHOLE changed them."""
from suite.api import UserBenchmark

ONE = {one}          # series.work[kind={changed},case<{ncases}] do 20% more work ("all": of every kind)
WHOLE = {whole}      # every variant does


class Work(UserBenchmark):
    name = "series.work"
    params = {{"kind": {kinds!r}, "case": list(range({cases}))}}
    apis = ("tf",)

    def setup(self, p, env):
        import numpy as np
        changed = WHOLE or (ONE and p["case"] < {ncases} and "{changed}" in ("all", p["kind"]))
        reps = {more} if changed else {reps}
        x = env.rng(p["case"]).rand(96, 96)
        work = {{"matmul": lambda: x @ x, "sum": lambda: np.sum(x * x), "sort": lambda: np.sort(x, axis=None),
                "cumsum": lambda: np.cumsum(x)}}[p["kind"]]

        def step():
            for _ in range(reps):
                work()
        return step


BENCHMARKS = [Work()]
'''


def write_file(bench_dir: Path, one: bool, whole: bool, cases: int = CASES, changed: str = "sort",
               ncases: int = 1) -> None:
    bench_dir.mkdir(parents=True, exist_ok=True)
    # the same bytes while nothing changes: the series sees the file change only where it does (code_key)
    (bench_dir / "series_work.py").write_text(TEMPLATE.format(reps=REPS, more=REPS * 12 // 10, one=one,
                                                              whole=whole, kinds=KINDS, cases=cases, changed=changed,
                                                              ncases=ncases))


def named(reports: Path) -> list[tuple[str, str, str, int, int]]:
    """(variant, kind, first run after the step, runs after it, its index) of every step the series names now (a
    ``host`` step: nothing measured changed in its run)."""
    from tfmatrix.analysis.series.answers import cell_series
    from tfmatrix.results.archive import read_archive

    out = []
    for s in cell_series(read_archive(reports).runs):
        for v in s.stepped:
            out += [(v.variant, st.kind, st.when, st.after, st.index) for st in v.answer.steps]
    return out


def changed_ids(variants: list[str], changed: str, ncases: int) -> set[str]:
    """Which of the series' variant ids (``series.work[kind=sort,case=0,api=tf,mode=eager]``) the change touches."""
    out = set()
    for v in variants:
        m = re.search(r"kind=(\w+),case=(\d+)", v)
        if m and changed in ("all", m.group(1)) and int(m.group(2)) < ncases:
            out.add(v)
    return out


def summary(history: list[list[tuple[str, str, str, int, int]]], changed: set[str], step_at: int,
            variants: int) -> list[str]:
    """The goals' figures over the runs: after how many runs each changed variant was first named a regression at
    its step (within one run of it), and the steps named in variants that never changed, at the newest run."""
    first: dict[str, int] = {}
    for run, steps in enumerate(history):
        for v, kind, _, _, index in steps:
            if v in changed and kind == "regression" and abs(index - step_at) <= 1:
                first.setdefault(v, run)
    lines = []
    if changed and step_at < len(history):
        seen = len(history) - step_at
        for k in range(2, min(seen, 4) + 1):
            hits = sum(1 for r in first.values() if r <= step_at + k - 1)
            lines.append(f"changed variants named a regression with {k} runs at the new level: {hits} of "
                         f"{len(changed)}")
    newest = history[-1] if history else []
    others = [(v, kind) for v, kind, *_ in newest if v not in changed and not v.startswith("~")]
    unchanged = variants - len(changed)
    for kind in ("regression", "improvement", "host", "suspicious"):
        lines.append(f"unchanged variants with a {kind} step: {sum(1 for _, k in others if k == kind)} of "
                     f"{unchanged}")
    return lines


def busy(n: int) -> list[subprocess.Popen[bytes]]:
    """N processes that keep a core busy until killed: the host's other work."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def whole_wander(folders: list[Path]) -> str:
    """The whole-cell wander over every series kept in ``folders`` (unchanged runs): the figures for
    noise_tails.toml's ``[whole_cell]``."""
    import math

    from tfmatrix.analysis.series.answers import cell_series
    from tfmatrix.analysis.statistics.steps import pooled_wander
    from tfmatrix.results.archive import read_archive

    series = [s for f in folders for s in cell_series(read_archive(f).runs)]
    w = pooled_wander([s.whole.points for s in series])
    refs = [r.host_reference_s * 1000 for s in series for r in s.runs if r.host_reference_s]
    return (f"sd = {math.sqrt(w.var):.4f}, d = {w.d:.0f} (successive differences of {len(series)} series of "
            f"{sum(len(s.runs) for s in series)} runs; host reference {min(refs):.1f}-{max(refs):.1f} ms)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--step-at", type=int, default=4, help="the first run in which one variant is 20%% slower")
    ap.add_argument("--whole-at", type=int, default=7, help="the first run in which every variant is")
    ap.add_argument("--rounds", default="auto", help="a number, or auto: the default's sequential rounds")
    ap.add_argument("--cases", type=int, default=CASES, help="variants per kind of work (4 kinds)")
    ap.add_argument("--changed", choices=(*KINDS, "all"), default="sort",
                    help="the kind whose first --changed-cases cases get 20%% slower (all: every kind's)")
    ap.add_argument("--changed-cases", type=int, default=1)
    ap.add_argument("--python", default=str(ROOT / ".nox" / "cell-tf2.21-keras3-cpu" / "bin" / "python"))
    ap.add_argument("--busy", default="", help="RUN:N,...: N busy processes beside run RUN (a drifting host)")
    ap.add_argument("--wander", type=Path, nargs="+", help="print the whole-cell wander of these reports folders")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.wander:
        print(whole_wander(args.wander))
        return 0
    if args.out is None:
        ap.error("--out is required")
    hogs = {int(r): int(n) for r, n in (x.split(":") for x in args.busy.split(",") if x)}
    bench, reports = args.out / "benchmarks", args.out / "reports"
    matrix = args.out / "matrix.toml"
    matrix.parent.mkdir(parents=True, exist_ok=True)
    matrix.write_text(f'[suite]\npaths = ["benchmarks/"]\n\n[[cell]]\nname = "mine"\npython = "{args.python}"\n')
    history = []
    for run in range(args.runs):
        write_file(bench, run >= args.step_at, run >= args.whole_at, args.cases, args.changed, args.changed_cases)
        started = time.monotonic()
        others = busy(hogs.get(run, 0))
        proc = subprocess.run([sys.executable, "-m", "tfmatrix", "matrix", "--matrix", str(matrix), "--reports",
                               str(reports), "--rounds", str(args.rounds), "--bench", "series.*", "--preset", "quick",
                               "--redo"], cwd=ROOT, capture_output=True, text=True)
        for p in others:
            p.kill()
            p.wait()
        if proc.returncode != 0:
            print(proc.stderr[-3000:])
            return 1
        steps = named(reports)
        history.append(steps)
        print(f"run {run}: {time.monotonic() - started:.0f} s{f', {len(others)} busy beside it' if others else ''}; "
              "steps named: "
              + ("; ".join(f"{v} {k} from {w[:19]} ({a} after)" for v, k, w, a, _ in steps) or "none"), flush=True)
    subprocess.run([sys.executable, "-m", "tfmatrix", "series", "--reports", str(reports)], cwd=ROOT, check=False)
    from tfmatrix.analysis.series.answers import cell_series
    from tfmatrix.results.archive import read_archive
    ids = [v.variant for s in cell_series(read_archive(reports).runs) for v in s.variants]
    changed = changed_ids(ids, args.changed, args.changed_cases) if args.step_at < args.runs else set()
    print("\n".join(summary(history, changed, args.step_at, len(ids))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
