"""How long a run may take, said before it starts: per cell, from its last run here or a measured constant.

Why its own module: the opening line is the first thing a user reads, and it
was wrong by a third both ways on different days. The machine's speed drifts
by days here (its reference workload took 12 ms on one day and 22 ms two
days later), so every figure is scaled by the host reference
(``suite.reference``) measured at the start against the reference its source
was measured at: a cell's last run (the median of its file's host-speed
points) or, for a cell never run here, the constants below (measured on the
default matrix, at ``ESTIMATE_REFERENCE_S``).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from ..analysis.stopping import sequential_of
from ..matrix import Cell
from ..results.documents import CellDoc
from ..results.store import cell_paths, load_cell
from ..runners.job import CellJob
from .request import RunRequest

# Suite seconds of one CPU cell per preset and round on this 2-core machine, at a host reference of
# ESTIMATE_REFERENCE_S. Quick: the default matrix's nine CPU cells with Docker (2026-11): 50-200 s, mean 87 s.
# Seed: the default matrix's 12 CPU cells, 3 interleaved rounds of the whole catalogue, warm, 2026-11-26: 112 s a
# cell and round (23 s keras3-torch-cpu to 283 s tf2.16-tf_keras-cpu) at a reference of 22 ms.
ESTIMATE_RUN_S = {"quick": 100.0, "seed": 110.0, "standard": 3600.0, "full": 4 * 3600.0}
ESTIMATE_REFERENCE_S = 0.022
# preparing a cell the first time (wheels and image build, or virtualenv install), one at a time; the Docker runner's
# two at once made the default's 12 cells in 9:49 at 22.8 ms, 49 s a cell (docs/measurements-log.md, 2026-11-28)
ESTIMATE_SETUP_S = 60.0
# The default (the claims' variants, sequential rounds up to 4) per cell, at ESTIMATE_REFERENCE_S. cold: the first
# run on the machine, with no noise history (its first look after round 1 on the shipped prior, analysis.runs.prior):
# the 2026-11-28 cold run's 162 s a cell (19.8-22.8 ms, first look after round 2) times what the prior cut from the
# rounds back to back on 2026-11-29 (20:39 -> 16:55 at 12.4-13.0 ms; docs/measurements-log.md, "A fresh machine's
# first look"). warm: 12.4-12.8 min at 10.1-10.4 ms, scaled (docs/measurement.md, "Sequential rounds").
CLAIMS_RUN_S = {"cold": 133.0, "warm": 132.0}
# A sequential run's rounds, on average over its slices (measured: docs/measurement.md, "Sequential rounds").
EXPECTED_ROUNDS_WARM = 2.0      # a noise history of these cells here: the first look after round 1
EXPECTED_ROUNDS_COLD = 3.0      # none, nor a shipped prior (a file of your own): the first look after round 2


def reference_of(doc: CellDoc) -> float | None:
    """The host reference a cell file's run saw: the median of its host-speed points (None: none recorded)."""
    return doc.results.host_reference_s if doc.results is not None else None


def expected_rounds(request: RunRequest, warm: bool) -> float:
    """The rounds a cell of this request is expected to run: the fixed count, or a sequential run's average."""
    if not request.sequential:
        return float(request.rounds)
    return min(float(request.rounds), EXPECTED_ROUNDS_WARM if warm else EXPECTED_ROUNDS_COLD)


def last_runs(reports_dir: Path, names: Iterable[str]) -> dict[str, CellDoc | None]:
    """Each named cell's results file in ``reports_dir`` (None: none, or unreadable), read once for the estimates."""
    return {name: load_cell(cell_paths(reports_dir, name)[0]) for name in names}


