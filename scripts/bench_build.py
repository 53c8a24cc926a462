"""A cell's image build with each installer, back to back: pip, then uv (``[tooling] uv`` in releases.toml).

For each cell named, alternately (``--repeat`` times each): the cell rendered with
the installer forced, its image built from the same wheelhouse under a throwaway
tag, the seconds printed with the host reference before it, the image removed.
Nothing else should run meanwhile (2 cores: a test run beside it doubles the
figures). The figures in docs/measurements-log.md ("Where a cell's image build goes").

    python scripts/bench_build.py tf2.15-cpu keras3-torch-cpu [--repeat 2]
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suite.reference import probe  # noqa: E402
from tfmatrix.matrix import load  # noqa: E402
from tfmatrix.matrix.releases import load_table  # noqa: E402
from tfmatrix.provision import render, wheelhouse  # noqa: E402
from tfmatrix.runners.docker import DockerRunner  # noqa: E402
from tfmatrix.runners.engine import (
    build_image,  # noqa: E402
    engine,  # noqa: E402
)


def step_times(steps: list[tuple[float, str]], line: str) -> None:
    """The build's log lines: when each step (its instruction) began."""
    if line.startswith("Step ") or line.startswith("Successfully built"):
        steps.append((time.monotonic(), line.split(" : ")[-1].split()[0]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cells", nargs="+")
    ap.add_argument("--matrix", default="matrix.toml")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    table = load_table()
    cells = {c.name: c for c in load(Path(args.matrix)).cells}
    client = engine(timeout=600)
    if client is None:
        ap.error("no Docker engine answers: bash scripts/host-setup")
    runner = DockerRunner(client)
    for name in args.cells:
        cell = runner.effective_cell(cells[name])      # the base a run would use (a local stand-in)
        for i in range(args.repeat):
            for installer, tab in (("pip", dataclasses.replace(table, uv="")), ("uv", table)):
                rendered = render.render_cell(cell, tab)
                rendered = dataclasses.replace(rendered, tag=f"tfmatrix/bench-build:{installer}-{i}")
                wheels = wheelhouse.ensure(render.build_requirements(cell, tab), cell.python, log=lambda _: None)
                ref = probe()
                steps: list[tuple[float, str]] = []
                seconds = build_image(client, rendered, wheels, functools.partial(step_times, steps), nocache=True)
                size = client.images.get(rendered.tag).attrs.get("Size", 0) / 1e9
                client.images.remove(rendered.tag, force=True)
                print(f"{name} {installer}: {seconds:.1f} s build, {size:.2f} GB, host reference "
                      f"{1000 * ref:.1f} ms; " + ", ".join(
                    f"{a[1]} {b[0] - a[0]:.1f}" for a, b in zip(steps, steps[1:], strict=False)
                    if b[0] - a[0] >= 0.5), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
