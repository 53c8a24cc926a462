#!/usr/bin/env python3
"""Measure what tfmatrix itself costs around the benchmarks (issue targets, reported, never asserted).

Runs the same matrix selection twice through the real CLI, cold then warm:

* cold: an empty cache (wheelhouse and base images: a fresh ``TFMATRIX_CACHE``),
  no cell images or virtualenvs;
* warm: everything cached, ``--redo`` so every benchmark runs again.

For each run it reports the wall time, the time spent inside the suite (the sum
of the cells' ``results.wall_s``: fingerprint plus benchmark processes), the
rest (orchestration, image checks, container start, report) as a share of the
wall time, the wheels downloaded and the build time.

The default job is the one asv was timed on here (two TF versions, seven
benchmarks: 212 s cold, 139 s warm). ``--cells``/``--bench`` change it; e.g.
``--bench '*'`` with all CPU cells is the warm quick matrix.

    python scripts/bench_orchestration.py --runner docker
    python scripts/bench_orchestration.py --runner venv --cells '*-cpu' --bench '*'
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASV_JOB_CELLS = ["tf1.15-cpu", "tf2.21-keras3-cpu"]
ASV_JOB_BENCH = ["training.question*", "training.answer*", "inference.tiny*", "graphs.power*", "graphs.matmul_bias*",
                 "tensor_ops.matmul*", "input_pipelines.fit*"]


def run(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tfmatrix", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    return time.monotonic() - t0, proc


def summarize(label: str, wall: float, reports: Path) -> dict:
    docs = [json.loads(p.read_text()) for p in sorted((reports / "cells").glob("*.json"))]
    inside = sum(float((d.get("results") or {}).get("wall_s") or 0.0) for d in docs)
    downloaded = sum(int(((d.get("runner") or {}).get("wheels") or {}).get("downloaded") or 0) for d in docs)
    build = sum(float((d.get("timings") or {}).get("build_s") or 0.0) for d in docs)
    outside = wall - inside
    row = {"run": label, "wall_s": round(wall, 1), "suite_s": round(inside, 1), "outside_s": round(outside, 1),
           "outside_pct": round(100 * outside / wall, 1) if wall else None, "wheels_downloaded": downloaded,
           "build_s": round(build, 1), "cells": {d["name"]: d["status"] for d in docs},
           "suite_s_by_cell": {d["name"]: round(float((d.get("results") or {}).get("wall_s") or 0.0), 2) for d in docs}}
    print("%-5s wall %7.1f s  suite %7.1f s  outside %6.1f s (%4.1f%%)  wheels downloaded %3d  build %6.1f s  %s"
          % (label, wall, inside, outside, row["outside_pct"] or 0, downloaded, build,
             ", ".join("%s=%s" % kv for kv in row["cells"].items())))
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runner", default="docker", choices=("docker", "venv"))
    p.add_argument("--cells", action="append", help="cell globs (default: the asv job's two cells)")
    p.add_argument("--bench", action="append", help="benchmark globs (default: the asv job's seven)")
    p.add_argument("--matrix", default=str(ROOT / "matrix.toml"))
    p.add_argument("--out", default="build/bench-orchestration.json")
    p.add_argument("--keep-cache", action="store_true", help="cold run with the existing cache (images still rebuilt)")
    a = p.parse_args()
    cells = a.cells or ASV_JOB_CELLS
    bench = a.bench or ASV_JOB_BENCH
    work = Path(tempfile.mkdtemp(prefix="tfmatrix-bench-"))
    env = dict(os.environ)
    if not a.keep_cache:
        env["TFMATRIX_CACHE"] = str(work / "cache")
    env["TFMATRIX_VENV_ROOT"] = str(work / "venvs")
    if a.runner == "docker":
        import docker

        client = docker.from_env()
        for image in client.images.list(name="tfmatrix/*"):
            client.images.remove(image.id, force=True)
        if not a.keep_cache:
            for image in client.images.list(name="tfmatrix.local/*"):
                client.images.remove(image.id, force=True)
        client.images.prune(filters={"dangling": True})
        client.api.prune_builds()
    common = ["matrix", "--matrix", a.matrix, "--runner", a.runner, "--redo"]
    for c in cells:
        common += ["--only", c]
    for b in bench:
        common += ["--bench", b]
    rows = []
    for label in ("cold", "warm"):
        reports = work / label
        wall, proc = run(common + ["--reports", str(reports)], env)
        if proc.returncode not in (0, 1):
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        rows.append(summarize(label, wall, reports))
    out = ROOT / a.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"runner": a.runner, "cells": cells, "bench": bench, "runs": rows}, indent=1) + "\n")
    print("asv on the same job here: 212 s cold, 139 s warm; written %s" % out)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
