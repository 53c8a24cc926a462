"""A cell's run as the archive keeps it (``results.archive.KeptRun``): what a series reads of it, made once.

Each variant's run mean of per-round log times and its rounds (``runs.kept.run_sides``,
with the cell's containers' reference workload as ``CONTROL``), and each
claim line's verdict in this run: the series of later runs then read the
archive's index, never the cell files again.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from ...results.archive import Archive, KeptRun, digest_of
from ..cells import CellResult
from ..claims.answers import ClaimLine, ClaimResult
from ..runs.kept import run_sides
from ..runs.noise_model import NoiseModel, run_mean, run_of
from .answers import CellSeries, cell_series

CODE = ("suite", "bench")       # the request's keys that hash code (the suite's, the user's files): what a series
#                                 is there to follow, so they split no series; ``code_key`` marks where they changed


def _hash(doc: object) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:12]


def request_key(cell: CellResult) -> str:
    """The cell's request but its code, hashed: runs asked the same (preset, benchmarks, rounds, schedule) share it
    however the code they measured changed."""
    return _hash({k: v for k, v in cell.doc.request.items() if k not in CODE})


def code_key(cell: CellResult) -> str:
    """What the run measured, hashed: the code (the suite's source, the user's benchmark files) and the environment
    it ran in (the image, or what the virtualenv or existing environment was made from). A step in a run where this
    did not change is the host's, not a regression."""
    runner = cell.facts.runner
    return _hash({**{k: cell.doc.request.get(k) for k in CODE}, "image": runner.image_id, "inputs": runner.inputs})


def line_key(claim_key: str, label: str, ref: str | None = None) -> str:
    """A claim line's name across runs: the claim, the other cell for a cross-cell claim, the line's label."""
    return " | ".join(p for p in (claim_key, f"against {ref}" if ref else "", label) if p)


def claim_lines(claims: Sequence[ClaimResult]) -> dict[str, dict[str, ClaimLine]]:
    """Per cell name, per claim line's name across runs (``line_key``): the line in this run."""
    out: dict[str, dict[str, ClaimLine]] = {}
    for result in claims:
        for cc in result.cells:
            ref = cc.ref.name if cc.ref is not None and cc.ref.name != cc.cell.name else None
            for line in cc.lines:
                out.setdefault(cc.cell.name, {})[line_key(result.claim.key, line.label, ref)] = line
    return out


def kept_run_of(cell: CellResult, digest: str, lines: Mapping[str, ClaimLine],
                variances: Mapping[str, tuple[float, float]] | None = None) -> KeptRun | None:
    """The archive's record of one complete cell file (None: a failed or empty cell, nothing to keep): each
    variant's run mean and its rounds, each claim line's verdict and its ratio with its interval, and
    ``variances``: its variants' unit variances as the run's noise model measured them."""
    if not cell.doc.complete or not cell.has_records:
        return None
    sides = {vid: side for (_, vid), side in run_sides([cell]).items()}
    values = {k: (line.comparison.ci.ratio, line.comparison.ci.low, line.comparison.ci.high,
                  line.comparison.ci.log_se ** 2) for k, line in lines.items()}
    return KeptRun(cell.name, run_of([cell]), cell.finished, digest, cell.facts.testbed, request_key(cell),
                   cell.results.host_reference_s if cell.results is not None else None,
                   {vid: run_mean(side) for vid, side in sides.items()}, {k: line.verdict for k, line in lines.items()},
                   code=code_key(cell), values=values, rounds={vid: side.n for vid, side in sides.items()},
                   variances=dict(variances or {}))


def with_cells(archive: Archive, cells: Sequence[CellResult], claims: Sequence[ClaimResult],
               noise: NoiseModel | None = None) -> tuple[Archive, list[CellSeries]]:
    """The archive with these complete cell files added (each once: by digest), and its series: what the report
    keeps and shows, and what ``compare`` reads a result set against (in memory: nothing is written here).
    ``noise``: the run's noise model (``noise_model.from_frame``), each cell's part kept with its run."""
    lines = claim_lines(claims)
    found = []
    for cell in cells:
        digest = digest_of(cell.path)
        if not archive.has(digest):
            run = kept_run_of(cell, digest, lines.get(cell.name, {}),
                              noise.of_cell(cell.name) if noise is not None else None)
            if run is not None:
                found.append((run, cell.path))
    archive = archive.adding(found)
    return archive, cell_series(archive.runs)
