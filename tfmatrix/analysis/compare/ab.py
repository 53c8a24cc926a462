"""A/B inside one run (``tfmatrix ab``): each variant's head against its base, process by process.

The run measured two versions of the user's benchmark files as one
benchmark whose variants carry ``side=base`` or ``side=head``
(``suite.sides``), both sides of a parameter set in one window. Here the
two sides of each cell become the two sides of a ``compare``: the same
``CompareResult``, the same rule (``moderation.judge``), the same views and
gate, paired by window (both sides ran in the same processes, so each
process's effect, estimated from every variant it sampled, cancels) rather
than by round. Two things ``compare`` does not do (issue 53): each case is
tested for whether the side that went first in its processes moved it
(``order``: then it is order-dependent, no verdict), and in a sequential
run each case keeps only its own share of its family's variance prior, an
early look's no more certain than the case's own noise in earlier ``ab``
runs here, or its own rounds, support (``early_limits``).
"""
from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from suite.schema import SIDE_PARAM

if TYPE_CHECKING:       # the command line reads ROUNDS and SAMPLES as it starts: the frame and statistics come later
    import pandas as pd

    from ..cells import CellResult
    from ..runs.noise_model import NoiseModel
    from ..statistics.moderation import Limit
    from .order import Crossover
    from .result import CompareResult, VariantChange

SIDES = ("base", "head")
# Both sides of a case share each process, so the processes add almost nothing to a paired difference: its
# noise is the samples' (Kalibera & Jones's rule then asks for many samples a process). Measured here
# (docs/measurement.md, "A/B inside one run"): 8 rounds x 16 samples resolved 7.7% at the median variant.
ROUNDS = 10         # ``ab --rounds``' default: rounds at most (a run stops once every case is decided)
SAMPLES = 20        # ``ab --samples``' default: samples per process


def split_side(vid: str) -> tuple[str, str]:
    """A variant id's side and the id without it (``side_rows``'s ids): ("", vid) for a variant of no side."""
    for side in SIDES:
        stripped = _tag(side).sub("", vid)
        if stripped != vid:
            return side, stripped
    return "", vid


def _tag(side: str) -> re.Pattern[str]:
    return re.compile(r"(?<=[\[,])%s=%s(,|(?=\]))" % (SIDE_PARAM, re.escape(side)))


def side_rows(df: pd.DataFrame, side: str) -> pd.DataFrame:
    """The rows of ``side`` with ``side=...`` taken out of their ids, so both sides' ids match."""
    from ..frame import param_column

    column = param_column(SIDE_PARAM)
    if column not in df.columns or not len(df):
        return df.iloc[0:0]
    rows = df[df[column] == side].copy()
    tag = _tag(side)
    rows["id"] = [tag.sub("", str(i)) for i in rows["id"]]
    return rows


def compare_sides(cells: Sequence[CellResult], base: str = SIDES[0], head: str = SIDES[1],
                  alpha: float | None = None, history: NoiseModel | None = None,
                  cap: int | None = None) -> CompareResult:
    """Per cell, every variant's ``head`` against its ``base`` (B/A), judged together, read as ``compare`` reads.

    ``alpha``: each variant's test and the gate's (default ``inference.ALPHA``); a run that stopped early looked
    up to ``stopping.LOOKS`` times, so it is judged at 5% over its looks (``run_alpha``), its intervals at that
    level. ``cap``: a sequential run's last round (``stopping.run_cap``): each case keeps only its share of its
    family's prior, and one judged on fewer rounds (an early look) a prior no more certain than its own noise in
    earlier runs (``history``: the sides' variances in this reports directory's noise history) or its own rounds
    support (``early_limits``). Each case's order test (``order``) can make it ``order-dependent``."""
    from ..frame import build_frame
    from ..statistics.inference import ALPHA
    from .result import CompareResult
    from .sets import broken, variant_changes

    alpha = ALPHA if alpha is None else alpha
    df = build_frame(list(cells))
    df_a, df_b = side_rows(df, base), side_rows(df, head)
    pairs = [(c.name, c.name) for c in cells if c.has_records]
    cases = crossovers(cells, base, head)
    limits = early_limits(cases, history, cap)
    variants, only_a, only_b = variant_changes(df_a, df_b, pairs, by_window=True, limits=limits)
    if alpha != ALPHA:
        variants = [dataclasses.replace(v, ci=v.ci.at(1 - alpha)) for v in variants]
    variants = with_order_tests(variants, cases, limits, (base, head))
    return CompareResult(base, head, variants, [], only_a, only_b, pairs, broke=broken(df_a, df_b, pairs),
                         normalise="none", unreplicated=sum(1 for v in variants if not v.ci.replicated), alpha=alpha)


Case = tuple[str, str]      # (cell, variant id without its side)


