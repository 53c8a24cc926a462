"""What a bisection measures in each release's cell: a claim's ratio, or one variant's time.

A claim is the better thing to bisect: its ratio is taken inside one cell
(both sides measured in the same processes and rounds), so the host's drift
between two probes, measured minutes apart, cancels. One variant's time
(``--bench ID``) does not have that protection; its interval still comes
from the processes and rounds the probe ran.

The variants a probe runs are the ones that decide the target (a selection
of the suite's catalogue at the preset's sizes, never a new catalogue): for a
claim, every variant either side of any of its setups matches.
"""
from __future__ import annotations

import difflib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis.cells import CellResult
from ..analysis.claims.answers import CANNOT, ClaimLine, compute_claim
from ..analysis.claims.files import every_builtin, find
from ..analysis.claims.records import Claim
from ..analysis.claims.specs import in_benchmarks, matches
from ..analysis.frame import build_frame
from ..analysis.statistics.inference import time_interval
from ..errors import UserError
from .search import Measure


@dataclass(frozen=True)
class Target:
    """A claim (its first line: the seed's configuration) or one variant, and the variants that decide it."""

    key: str                        # the claim's key, or the variant id
    label: str                      # what the value is, in words
    variant_ids: tuple[str, ...]
    claim: Claim | None = None

    def measure(self, cell: CellResult) -> Measure | str:
        """The value in one cell's results, or why it has none there."""
        if cell.status != "ok" or cell.results is None:
            return f"the cell {cell.status}: {cell.reason or 'no results'}"
        if self.claim is not None:
            return claim_measure(self.claim, cell)
        return time_measure(self.key, cell)


def claim_target(key: str, preset: str, claims: Sequence[Claim] | None = None,
                 bench_paths: Sequence[Path] = (), backend: str = "tensorflow") -> Target:
    """The claim ``key`` of ``claims`` (default: every built-in one; a command adds the user's own) as a bisect's
    target; ``bench_paths``: the user's benchmark files, whose variants a claim of theirs may compare."""
    claim = find(every_builtin() if claims is None else claims, key, "--claim")
    if claim.ref_cell is not None:
        raise UserError(f"--claim {key}: this claim compares two cells ({claim.a} against {claim.b}), so no single "
                        "release answers it; bisect a claim measured inside one cell, or one variant with --bench ID")
    ids = claim_variant_ids(claim, preset, bench_paths, backend)
    if not ids:
        raise UserError(f"--claim {key}: the {preset} preset has no variant this claim compares; use --preset seed")
    return Target(key, f"{claim.key}: time {claim.a} / {claim.b}", tuple(ids), claim)


def bench_target(variant_id: str, preset: str, bench_paths: Sequence[Path] = ()) -> Target:
    """One variant (of the suite, or of the user's files ``bench_paths``) as a bisect's target: its time."""
    ids = [v.id for v in _variants(preset, bench_paths)]
    if variant_id not in ids:
        close = difflib.get_close_matches(variant_id, ids, n=1, cutoff=0.5)
        fix = f"did you mean {close[0]}?" if close else "list them with python -m suite list --preset " + preset
        raise UserError(f"--bench {variant_id}: no variant with this id in the {preset} preset; {fix}")
    return Target(variant_id, f"time of {variant_id}", (variant_id,))


def claim_variant_ids(claim: Claim, preset: str, bench_paths: Sequence[Path] = (),
                      backend: str = "tensorflow") -> list[str]:
    """Every variant of ``preset`` that a side of the claim's setups for ``backend`` matches: the A side's, then the
    B side's, each in catalogue order.

    A bisect or a timeline walks one framework's releases: TensorFlow's (and
    Keras's on it), whose cells never measure the setups that answer the
    claim on JAX or PyTorch (a claims file's ``answer``: their variants would
    be n/a in every release, and the claim's two sides would no longer be its
    first line's two variants), or JAX's or PyTorch's, whose cells measure
    those setups and the backend's own ops.
    """
    from suite.definitions import BACKEND_API

    setups = [s for s in claim.setups if not s.compare.backends or backend in s.compare.backends]
    a_side, b_side = [], []
    for v in _variants(preset, bench_paths):
        params = dict(v.params)
        if v.api == BACKEND_API and backend == "tensorflow":    # JAX's or PyTorch's own ops: n/a on TF
            continue
        mine = [s for s in setups if in_benchmarks(v.benchmark, s.compare.benchmarks)]
        if any(matches(params, s.compare.a) for s in mine):
            a_side.append(v.id)
        elif any(matches(params, s.compare.b) for s in mine):
            b_side.append(v.id)
    return a_side + b_side         # the A side first: ``why.side_names`` names a two-variant target's sides in order


def _variants(preset: str, bench_paths: Sequence[Path] = ()) -> Sequence:
    """The preset's catalogue, with the variants of the user's benchmark files (as the cells will list them)."""
    from suite.definitions import PRESETS
    from suite.plugins import load_plugins
    from suite.registry import all_variants, load_benchmarks

    mine = load_plugins(os.pathsep.join(map(str, bench_paths))) if bench_paths else []
    return all_variants(PRESETS[preset], load_benchmarks() + mine)


def claim_line(claim: Claim, cell: CellResult, frame: pd.DataFrame | None = None) -> ClaimLine | tuple[str, str]:
    """The claim's first line in one cell (the seed's configuration, else its stand-in), or (verdict, why) none.

    ``frame``: the cell's ``build_frame([cell])`` when the caller asks several claims of one cell."""
    if not claim.about(cell):
        return CANNOT, f"the claim is about {claim.cells.text() if claim.cells else 'other cells'} only"
    result = compute_claim(claim, build_frame([cell]) if frame is None else frame, [cell])
    if not result.cells:
        return CANNOT, (result.notes[0] if result.notes else f"the claim does not apply to {cell.name}")
    answer = result.cells[0]
    if not answer.lines:
        return answer.empty_verdict, answer.reason or "nothing to pair"
    return answer.lines[0]


def claim_measure(claim: Claim, cell: CellResult) -> Measure | str:
    """The claim's ratio and interval in one cell, or why it has none."""
    line = claim_line(claim, cell)
    if isinstance(line, tuple):
        return line[1]
    ci = line.comparison.ci
    if not ci.replicated:
        return ci.why_unclear
    return Measure(ci.ratio, ci.low, ci.high)


def time_measure(variant_id: str, cell: CellResult) -> Measure | str:
    """One variant's time with its 95% interval over its processes (``inference.time_interval``)."""
    assert cell.results is not None
    v = cell.variant(variant_id)
    if v is None:
        return "not measured in this cell"
    if not v.ok:
        return f"{v.status}: {v.reason}"
    per_process = [list(p) for p in v.per_process] or [list(v.samples)]
    found = time_interval(per_process)
    if found is None:
        return "no positive time"
    if not math.isfinite(found[1]):
        return "one process only: not enough replication for an interval (run --rounds 2 or more)"
    return Measure(found[0], found[1], found[2], unit="s")
