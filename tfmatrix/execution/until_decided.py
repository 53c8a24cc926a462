"""Sequential rounds: round after round of the turn loop, each judged at a look, until every claim line is decided.

After a look only the open lines' variants run again (each live cell's
``focus``), up to the request's cap and, with a budget, only what fits
(``budget.cut_to_budget``); the first look is after round 1 where the
history (or the prior shipped with tfmatrix) knows the lines' noise, else
after round 2 (``analysis.stopping``). A resumed run replays its journal's
rounds and, its data being the same, looks the same way.
"""
from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Mapping, Sequence

from ..analysis.runs.noise_model import NoiseModel
from ..analysis.runs.prior import shipped
from ..analysis.stopping import (
    DECIDED,
    FIRST,
    LOOK_ALPHA,
    OPEN,
    SAME,
    LineState,
    first_look,
    first_look_words,
    is_look,
    look_rounds,
    open_variants,
    same_margin,
    why_stopped,
)
from ..results.journal import write_head
from .budget import cut_to_budget
from .live import LiveCell, resume, retry_turns
from .loop import Loop
from .page import LookHook
from .turns import Turn, plan_turns


def measure_until_decided(loop: Loop, history: NoiseModel | None, after_look: LookHook | None = None,
                          before_rounds: Callable[[int], None] | None = None,
                          kept: Sequence[Mapping[tuple[str, str], tuple[float, float]]] = ()) -> None:
    """Sequential rounds (``analysis.stopping``): round after round, judged at each look; after a look only the
    open claim lines' variants run again, until none is open or the cap (``request.rounds``) is reached.
    ``budget``: after a look, only the open lines whose round fits the time left (``budget.affordable``), the others
    stopped with the budget as their why. ``after_look``: called after each look that another round follows (the
    page in progress); ``before_rounds``: called once before round 1 with the round of the first look; ``kept``: the
    kept runs' variant means (oldest first), against which a variant no claim names is judged (a series line).

    Each round's turns are planned when it starts (seeded by the run's seed and the round, recorded); a resumed
    run replays the rounds its journal holds and, its data being the same, looks the same way.
    """
    from .looks import ab_look, covers, live_keys, look  # read when called: a test may stand in for a look

    live, request, head, console, budget = loop.live, loop.request, loop.head, loop.console, loop.budget
    judged = ab_look if request.judge == "ab" else functools.partial(look, claims=request.claims, kept=kept)
    margin = same_margin(request.judge)
    cap = request.rounds
    if request.judge != "ab":       # ab's looks lend no history a variance (round 2), nor the shipped prior
        history = shipped().lend(history, live_keys(live))
    warm = request.judge != "ab" and covers(history, live)
    said = history.source if warm and history else ""
    lent = history.lent_source if history is not None and history.lent else ""
    head.sequential = seq = {"cap": cap, "alpha": LOOK_ALPHA, "judge": request.judge, "looks": look_rounds(warm, cap),
                          "first_look": first_look(warm), "lines": [], "prior": bool(lent),
                          "history": " ".join(s for s in (said, lent) if s)}
    if budget is not None:
        seq["budget_s"] = budget.seconds
    head.turns = []
    first: dict[tuple[str, str, str, str], tuple[int, str]] = {}    # each line's first stop: (round, why)
    cut: set[tuple[str, str, str, str]] = set()     # lines the budget stopped: never measured again in this run
    last: dict[tuple[str, str, str, str], LineState] = {}
    loop.t_start = time.monotonic()
    if before_rounds is not None:
        before_rounds(min(first_look(warm), cap))
    console.print("\\[tfmatrix] sequential rounds: up to %d; lines judged after rounds %s at %.2f%% each (%s)" % (
        cap, ", ".join(str(r) for r in look_rounds(warm, cap)), 100 * LOOK_ALPHA,
        first_look_words(said, request.judge, bool(lent))))
    round_no = 0
    for round_no in range(1, cap + 1):
        turns = plan_round(live, round_no, head.seed, len(head.turns))
        head.turns += [t.to_json() for t in turns]
        write_head(loop.journal, head)
        resume(live, loop.journal, turns)
        for turn in turns:
            loop.turn(turn, turns)
        again = [t for t in retry_turns(live, len(head.turns)) if t.round == round_no]
        head.turns += [t.to_json() for t in again]
        for turn in again:
            live[turn.order[0]].retries.remove((turn.round, turn.slice))
            loop.turn(turn, turns + again)
        if not is_look(round_no, warm, cap):
            if budget is None or round_no >= cap:
                continue
            # no look here, yet the next round must fit: its lines, all open, cut to the budget like a look's
            states = [dataclasses.replace(st, state=OPEN) for st in judged(live, head, history) if st.key not in cut]
            for st in states:
                last[st.key] = st
            fits = cut_to_budget(states, live, budget, round_no, first, cut, console)
            if fits is None:
                continue
            still = fits
        else:
            states = judged(live, head, history)
            for st in states:           # a line stopped at its first look not open since (rounds for a neighbour
                last[st.key] = st       # can reopen it: it is then open again, and its stop is its later one)
            states = [st for st in states if st.key not in cut]     # stopped by the budget: not measured again
            for st in states:
                if st.state == OPEN:
                    first.pop(st.key, None)
                else:
                    first.setdefault(st.key, (round_no, why_stopped(st.state, round_no, cap, margin)))
            still = open_variants(states)
            firsts = sum(s.state == FIRST for s in states)
            console.print("\\[tfmatrix] look after round %d: %d lines decided, %d the same, %d open%s%s%s" % (
                round_no, sum(s.state == DECIDED for s in states), sum(s.state == SAME for s in states),
                sum(s.state == OPEN for s in states), ", %d the first runs of their series" % firsts if firsts else "",
                ", %d left open by the budget" % len(cut) if cut else "",
                "" if still and round_no < cap else "; done"))
            if not still or round_no >= cap:
                break
            if after_look is not None:
                after_look(states, round_no, time.monotonic() - loop.t_start)
            fits = cut_to_budget(states, live, budget, round_no, first, cut, console) if budget else None
            still = still if fits is None else fits
        if not still:
            break
        for name, lc in live.items():
            wanted = still.get(name, set())
            lc.focus = {k: [v for v in ids if v in wanted] for k, ids in lc.slices.items() if wanted & set(ids)}
    seq["lines"] = [
        [*key, _rounds_of(live, st), *first.get(key, (round_no, why_stopped(OPEN, round_no, cap, margin)))[1:],
         st.a[0]]
        for key, st in sorted(last.items())]
    for lc in live.values():
        lc.focus = None


def _rounds_of(live: Mapping[str, LiveCell], st: LineState) -> int:
    """The rounds a line rests on: those in which both its sides were measured."""
    def rounds(cell: str, vid: str) -> set[int]:
        lc = live.get(cell)
        rec = lc.records.get(vid) if lc is not None else None
        return set(((rec or {}).get("schedule") or {}).get("passes") or [])
    return len(rounds(*st.a) & rounds(*st.b))


def plan_round(live: Mapping[str, LiveCell], round_no: int, seed: int, before: int) -> list[Turn]:
    """One round's turns over the slices the live cells still want (their focus), numbered on from ``before``."""
    keys = sorted({k for lc in live.values() for k in (lc.focus if lc.focus is not None else lc.slices)})
    turns = plan_turns(keys, sorted(live), 1, seed * 1009 + round_no)
    return [Turn(before + i + 1, round_no, t.slice, t.order) for i, t in enumerate(turns)]
