"""A sequential run's look: the live cells' rounds so far, judged as the report will judge them.

After a look round (``analysis.stopping.is_look``) the records each live
cell pooled so far become cell documents in memory (the same
``live.cell_results`` the cell files are written from), then a frame and
the Claims at the per-look level, with the noise history of earlier runs on
this machine lent to lines of one round; a variant no claim names is a
series line, judged against its kept runs (``analysis.series.since``). What comes back is each line's
state; ``interleaved`` runs another round for the open lines' variants only.
One path with the report: a line decided here is the line the report shows.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..analysis.cells import CellResult, describe
from ..analysis.claims.answers import compute_claims
from ..analysis.claims.files import builtin, questions
from ..analysis.claims.records import Claim
from ..analysis.frame import build_frame
from ..analysis.runs.kept import run_sides
from ..analysis.runs.noise_model import NoiseModel, annotate
from ..analysis.series.since import series_states
from ..analysis.stopping import LOOK_ALPHA, OPEN, LineState, case_state, line_states, named_variants, needed_here
from ..matrix import Cell
from ..results.documents import CellDoc, SuiteResults
from ..results.journal import JournalHead
from ..results.store import CellOutcome, cell_document
from .live import LiveCell, cell_results


def live_docs(live: Mapping[str, LiveCell], head: JournalHead) -> list[CellDoc]:
    """Each live cell's rounds so far as a cell file would hold them (cells with nothing measured yet left out)."""
    out = []
    for name, lc in sorted(live.items()):
        results = cell_results(lc, head)
        if results is not None:
            out.append(cell_document(lc.cell.to_dict(), CellOutcome(name, "ok", None, lc.env.runner, {}, results),
                                     lc.asked))
    return out


def live_results(live: Mapping[str, LiveCell], head: JournalHead) -> list[CellResult]:
    """Each live cell's rounds so far as the report reads a cell."""
    return [describe(doc, Path(doc.name + ".json")) for doc in live_docs(live, head)]


def look(live: Mapping[str, LiveCell], head: JournalHead, history: NoiseModel | None,
         alpha: float = LOOK_ALPHA, claims: tuple[Claim, ...] | None = None,
         kept: Sequence[Mapping[tuple[str, str], tuple[float, float]]] = ()) -> list[LineState]:
    """Every line of ``claims`` (the run's; default the seeds') in the live cells, judged at ``alpha`` on what they
    measured so far; and a series line for each variant no claim or question names, against its ``kept`` runs'
    means (``analysis.series.since``)."""
    cells = live_results(live, head)
    if not cells:
        return []
    df = annotate(build_frame(cells), history)
    asked = builtin() if claims is None else claims
    states = line_states(compute_claims(df, cells, asked, alpha=alpha), alpha)
    claimed = named_variants(df, asked + questions()) | {k for s in states for k in (s.a, s.b)}
    rest = df[[(str(c), str(i)) not in claimed for c, i in zip(df["cell"], df["id"], strict=True)]]
    if not len(rest):               # every variant is a claim's or a question's (the default's): no series line
        return states
    lent = {**(history.lent if history else {}), **(history.variances if history else {})}
    return states + series_states(run_sides(cells, rest), kept, claimed, lent, alpha)


def ab_look(live: Mapping[str, LiveCell], head: JournalHead, history: NoiseModel | None,
            alpha: float = LOOK_ALPHA) -> list[LineState]:
    """Every case of an ``ab`` run (head against base, window-mates), judged at ``alpha`` on its rounds so far:
    ``analysis.stopping.case_state``; before the cap each case's prior is limited by its own ``history`` (the
    earlier runs' noise, ``compare.ab.early_limits``), and an order-dependent case stays open (more rounds, each
    side first in turn, to the cap)."""
    from ..analysis.compare.ab import SIDES, compare_sides, split_side

    cells = live_results(live, head)
    if not cells:
        return []
    full = {(name, *split_side(vid)): vid for name, lc in live.items() for ids in lc.slices.values() for vid in ids}
    cap = (head.sequential or {}).get("cap")
    out = []
    for v in compare_sides(cells, alpha=alpha, history=history, cap=cap if isinstance(cap, int) else None).variants:
        base, new = full.get((v.cell_a, SIDES[0], v.id)), full.get((v.cell_b, SIDES[1], v.id))
        if base is None or new is None:
            continue
        out.append(LineState("ab", v.cell_a, (v.cell_b, new), (v.cell_a, base), v.verdict,
                             OPEN if v.order_dependent else case_state(v.ci, alpha), v.ci.ratio))
    return out


def covers(history: NoiseModel | None, live: Mapping[str, LiveCell]) -> bool:
    """Whether the history knows the noise of any variant the live cells measure: then round 1 is a look. Each
    line decides on its own: one whose variants the history does not know has no variance at round 1 and stays
    open (a cell of new variants once made a whole run wait for round 2)."""
    if history is None:
        return False
    return any(key in history.variances or key in history.lent for key in live_keys(live))


def live_keys(live: Mapping[str, LiveCell]) -> list[tuple[str, str]]:
    """Every (cell, variant id) the live cells measure: what a noise history or the shipped prior is asked for."""
    return [(name, vid) for name, lc in live.items() for ids in lc.slices.values() for vid in ids]


def claims_here(slices: dict[str, list[str]], preset: str, cell: Cell, plan: SuiteResults,
                claims: Sequence[Claim]) -> dict[str, list[str]]:
    """A cell's planned slices narrowed to the variants that can make a line of ``claims`` there (``needed_here``:
    the cell's TF and Keras read from its plan, as the report will read them). Slices left empty go."""
    from suite.definitions import PRESETS
    from suite.registry import all_variants

    known = PRESETS.get(preset)
    if known is None:
        return slices
    catalogue = [(v.benchmark, v.id, v.as_dict()) for v in all_variants(known)]
    doc = cell_document(cell.to_dict(), CellOutcome(cell.name, "ok", None, {}, {}, plan), {})
    keep = needed_here(catalogue, [vid for ids in slices.values() for vid in ids], describe(doc, Path(cell.name)),
                       claims)
    kept = {k: [v for v in ids if v in keep] for k, ids in slices.items()}
    return {k: ids for k, ids in kept.items() if ids}
