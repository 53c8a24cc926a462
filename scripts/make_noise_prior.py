"""Write tfmatrix/data/noise_prior.toml from a reports directory's run archive: the prior a fresh machine borrows.

    python scripts/make_noise_prior.py REPORTS --measured "what run, which host reference"

Each variant id's unit variance is pooled over every cell and kept run that measured it (weighted by degrees of
freedom, ``analysis.runs.noise_model.pool``); the CONTROL rows (the reference workload) are left out. ``--scale``
and ``--d`` say how the prior is lent elsewhere (``analysis.runs.prior``; the seeded simulations of
tests/test_sequential.py check them). Run it on the reports directory of a default run with two rounds or more.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfmatrix.analysis.runs.noise_model import CONTROL, NoiseHistory, NoiseModel, history_of, pool  # noqa: E402
from tfmatrix.analysis.runs.prior import PRIOR_PATH  # noqa: E402
from tfmatrix.results.archive import read_archive  # noqa: E402

HEADER = """\
# The noise prior shipped with tfmatrix: each suite variant's unit variance (one round's log time, its process's
# shared effects out, moderated per benchmark) as one host measured it, pooled over the cells that measured it.
# A sequential run's looks borrow it for the variants this machine's own noise history does not know, lent
# `scale` times wider than measured on `d` degrees of freedom (tfmatrix/analysis/runs/prior.py says why; the
# seeded simulations in tests/test_sequential.py check the false-alarm rate with a host twice as noisy).
# Written by scripts/make_noise_prior.py; re-measure with a default run of two rounds or more and
#   python scripts/make_noise_prior.py REPORTS --measured "..."
"""


def by_variant(history: NoiseHistory) -> dict[str, tuple[float, float]]:
    """Each variant id's variance pooled over every kept run and cell that measured it (``pool``, each (run, cell)
    one model keyed by the variant id alone), with the degrees of freedom summed, not capped."""
    per_cell = [NoiseModel({("", vid): v for (c, vid), v in m.variances.items() if c == cell and vid != CONTROL})
                for _, m in history.runs for cell in {c for c, _ in m.variances}]
    return {vid: v for (_, vid), v in pool(per_cell, max_d=math.inf).variances.items()}


def toml_text(variances: dict[str, tuple[float, float]], scale: float, d: float, measured: str) -> str:
    lines = [HEADER, "[prior]", f"scale = {scale}", f"d = {d}", f"measured = {json.dumps(measured)}", "",
             "[variances]   # variant id = variance (its degrees of freedom pooled over the cells)"]
    for vid, (s2, dof) in sorted(variances.items()):
        lines.append(f"{json.dumps(vid)} = {s2:.6g}   # d = {dof:g}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", type=Path, help="a reports directory whose run archive (runs/) kept a default run")
    ap.add_argument("--measured", required=True, help="the run and its host reference, as the table will say")
    ap.add_argument("--scale", type=float, default=3.0)
    ap.add_argument("--d", type=float, default=6.0)
    ap.add_argument("--out", type=Path, default=PRIOR_PATH)
    args = ap.parse_args()
    history = history_of(read_archive(args.reports).runs)
    found = by_variant(history)
    args.out.write_text(toml_text(found, args.scale, args.d, args.measured))
    rows = {k for _, m in history.runs for k in m.variances if k[1] != CONTROL}
    print(f"{args.out}: {len(found)} variants from {len(rows)} (cell, variant) rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
