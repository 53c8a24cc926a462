"""What ``compare`` and its gate resolve at this host's noise: the figures in docs/measurement.md.

Synthetic matrices (``tests/matrix_model.py``: cells x slices of 5-35
variants, per-round SDs log-normal across variants) written as interleaved
cell files and judged on compare's real path (files, frame,
``variant_changes``, the gate). Seeded: the same figures every time.

    python scripts/bench_compare_noise.py              # every row, a few minutes on 2 cores
    python scripts/bench_compare_noise.py aa file      # some rows (aa, power, wander, file)

The old all-or-nothing prior guard (``--before``) is gone: it swapped a function of tfmatrix for its own, and a
script measures tfmatrix as it is (its figures stay in docs/measurements-log.md).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from matrix_model import Matrix, gate_fails, gate_mde, judged, vid  # noqa: E402

NOISES = {"this host 11.4%/22.1%": (0.114, 0.221), "review 7%/17%": (0.07, 0.17)}
SLICES = (5, 12, 20, 35)


def aa(tmp: Path) -> None:
    for label, (med, p90) in NOISES.items():
        for rounds in (2, 3, 5, 10):
            m = Matrix(cells=2, slices=SLICES, seed=rounds, sigma_median=med, sigma_p90=p90)
            rng = np.random.default_rng(100 + rounds)
            calls, prior = [], []
            for _ in range(6):
                changes = judged(m, tmp, rounds, rng)
                calls += [v.verdict in ("slower", "faster") for v in changes]
                prior += [bool(v.contrast and v.contrast.prior) for v in changes]
            print(f"aa {label} R={rounds}: unchanged called different {np.mean(calls):.1%}; "
                  f"contrasts with a prior {np.mean(prior):.0%}", flush=True)


def power(tmp: Path) -> None:
    for label, (med, p90) in NOISES.items():
        for kept in (0, 2):
            m = Matrix(cells=2, slices=SLICES, seed=7, sigma_median=med, sigma_p90=p90)
            starts = np.cumsum((0,) + SLICES[:-1])
            slowed = {(c, int(v)): 1.2 for c in range(m.cells) for v in starts}
            ids = {(m.cell_names()[c], vid(s, v)) for c, s, v in m.variants() if (c, v) in slowed}
            rng = np.random.default_rng(7)
            found, mdes, prior = [], [], []
            for _ in range(8):
                changes = judged(m, tmp, 3, rng, slower=slowed, kept=kept)
                found += [v.verdict == "slower" for v in changes if (v.cell_a, v.id) in ids]
                mdes.append(gate_mde(changes))
                prior += [bool(v.contrast and v.contrast.prior) for v in changes]
            print(f"power {label} R=3, {kept} kept runs: one variant a slice 20% slower found {np.mean(found):.0%}; "
                  f"gate MDE at the median variant {np.median(mdes):.0%}; contrasts with a prior {np.mean(prior):.0%}",
                  flush=True)


def wander(tmp: Path) -> None:
    """Variants that a run puts off beyond their rounds (2% / 9%, as real pairs show): 5 kept runs, with and without
    their run-to-run wander added to the contrasts (``runs.kept.run_spread``)."""
    med, p90 = NOISES["this host 11.4%/22.1%"]
    for gen in ({"wander_median": 0.02, "wander_p90": 0.09}, {}):
        m = Matrix(cells=2, slices=SLICES, seed=11, sigma_median=med, sigma_p90=p90, **gen)
        starts = np.cumsum((0,) + SLICES[:-1])
        slowed = {(c, int(v)): 1.2 for c in range(m.cells) for v in starts}
        ids = {(m.cell_names()[c], vid(s, v)) for c, s, v in m.variants() if (c, v) in slowed}
        for kept, spread in ((0, False), (5, False), (5, True), (2, True)):
            rng = np.random.default_rng(11)
            aa_calls, found, mdes = [], [], []
            for _ in range(8):
                changes = judged(m, tmp, 3, rng, slower=slowed, kept=kept, wander=spread)
                for v in changes:
                    (found if (v.cell_a, v.id) in ids else aa_calls).append(v.verdict in ("slower", "faster"))
                mdes.append(gate_mde(changes))
            print(f"wander {'2%/9%' if gen else 'none'}, {kept} kept runs, wander {'added' if spread else 'not added'}:"
                  f" unchanged called different {np.mean(aa_calls):.1%}; one variant a slice 20% slower found "
                  f"{np.mean(found):.0%}; gate MDE at the median variant {np.median(mdes):.0%}", flush=True)


def whole_file(tmp: Path) -> None:
    for label, (med, p90) in NOISES.items():
        for normalise, kept in (("cell", 0), ("control", 0), ("control", 5)):
            m = Matrix(cells=2, slices=(10, 10), seed=4, sigma_median=med, sigma_p90=p90)
            rng = np.random.default_rng(40)
            slow = {(c, v): 1.2 for c, _, v in m.variants()}
            fails, unchanged = [], []
            for _ in range(40):
                fails.append(gate_fails(judged(m, tmp, 3, rng, normalise, slow, kept=kept)))
                unchanged.append(gate_fails(judged(m, tmp, 3, rng, normalise, kept=kept)))
            print(f"file {label} --normalise {normalise}, {kept} kept runs: every variant of a 40-variant file 20% "
                  f"slower fails the gate {np.mean(fails):.0%}; unchanged {np.mean(unchanged):.0%}", flush=True)


ROWS = {"aa": aa, "power": power, "wander": wander, "file": whole_file}

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*", metavar="ROW", help=f"the rows ({', '.join(ROWS)}; default: every row)")
    wanted = ap.parse_args().rows
    if set(wanted) - set(ROWS):
        ap.error(f"no row {sorted(set(wanted) - set(ROWS))[0]}; choose from {', '.join(ROWS)}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in ROWS.items():
            if not wanted or name in wanted:
                fn(Path(tmp))
