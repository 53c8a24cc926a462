"""A control the change cannot touch: each cell's containers' own reference workload, per round.

Two runs of the same cells differ by the change and by the host: a whole
cell can move 5-15% between two runs of the same code. ``--normalise cell``
takes each family's own common move out, so it cannot see a change that
slows a whole slice or cell (a user's whole benchmark file 20% slower
passes the gate). Every slice process also times a fixed pure-Python
workload before and after its variants (``suite.reference``; the cell file
keeps them as ``container_reference``: [round, slice, s before, s after]).
A change to the user's TensorFlow code cannot touch it, while the host's
state (frequency, a neighbour, the container's CPU share) moves it with the
cell. ``--normalise control`` takes each cell pair's move from it instead:
per round, the mean log of its slices' probes is one unit; B/A is the
difference of the two runs' means, its variance from their rounds (the
control's own noise joins every variant's). What moves TensorFlow's time but
not the interpreter's (memory placement, a library's own state) is then
judged as a change: the price of seeing a whole cell get slower.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from ..cells import CellResult
from ..statistics.inference import MIN_SD, Side, contrast
from .run_level import RunLevel


def reference_side(cell: CellResult, label: str) -> Side | None:
    """The cell's reference workload as a side: one unit per round, the mean log of its slices' probes."""
    series = (cell.results.config.get("container_reference") if cell.results else None) or []
    by_round: dict[str, list[float]] = defaultdict(list)
    for p in series:
        if not (isinstance(p, list) and len(p) == 4):
            continue
        values = [float(x) for x in p[2:] if isinstance(x, (int, float)) and x > 0]
        if values:
            by_round[f"{label}#{p[0]}"].append(float(np.mean(np.log(values))))
    if not by_round:
        return None
    keys = sorted(by_round)
    return Side(tuple(keys), tuple(float(np.mean(by_round[k])) for k in keys), ("",) * len(keys))


def control_move(cell_a: CellResult, cell_b: CellResult) -> tuple[float, float, float] | None:
    """B/A of the reference workload (log), the variance of that estimate and its degrees of freedom.

    None unless both cells kept two rounds of it or more (one round measures
    no noise: the control's own error would be unknown).
    """
    a, b = reference_side(cell_a, "A"), reference_side(cell_b, "B")
    if a is None or b is None or a.n < 2 or b.n < 2:
        return None
    c = contrast(b, a)
    if c is None or not c.replicated:
        return None
    return c.log_ratio, max(c.s2, MIN_SD ** 2) * c.c, c.d


def control_moves(cells_a: Sequence[CellResult], cells_b: Sequence[CellResult],
                  pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Per cell pair with a reference on both sides: its ``control_move``."""
    by_a, by_b = {c.name: c for c in cells_a}, {c.name: c for c in cells_b}
    out = {}
    for a, b in pairs:
        if a in by_a and b in by_b:
            move = control_move(by_a[a], by_b[b])
            if move is not None and math.isfinite(move[0]):
                out[(a, b)] = move
    return out


def host_reference(cells: Sequence[CellResult]) -> float | None:
    """The median time of the host's reference workload over a run (``suite.reference``), from its cells' files."""
    for cell in cells:
        reference = cell.results.host_reference_s if cell.results else None
        if reference is not None:
            return reference
    return None


def container_reference(cell: CellResult) -> float | None:
    """The median time of the reference workload inside a cell's containers over a run (``suite.reference``)."""
    series = (cell.results.config.get("container_reference") if cell.results else None) or []
    values = [float(x) for p in series if isinstance(p, list) and len(p) == 4 for x in p[2:]
              if isinstance(x, (int, float))]
    return float(np.median(values)) if values else None


def uniform_note(normalise: str, cell_moves: Mapping[str, float], controls: Mapping[str, float],
                 run_levels: Mapping[str, RunLevel]) -> str:
    """The gate line's last words: can a slowdown of a whole slice or cell fail it? Where not, what the run level saw.

    ``cell_moves``: per cell pair, its median B/A; ``controls``: those whose
    move came from the reference workload (``--normalise control``).
    """
    blind = [c for c in cell_moves if c not in controls]
    if normalise not in ("cell", "control", "run") or not (blind or normalise == "run"):
        return "; a whole cell's slowdown is judged against its containers' reference workload" if controls else ""
    where = ", ".join(f"{c} {cell_moves[c]:.3f}" + (f" ({run_levels[c].text(cell_moves[c])})"
                                                    if c in run_levels else "") for c in blind)
    seen = (f"; what each cell moved by: {where}" if where else "") + (
        "" if any(c in run_levels for c in blind) else
        "; 3 earlier runs or more (the run archive beside A or B, or --kept) judge a cell's move against how far "
        "its runs wander")
    return ("; a slowdown of a whole slice or cell cannot fail this gate (its common move is taken out; "
            "--normalise control judges it against the containers' reference workload)" + seen)