def cell_estimates(jobs: Sequence[CellJob], request: RunRequest, last: Mapping[str, CellDoc | None],
                   built: Callable[[Cell], bool] | None = None, reference: float | None = None,
                   warm: bool = False) -> dict[str, float]:
    """Seconds each job's cell may take: its last run time with the same preset, else a per-preset guess.

    ``last``: each cell's results file here (``last_runs``); ``reference``:
    the host reference measured now (None: no scaling);
    ``warm``: a noise history of these cells is kept here (a sequential run
    then looks after round 1). Preparation (image build, virtualenv) is
    counted only for cells that have never completed here and whose
    environment the runner has not ``built`` (a first run into a new reports
    directory on a warm host once said 54 minutes for 40); a warm cell costs
    its run time. Both scale with the share of the preset's variants
    ``--bench``/``only`` selects (a bisect probe runs 2 of 120: its estimate
    once said 2:40 for a 20-second run).
    """
    out = {}
    rounds = expected_rounds(request, warm)
    for job in jobs:
        cell, doc, preset = job.cell, _last_run(job, last), job.asked.preset
        asked = preset_processes(preset)
        wanted = request.processes or asked
        share = selected_share(preset, request.only)
        if request.claims_only and (doc is None or doc.cell_request.only != tuple(request.only)):
            setup = 0.0 if built is not None and built(cell) else ESTIMATE_SETUP_S
            out[cell.name] = CLAIMS_RUN_S["warm" if warm else "cold"] * _scale(reference, ESTIMATE_REFERENCE_S) + setup
        elif doc is not None:
            then_asked = doc.cell_request
            had = then_asked.processes or asked
            then = selected_share(preset, then_asked.only)
            if then_asked.sequential:       # its run time is its rounds' as they came: the same again if asked
                then_rounds = rounds if request.sequential else EXPECTED_ROUNDS_WARM
                waited = sequential_of(doc.results).get("first_look") == 2      # that one waited for round 2
                if request.sequential and warm and waited:
                    then_rounds = rounds * CLAIMS_RUN_S["cold"] / CLAIMS_RUN_S["warm"]
            else:
                then_rounds = doc.rounds
            speed = _scale(reference, reference_of(doc))
            out[cell.name] = doc.timings["run_s"] / then_rounds * rounds * wanted / had * share / then * speed
        else:
            setup = 0.0 if built is not None and built(cell) else ESTIMATE_SETUP_S
            speed = _scale(reference, ESTIMATE_REFERENCE_S)
            out[cell.name] = ESTIMATE_RUN_S.get(preset, 600.0) * rounds * wanted / asked * share * speed + setup
    return out


def _last_run(job: CellJob, last: Mapping[str, CellDoc | None]) -> CellDoc | None:
    """The job's cell's last results here with the preset asked for and a run time, or None."""
    doc = last.get(job.name)
    ok = doc is not None and doc.cell_request.preset == job.asked.preset and "run_s" in doc.timings
    return doc if ok else None


def unknown_estimates(jobs: Sequence[CellJob], last: Mapping[str, CellDoc | None]) -> list[str]:
    """Existing environments with no earlier run here: their time is unknown (a per-preset guess would be a
    built cell's, and an environment on a GPU is nothing like one)."""
    return [j.name for j in jobs if j.cell.existing and _last_run(j, last) is None]


def _scale(now: float | None, then: float | None) -> float:
    """How much slower the host is now than when a figure was measured (1.0 when either is unknown)."""
    return now / then if now and then else 1.0


@functools.lru_cache(maxsize=64)
def selected_share(preset: str, only: tuple[str, ...]) -> float:
    """The share of the preset's built-in variants the patterns select (1.0 for none; at least one variant's)."""
    if not only:
        return 1.0
    from suite.definitions import PRESETS
    from suite.registry import all_variants, select

    known = PRESETS.get(preset)
    if known is None:
        return 1.0
    variants = all_variants(known)
    return max(1, len(select(variants, only))) / max(1, len(variants))


def preset_processes(preset: str) -> int:
    """The fresh processes per variant a suite preset runs (the estimates scale with them)."""
    from suite.definitions import PRESETS

    known = PRESETS.get(preset)
    return known.processes if known else 1


def cold_estimate(cells: Sequence[Cell], rounds: int = 1, sequential: bool = False,
                  reference: float | None = None, only: tuple[str, ...] = ()) -> float:
    """Seconds a first run of ``cells`` may take here (nothing built, no earlier results; ``only``: the variants
    selected, as ids or patterns)."""
    per = min(float(rounds), EXPECTED_ROUNDS_COLD) if sequential else float(rounds)
    speed = _scale(reference, ESTIMATE_REFERENCE_S)
    if sequential and only:         # the default: the claims' variants, measured as a whole
        return sum(CLAIMS_RUN_S["cold"] * speed + ESTIMATE_SETUP_S for _ in cells)
    return sum(ESTIMATE_RUN_S.get(c.preset, 600.0) * per * speed * selected_share(c.preset, only) + ESTIMATE_SETUP_S
               for c in cells)
