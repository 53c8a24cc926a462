#!/usr/bin/env python3
"""Does Keras K run on backend release R? The [RUN] source of releases.toml's backend rows (reported, not asserted).

For each KERAS:RELEASE pair: a virtualenv of ``keras==KERAS`` and the
backend release's CPU lines from the table (``jax[cpu]==0.6.2``,
``torch==2.6.0``), then a Dense model compiled with ``jit_compile``, fit,
``train_on_batch``, ``predict`` and called, in a fresh process with
``KERAS_BACKEND`` set. One line a pair: OK with the versions imported, or
the install's or the run's last error line.

    python scripts/backend_smoke.py --backend jax 3.10.0:0.4.38 3.15.1:0.5.3
    python scripts/backend_smoke.py --backend torch 3.15.1:2.6.0 --keep /tmp/smoke

Downloads from PyPI (a torch release pulls its CUDA wheels, a few GB).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SNIPPET = """
import numpy as np, keras
m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
m.compile(optimizer="adam", loss="mse", jit_compile=True)
x = np.random.rand(64, 4).astype("float32"); y = np.random.rand(64, 1).astype("float32")
m.fit(x, y, epochs=1, batch_size=16, verbose=0); m.train_on_batch(x[:16], y[:16]); m.predict(x, verbose=0); m(x)
import importlib.metadata as md
print("OK keras", keras.__version__, "{backend}", md.version("{dist}"), "numpy", np.__version__)
"""


def lines_for(backend: str, release: str) -> list[str]:
    """The table's CPU requirement lines of ``backend`` at ``release`` (an exact patch)."""
    from tfmatrix.matrix.releases import load_table

    k3 = load_table().keras3
    assert k3 is not None
    row = k3.pinned[backend].release(release)
    if row is None:
        raise SystemExit(f"{backend} {release} is not in releases.toml")
    return row.lines("cpu", release)


def smoke(backend: str, keras: str, release: str, where: Path, python: str) -> str:
    env_dir = where / f"keras{keras}-{backend}{release}"
    if not env_dir.exists():
        subprocess.run([python, "-m", "venv", str(env_dir)], check=True)
    pip = subprocess.run([str(env_dir / "bin" / "pip"), "install", "-q", f"keras=={keras}",
                          *lines_for(backend, release)], capture_output=True, text=True)
    if pip.returncode != 0:
        return f"INSTALL FAILED: {(pip.stderr.strip().splitlines() or ['?'])[-1]}"
    dist = "jax" if backend == "jax" else "torch"
    run = subprocess.run([str(env_dir / "bin" / "python"), "-c", SNIPPET.format(backend=backend, dist=dist)],
                         capture_output=True, text=True, env={"KERAS_BACKEND": backend, "PATH": "/usr/bin:/bin"})
    out = (run.stdout.strip().splitlines() or [""])[-1]
    if run.returncode == 0 and out.startswith("OK"):
        return out
    return f"FAILED: {(run.stderr.strip().splitlines() or ['?'])[-1]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("jax", "torch"), required=True)
    ap.add_argument("pairs", nargs="+", metavar="KERAS:RELEASE")
    ap.add_argument("--python", default=sys.executable, help="the interpreter the virtualenvs are made from")
    ap.add_argument("--keep", type=Path, help="keep the virtualenvs here (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for pair in args.pairs:
            keras, release = pair.split(":")
            answer = smoke(args.backend, keras, release, where, args.python)
            print(f"keras {keras} on {args.backend} {release}: {answer}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
