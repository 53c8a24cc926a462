"""Synthetic matrices written as interleaved cell files, at this host's measured noise, for ``compare``'s real path.

``verdict_model`` puts every variant of a side in one process a round and one
family; a real run does not. Here a matrix is several cells, each of several
slices (the variants one process measures in a round: 5-35 of them), and a run
is a directory of cell files (``report_docs.write_interleaved_cell``) that
``compare`` loads, frames, judges and gates as it would a real one. On the log
scale, per variant v of slice s in cell c, run k, round r, sample i::

    log t = mu_v + delta_v + h[c,k] + u[v,k] + a[c,s,k,r] + w[v,k,r] + e[v,k,r,i]

``h`` ~ N(0, run_sd): the host's move of a whole cell in that run (its
containers' reference workload moves with it); ``a`` ~ N(0, process_sd): the
slice process's own state (the reference does not see it); ``w`` ~ N(0,
sigma_v), sigma_v log-normal across variants (median and 90th percentile as
measured: 11.4% / 22.1% on 2026-11-26, 7% / 17% in the statistics review), the
same variant equally noisy in every run; ``u[v,k]`` ~ N(0, tau_v): how far the
run puts the variant off beyond its rounds (tau_v log-normal, median and 90th
percentile ``wander_median`` / ``wander_p90``; real back-to-back pairs of this
host: about 2% / 9%; 0 unless given); ``w`` is Student t (``tail_df``) instead of
normal where given: now and then one process is far off for one variant, as
on this host (``statistics.tails``); ``e``: one-sided 1% sample noise and a
x3 outlier with probability 2%; 4 samples a process. The reference workload is
timed before and after each slice process: ``h`` and 2% noise of its own.
"""
from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from host_noise import HOST, sds
from report_docs import record, write_interleaved_cell

from tfmatrix.analysis.compare.result import VariantChange
from tfmatrix.analysis.compare.sets import load_side, variant_changes
from tfmatrix.analysis.frame import build_frame
from tfmatrix.analysis.runs.control import control_moves
from tfmatrix.analysis.runs.kept import history_model, run_means, run_spread
from tfmatrix.analysis.statistics.multiplicity import gate
from tfmatrix.analysis.statistics.tails import Null


@dataclass(frozen=True)
class Matrix:
    cells: int = 3
    slices: tuple[int, ...] = (5, 12, 20, 35)       # variants a slice, per cell
    sigma_median: float = HOST[0]
    sigma_p90: float = HOST[1]
    process_sd: float = 0.05
    run_sd: float = 0.05
    reference_sd: float = 0.02
    samples: int = 4
    seed: int = 0
    wander_median: float = 0.0
    wander_p90: float = 0.0
    tail_df: float = 0.0        # > 2: a round's own noise w is Student t with these df (unit SD x sigma_v), not normal
    sigma: np.ndarray = field(init=False, repr=False, compare=False)
    tau: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.seed)
        object.__setattr__(self, "sigma", sds(rng, (self.cells, sum(self.slices)), self.sigma_median, self.sigma_p90))
        tau = np.zeros((self.cells, sum(self.slices)))
        if self.wander_median > 0:
            tau = sds(np.random.default_rng(self.seed + 1), tau.shape, self.wander_median, self.wander_p90)
        object.__setattr__(self, "tau", tau)

    def cell_names(self) -> list[str]:
        return [f"syn{c}-cpu" for c in range(self.cells)]

    def variants(self) -> list[tuple[int, int, int]]:
        """(cell, slice, variant number in its cell) for every variant of the matrix."""
        out = []
        for c in range(self.cells):
            v = 0
            for s, size in enumerate(self.slices):
                out += [(c, s, v + i) for i in range(size)]
                v += size
        return out


def params(slice_no: int, v: int) -> dict[str, object]:
    return {"s": slice_no, "n": v, "api": "tf.keras", "mode": "eager"}


def vid(slice_no: int, v: int) -> str:
    return str(record("syn.bench", params(slice_no, v), [1.0])["id"])


