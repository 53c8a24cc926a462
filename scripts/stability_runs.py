"""``bench_stability.py``'s runs: the matrix (or a duet) measured through the real CLI, its progress into a log.

The commands are built apart from running them (``matrix_command``, ``duet_commands``), so that a test can parse
them with tfmatrix's own parser.
"""
from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

from stability_reads import cross_cell_ratios

ROOT = Path(__file__).resolve().parent.parent


def matrix_command(reports: Path, args: argparse.Namespace) -> list[str]:
    """``tfmatrix matrix --redo`` into ``reports``, every cell measured again, with the script's options."""
    cmd = ["matrix", "--redo", "--reports", str(reports), "--matrix", args.matrix, "--runner", args.runner]
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
    return cmd


def run_matrix(reports: Path, args: argparse.Namespace) -> float:
    """One run of the matrix into ``reports``; its wall time in seconds (exits with the log's tail if it wrote none)."""
    t0 = time.monotonic()
    stderr = run([sys.executable, "-m", "tfmatrix", *matrix_command(reports, args)],
                 reports.parent / f"{reports.name}.log")
    took = time.monotonic() - t0
    if not (reports / "cells").is_dir():
        sys.exit(stderr[-3000:])
    return took


def run(cmd: list[str], log: Path) -> str:
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


def duet_commands(a: str, b: str, args: argparse.Namespace) -> dict[str, list[str]]:
    """The same upgrade question (B against A) by each technique: the interleaved schedule of the two cells, a duet."""
    common = ["--matrix", args.matrix, "--runner", args.runner] + [x for pat in args.bench for x in ("--bench", pat)]
    if args.rounds:
        common += ["--rounds", str(args.rounds)]
    if args.preset:
        common += ["--preset", args.preset]
    return {"interleaved": ["matrix", "--redo", "--only", a, "--only", b, *common],
            "duet": ["duet", a, b, *common]}


def duet_versus_interleaved(work: Path, a: str, b: str, args: argparse.Namespace) -> None:
    """The same upgrade question by each technique, twice each, alternating; B/A run-to-run agreement."""
    how = duet_commands(a, b, args)
    walls: dict[str, list[float]] = {k: [] for k in how}
    for rep in (1, 2):
        for kind, cmd in how.items():
            out = work / f"{kind}{rep}"
            t0 = time.monotonic()
            run([sys.executable, "-m", "tfmatrix", *cmd, "--reports", str(out)], work / f"{kind}{rep}.log")
            walls[kind].append(time.monotonic() - t0)
            print(f"{kind} run {rep}: {walls[kind][-1]:.0f} s", flush=True)
    for kind in how:
        print(f"{kind}: {', '.join(f'{w:.0f} s' for w in walls[kind])}; B/A run 1 against run 2:")
        for line in cross_cell_ratios(work / f"{kind}1" / "cells", work / f"{kind}2" / "cells"):
            print("  " + line)
