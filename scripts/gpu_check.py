"""Seeds 002/004 (and a few cheap others) on JAX and PyTorch, GPU and CPU, on a machine without TF or Docker.

For a machine with an NVIDIA GPU, Python 3.11+, JAX and PyTorch installed (with
CUDA), no TensorFlow, no Docker and no network, holding this repository and a
Keras 3 wheel. It writes a matrix file of four existing-environment cells
(``python = "/path/bin/python"``: nothing is built or installed into them):

    jax-gpu     KERAS_BACKEND=jax
    jax-cpu     KERAS_BACKEND=jax, JAX_PLATFORMS=cpu
    torch-gpu   KERAS_BACKEND=torch
    torch-cpu   KERAS_BACKEND=torch, CUDA_VISIBLE_DEVICES=""

and runs ``python -m tfmatrix matrix`` on it at the ``seed`` preset within a time
budget (``--budget``, 8 minutes by default, the report included): the claims'
variants only, in sequential rounds (``--rounds auto``: after round 2 only the
lines still open run again), and a round after the first only for the open
lines that fit the time left, cheapest first; what the budget left open is
printed at the end and said in the report beside each line. ``--bench
PATTERN`` measures those benchmarks whole instead (the Devices section's
breadth), ``--rounds`` fixed rounds, within the same budget. Every cell file,
log and the report go under ``OUT/reports``. A GPU cell whose framework sees no
GPU fails loudly (the suite's own check), so a silent CPU run cannot pass for a
GPU one. ``--cpu-only`` writes the two CPU cells alone: a rehearsal on any
machine, before the loan (what a round costs there, that the wheels install).

    python3 scripts/gpu_check.py --out /tmp/gpu-check --keras-wheel /path/keras-3.X-py3-none-any.whl
    python3 scripts/gpu_check.py --out /tmp/gpu-check --budget 5m --claims all
    python3 scripts/gpu_check.py --out /tmp/gpu-check --dry-run     # write the matrix file, print the command

``--keras-wheel``: installed into ``OUT/venv``, a virtualenv that sees the
system's packages (``--system-site-packages``: its JAX and PyTorch), with
``pip --no-index`` (no network): Keras's own dependencies (absl-py, h5py,
namex, optree, rich, ml-dtypes) must be installed already or be wheels in
``--wheels DIR``. Without it, the interpreter given by ``--python`` (this one by
default) must import keras. tfmatrix itself runs in this interpreter and needs
pandas, jinja2, scipy and rich (checked first).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# ``--bench all``: the seed 002/004 benchmarks and a few cheap others, whole (the Devices section's breadth)
BENCHES = ("tensor_ops.*", "graphs.power*", "graphs.matmul_bias*", "graphs.tracing*", "inference.tiny*",
           "compiled.application*")
BUDGET = "8m"
HOST_MODULES = ("pandas", "jinja2", "scipy", "rich")


@dataclass(frozen=True)
class CheckCell:
    """One cell of the check: a framework on a device, and the environment that makes it so."""

    name: str
    backend: str
    target: str
    env: tuple[tuple[str, str], ...]


CELLS = (
    # XLA_PYTHON_CLIENT_PREALLOCATE: JAX would take 75% of the GPU's memory at its first op
    CheckCell("jax-gpu", "jax", "gpu", (("KERAS_BACKEND", "jax"), ("XLA_PYTHON_CLIENT_PREALLOCATE", "false"))),
    CheckCell("jax-cpu", "jax", "cpu", (("KERAS_BACKEND", "jax"), ("JAX_PLATFORMS", "cpu"))),
    CheckCell("torch-gpu", "torch", "gpu", (("KERAS_BACKEND", "torch"),)),
    CheckCell("torch-cpu", "torch", "cpu", (("KERAS_BACKEND", "torch"), ("CUDA_VISIBLE_DEVICES", ""))),
)


def toml_string(text: str) -> str:
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def matrix_toml(python: str, preset: str = "seed", cells: tuple[CheckCell, ...] = CELLS,
                presets: tuple[str, ...] = ()) -> str:
    """The matrix file: one existing-environment cell per (framework, device), all in ``python``; with several
    ``presets``, one per (framework, device, preset), named ``jax-gpu-quick``: the report pools a pair's presets,
    so each size axis has as many points as presets (the GPU's crossover)."""
    lines = ["# written by scripts/gpu_check.py: Keras 3 on JAX and PyTorch, GPU and CPU, in one existing",
             "# environment (no TensorFlow, nothing installed by tfmatrix)", "",
             "[matrix]", f"preset = {toml_string(preset)}", 'timeout = "2h"', ""]
    for cell in cells:
        env = ", ".join(f"{k} = {toml_string(v)}" for k, v in cell.env)
        for each in presets or (None,):
            name = cell.name if each is None else f"{cell.name}-{each}"
            lines += ["[[cell]]", f"name = {toml_string(name)}", f"python = {toml_string(python)}",
                      f"target = {toml_string(cell.target)}", f"env = {{ {env} }}"]
            lines += [f"preset = {toml_string(each)}", ""] if each is not None else [""]
    return "\n".join(lines)


def matrix_command(matrix: Path, reports: Path, rounds: str = "auto", preset: str | None = "seed",
                   benches: tuple[str, ...] = (), budget: str | None = BUDGET, claims: str = "seeds") -> list[str]:
    """``python -m tfmatrix matrix`` on the check's matrix file, existing cells only (``--runner venv``: no Docker).

    No ``benches``: the ``claims``' variants in ``rounds`` (``auto``: sequential rounds); ``benches``: those
    benchmarks whole. ``budget``: the run's time budget (None: none); ``preset`` None: each cell's own."""
    cmd = [sys.executable, "-m", "tfmatrix", "matrix", "--matrix", str(matrix),
           *(["--preset", preset] if preset else []),
           "--rounds", rounds, "--runner", "venv", "--reports", str(reports), "--redo"]
    if budget:
        cmd += ["--budget", budget]
    if not benches:
        return cmd + ["--variants", "claims", "--claims", claims]
    for pattern in benches:
        cmd += ["--bench", pattern]
    return cmd


def left_open(reports: Path) -> list[str]:
    """The claim lines the run's budget stopped, one text each ("seed_002 in jax-cpu: still open after round 2:
    the budget left 0:20 ..."), read from the cell files."""
    import json

    out = []
    for path in sorted((reports / "cells").glob("*.json")):
        try:
            config = json.loads(path.read_text())["results"]["config"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        schedule = config.get("schedule") or {}
        for row in (schedule.get("sequential") or {}).get("lines") or []:
            if "budget" in str(row[5]):
                out.append(f"{row[0]} in {row[1]}: {row[5]}")
        if schedule.get("budget"):
            cut = schedule["budget"]
            out.append(f"{path.stem}: {cut['rounds']} of the {schedule.get('rounds_asked')} rounds asked")
    return out


def missing_host_modules(modules: tuple[str, ...] = HOST_MODULES) -> list[str]:
    import importlib.util

    return [m for m in modules if importlib.util.find_spec(m) is None]


PROBE = """
import importlib, importlib.util, json, sys
out = {"python": sys.version.split()[0], "tensorflow": importlib.util.find_spec("tensorflow") is not None}
for name in ("keras", "jax", "torch"):
    try:
        out[name] = importlib.import_module(name).__version__
    except Exception as e:
        out[name] = "MISSING: %s: %s" % (type(e).__name__, e)
try:
    import jax
    out["jax_devices"] = [d.platform for d in jax.devices()]
except Exception as e:
    out["jax_devices"] = str(e)
try:
    import torch
    out["torch_cuda"] = torch.cuda.is_available()
except Exception as e:
    out["torch_cuda"] = str(e)
print(json.dumps(out))
"""


def probe(python: str) -> dict:
    """What the cells' interpreter holds: keras, jax, torch and whether each sees a GPU."""
    import json

    env = dict(os.environ, KERAS_BACKEND="jax")       # Keras 3 imports TensorFlow when no backend is named
    done = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["?"]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def problems(facts: dict) -> list[str]:
    """What stops the check in the cells' interpreter (an empty list: go)."""
    if "error" in facts:
        return [f"the interpreter failed to start: {facts['error']}"]
    out = [f"{m}: {facts[m]}" for m in ("keras", "jax", "torch") if str(facts.get(m, "")).startswith("MISSING")]
    if facts.get("tensorflow"):
        out.append("tensorflow is installed here: the check is for an environment without it")
    return out


def install_keras(wheel: Path, venv: Path, wheels: Path | None) -> str:
    """``venv`` (seeing the system's JAX and PyTorch) with the Keras wheel installed offline; its python."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    cmd = [str(python), "-m", "pip", "install", "--no-index", str(wheel)]
    if wheels is not None:
        cmd += ["--find-links", str(wheels)]
    subprocess.run(cmd, check=True)
    return str(python)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 scripts/gpu_check.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="where the matrix file, the venv and reports/ go")
    p.add_argument("--python", default=sys.executable, help="the cells' interpreter (default: this one)")
    p.add_argument("--keras-wheel", type=Path, help="a Keras 3 wheel to install into OUT/venv first")
    p.add_argument("--wheels", type=Path, help="a directory of wheels for Keras's dependencies (offline)")
    p.add_argument("--rounds", help="auto: sequential rounds, the open lines again (default); N: fixed rounds "
                                    "(default 2 with --bench)")
    p.add_argument("--budget", default=BUDGET, help="the run's time budget, report included (8m, 480s; default "
                                                    f"{BUDGET}); none: no budget")
    p.add_argument("--claims", default="seeds", help="the claim families to answer (seeds, today, all)")
    p.add_argument("--preset", default="seed")
    p.add_argument("--presets", help="comma-separated presets, each cell once per preset (quick,seed: two sizes "
                                      "on every size axis for the GPU's crossover); replaces --preset")
    p.add_argument("--bench", action="append", help="benchmarks to run whole instead of the claims' variants "
                                                    "(globs; 'all': %s)" % " ".join(BENCHES))
    p.add_argument("--cpu-only", action="store_true", help="the two CPU cells alone: a rehearsal on a machine "
                                                           "without the GPU")
    p.add_argument("--dry-run", action="store_true", help="write the matrix file and print the command only")
    args = p.parse_args(argv)

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    missing = missing_host_modules()
    if missing and not args.dry_run:
        print(f"tfmatrix needs {', '.join(missing)} in {sys.executable}: install them (offline: pip install "
              "--no-index --find-links DIR ...) and run this again", file=sys.stderr)
        return 2
    python = args.python
    if args.keras_wheel is not None and not args.dry_run:
        python = install_keras(args.keras_wheel.resolve(), out / "venv", args.wheels)
    python = os.path.abspath(python)
    matrix = out / "gpu-check.toml"
    presets = tuple(p for p in (args.presets or "").split(",") if p)
    cells = tuple(c for c in CELLS if c.target == "cpu") if args.cpu_only else CELLS
    matrix.write_text(matrix_toml(python, args.preset, cells=cells, presets=presets))
    benches = tuple(b for pattern in args.bench or () for b in (BENCHES if pattern == "all" else (pattern,)))
    rounds = args.rounds or ("2" if benches else "auto")
    reports = out / "reports"
    cmd = matrix_command(matrix, reports, rounds, None if presets else args.preset, benches,
                         None if args.budget == "none" else args.budget, args.claims)
    print("matrix file:", matrix)
    print("command:", " ".join(cmd))
    if args.dry_run:
        return 0
    facts = probe(python)
    print("cells' interpreter:", facts)
    stop = problems(facts)
    if stop:
        print("cannot run the check: " + "; ".join(stop), file=sys.stderr)
        return 2
    code = subprocess.run(cmd, cwd=ROOT).returncode
    cut = left_open(reports)
    if cut:
        print("left open by the budget (%d): %s" % (len(cut), "; ".join(cut)))
    print(f"exit {code}; cell files and logs in {reports / 'cells'}, the report in {reports}")
    return code


if __name__ == "__main__":
    sys.exit(main())