def crossovers(cells: Sequence[CellResult], base: str = SIDES[0], head: str = SIDES[1]
               ) -> dict[Case, tuple[Crossover, str, str]]:
    """Per case measured ok on both sides: its rounds by which side went first (``order.crossover``), and the two
    sides' full variant ids."""
    from .order import crossover

    out: dict[Case, tuple[Crossover, str, str]] = {}
    for cell in cells:
        found = {split_side(str(v.id)): v for v in cell.variants if v.ok}
        for (side, case), a in found.items():
            b = found.get((head, case))
            if side == base and b is not None:
                out[(cell.name, case)] = (crossover(a.per_process, a.windows, a.leads, b.per_process, b.windows,
                                                    b.leads), str(a.id), str(b.id))
    return out


def early_limits(cases: Mapping[Case, tuple[Crossover, str, str]], history: NoiseModel | None,
                 cap: int | None) -> dict[Case, Limit]:
    """Per case of a sequential run (``cap``: its last round), what its family's prior may lend it
    (``moderation.Limit``): only its share by its own rounds; and judged early (on fewer rounds than ``cap``), at
    most the degrees of freedom of its own kept history (its two sides' variances in ``history``, the smaller's) or
    twice its own, with a variance no smaller than that history's (the two sides' summed: window-mates' effects
    cancel, as ``moderation.with_noise_model`` has it). None for a run without looks (``cap`` None): as measured."""
    from ..runs.noise_model import prior
    from ..statistics.moderation import Limit

    if cap is None:
        return {}
    out: dict[Case, Limit] = {}
    for key, (case, base_id, head_id) in cases.items():
        own = [p for p in (prior(history, (key[0], vid)) for vid in (base_id, head_id)) if p is not None] \
            if history is not None else []
        kept = Limit(min(p.d0 for p in own), sum(p.s0 for p in own)) if len(own) == 2 else Limit()
        out[key] = kept if len(case.diffs) < cap else Limit(math.inf, early=False)
    return out


def with_order_tests(variants: Sequence[VariantChange], cases: Mapping[Case, tuple[Crossover, str, str]],
                     limits: Mapping[Case, Limit], sides: tuple[str, str]) -> list[VariantChange]:
    """``variants`` each with its order test (``order.order_tests``), moderated as its contrast was (its benchmark,
    or for a small one its cell pair; the same early limits)."""
    from .order import order_tests

    keys = [(v.cell_b, v.id) for v in variants]
    known = [k in cases for k in keys]
    tests = order_tests([cases[k][0] for k, ok in zip(keys, known, strict=True) if ok],
                        [v.benchmark for v, ok in zip(variants, known, strict=True) if ok],
                        [(v.cell_a, v.cell_b) for v, ok in zip(variants, known, strict=True) if ok],
                        [limits.get(k) for k, ok in zip(keys, known, strict=True) if ok], sides)
    found = iter(tests)
    return [dataclasses.replace(v, order=next(found)) if ok else v for v, ok in zip(variants, known, strict=True)]


def summary_lines(result: CompareResult) -> list[str]:
    """What an A/B run found and could see: the verdict counts, the false-discovery list, the resolution, the order
    test and each order-dependent case's why."""
    lines = [f"{len(result.variants)} variants, head against base, in the same processes of {len(result.cells)} "
             f"cell(s): {result.counts_text()}"]
    if result.unreplicated < len(result.variants):
        lines.append(result.discovery_line())
    lines.append(result.resolution_line())
    if result.only_a or result.only_b:
        lines.append(f"without a partner: {len(result.only_a)} only in {result.label_a}, {len(result.only_b)} only "
                     f"in {result.label_b} (" + "; ".join((result.only_a + result.only_b)[:3]) + ")")
    if result.unreplicated:
        lines.append(f"{result.unreplicated} variants ran in one process a side: not enough replication for a "
                     "verdict (run --rounds 2 or more)")
    tested = [v for v in result.variants if v.order is not None]
    if tested:
        from .order import ORDER_ALPHA

        lines.append(f"order test (each case's rounds with {result.label_a} first against those with "
                     f"{result.label_b} first, two-sided at {ORDER_ALPHA:.0%}; the sides took turns at going first): "
                     f"{sum(v.order_dependent for v in tested)} of {len(tested)} cases order-dependent")
        lines += result.order_lines()
    return lines


def this_runs_noise(cells: Sequence[CellResult], source: str) -> NoiseModel | None:
    """This ``ab`` run's variances, each side's as ``report`` keeps a variant's (``noise_model.from_frame``): kept with
    its cells in the archive, the own history a later run's early looks are limited by (None: no variant ran two
    rounds)."""
    from ..frame import build_frame
    from ..runs.noise_model import from_frame

    return from_frame(build_frame(list(cells)), source, cells)