def write_run(m: Matrix, out: Path, run: int, rounds: int, rng: np.random.Generator,
              slower: dict[tuple[int, int], float] | None = None) -> Path:
    """One run of the matrix (``rounds`` rounds) as ``out/cells/*.json``; ``slower``: (cell, variant) -> factor."""
    for c, name in enumerate(m.cell_names()):
        host = rng.normal(0.0, m.run_sd)
        records, reference = [], []
        v0 = 0
        for s, size in enumerate(m.slices):
            state = rng.normal(0.0, m.process_sd, rounds)
            for r in range(rounds):
                ref = 0.015 * np.exp(host + rng.normal(0.0, m.reference_sd, 2))
                reference.append([r + 1, f"slice{s}", float(ref[0]), float(ref[1])])
            for v in range(v0, v0 + size):
                mu = math.log(1e-3 * (1 + v % 7)) + math.log((slower or {}).get((c, v), 1.0)) + host
                if m.wander_median > 0:
                    mu += rng.normal(0.0, m.tau[c, v])
                w = rng.normal(0.0, m.sigma[c, v], rounds) if m.tail_df <= 2 else \
                    m.sigma[c, v] * rng.standard_t(m.tail_df, rounds) * math.sqrt((m.tail_df - 2) / m.tail_df)
                e = np.abs(rng.normal(0.0, 0.01, (rounds, m.samples)))
                e += math.log(3.0) * (rng.random((rounds, m.samples)) < 0.02)
                logs = mu + (state + w)[:, None] + e
                rec = record("syn.bench", params(s, v), per_process=[[float(x) for x in row] for row in np.exp(logs)])
                rec["schedule"] = {"windows": [f"slice{s}-{run}:{r}" for r in range(rounds)],
                                   "rounds": [m.samples] * rounds, "stopped": ["repeats"] * rounds,
                                   "passes": list(range(1, rounds + 1))}
                records.append(rec)
            v0 += size
        write_interleaved_cell(out / "cells" / f"{name}.json", records, name, rounds, run,
                               container_reference=sorted(reference))
    return out / "cells"


def judged(m: Matrix, tmp: Path, rounds: int, rng: np.random.Generator, normalise: str = "cell",
           slower: dict[tuple[int, int], float] | None = None, kept: int = 0,
           wander: bool = True, kept_rounds: int = 0) -> list[VariantChange]:
    """Two runs of ``m`` (B with ``slower``) compared as ``compare A B --normalise X [--kept K runs]`` does.

    ``wander``: the kept runs' run-to-run wander joins the contrasts, as in
    ``compare`` (False: their variance prior only, as before it did).
    ``kept_rounds``: the kept runs' rounds, when not ``rounds`` (a default run
    decides most lines in round 1: A and B of one process, the runs before
    them measured in rounds).

    Files written, loaded and framed; then ``variant_changes`` (the findings,
    which ``compare`` also computes, are left out: they judge nothing here).
    """
    tmp = Path(tempfile.mkdtemp(dir=tmp))
    runs = [load_side(write_run(m, tmp / f"kept{k}", 10 + k, kept_rounds or rounds, rng)) for k in range(kept)]
    a = load_side(write_run(m, tmp / "a", 1, rounds, rng))
    b = load_side(write_run(m, tmp / "b", 2, rounds, rng, slower))
    pairs = [(n, n) for n in m.cell_names()]
    controls = control_moves(a, b, pairs) if normalise == "control" else None
    changes, _, _ = variant_changes(build_frame(a), build_frame(b), pairs, per_cell=True,
                                    history=history_model(runs) if runs else None, controls=controls,
                                    spread=run_spread([run_means(r) for r in runs]) if wander else None)
    return changes


def gate_fails(changes: list[VariantChange], slower_than: float = 0.10, one_process: Null | None = None) -> bool:
    return any(call.fails for call in gate([v.contrast for v in changes], slower_than, one_process=one_process))


def gate_mde(changes: list[VariantChange], slower_than: float = 0.10) -> float:
    """The gate line's figure: the slowdown it finds 80% of the time at the median variant."""
    mdes = sorted(c.mde for c in gate([v.contrast for v in changes], slower_than) if math.isfinite(c.mde))
    return mdes[len(mdes) // 2]
