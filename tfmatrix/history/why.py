"""Why a bisect's boundary is where it is: the target's variants profiled in the last good and the first bad release.

A bisect says "changed between 2.0.4 and 2.1.4"; this says where. Both
releases' probe cells profile the variants that decide the target
(``execution.profiling``: a run of their own, never a measured one, into
``<reports>/profiles/<cell>.json``), each variant is lined up with itself
across the two releases (``analysis.explain.profiles``), and the variant whose step
moved most under the profiler leads: its sentences, labelled by release. A
claim is a ratio of two variants, so the lines first say how each side moved.

``boundary_lines`` is pure (profiles in, sentences out); ``explain_boundary``
is its edge (profiles both cells, or says why it could not).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from ..analysis.explain.ops import explanation_sentences
from ..analysis.explain.profiles import Explanation, explain, ms, pair
from ..matrix import Cell
from ..results.profile_docs import ProfilesDoc, read_profiles
from ..runners.base import Runner
from .targets import Target

CALLS = 10          # samples' worth of calls profiled per variant and release


def side_names(target: Target) -> dict[str, str]:
    """Each variant's name in the answer: the claim's A and B (its first line's two variants), else the id."""
    if target.claim is not None and len(target.variant_ids) == 2:
        a, b = target.variant_ids
        return {a: f"{target.claim.a} ({a})", b: f"{target.claim.b} ({b})"}
    return {v: v for v in target.variant_ids}


def boundary_lines(target: Target, what: str, good: str, bad: str, good_doc: ProfilesDoc,
                   bad_doc: ProfilesDoc) -> list[str]:
    """How each of the target's variants moved from ``good`` to ``bad`` under the profiler, then the sentences of
    the one that moved most (or why there is nothing to line up)."""
    names = side_names(target)
    found: list[tuple[str, Explanation]] = []
    for vid in target.variant_ids:
        both = pair(good_doc, vid, bad_doc, vid)
        if isinstance(both, str):
            return [both]
        found.append((vid, explain(*both)))
    out = [f"{names[vid]}: {ms(e.a.step_s)} per step in {what} {good}, {ms(e.b.step_s)} in {bad} (profiler "
           "included)" for vid, e in found]
    vid, e = max(found, key=lambda t: abs(math.log(max(t[1].b.step_s, 1e-12) / max(t[1].a.step_s, 1e-12))))
    if len(found) > 1:
        out.append(f"{names[vid]} moved most; where:")
    return out + explanation_sentences(e, f"{what} {good}", f"{what} {bad}")


def explain_boundary(target: Target, what: str, cells: Sequence[tuple[str, Cell]], runner: Runner, reports: Path,
                     console: Console, preset: str, calls: int = CALLS) -> list[str]:
    """Profile the target's variants in the last good and first bad release's cells: ``boundary_lines``, or one
    "could not profile" line (a cell that cannot profile never fails the bisect)."""
    from ..execution.profiling import profile_in_cell

    loaded: list[ProfilesDoc] = []
    for release, cell in cells:
        console.print(f"\\[tfmatrix] bisect: profiling {len(target.variant_ids)} variant(s) in {what} {release} "
                      f"({cell.name}; a run of its own, never a measurement; reused from an earlier bisect when the "
                      "same image profiled them)")
        made = profile_in_cell(cell, runner, list(target.variant_ids), reports, calls, preset, reuse=True)
        if isinstance(made, str):
            return [f"{what} {release}: {made}"]
        loaded.append(read_profiles(made))
    (good, _), (bad, _) = cells
    good_doc, bad_doc = loaded
    return boundary_lines(target, what, good, bad, good_doc, bad_doc)
