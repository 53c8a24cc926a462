"""A/B inside one run (``tfmatrix ab``): each variant's head against its base, process by process.

The run measured two versions of the user's benchmark files as one
benchmark whose variants carry ``side=base`` or ``side=head``
(``suite.sides``), both sides of a parameter set in one window. Here the
two sides of each cell become the two sides of a ``compare``: the same
``CompareResult``, the same rule (``moderation.judge``), the same views and
gate, paired by window (both sides ran in the same processes, so each
process's effect, estimated from every variant it sampled, cancels) rather
than by round.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from suite.schema import SIDE_PARAM

if TYPE_CHECKING:       # the command line reads ROUNDS and SAMPLES as it starts: the frame and statistics come later
    import pandas as pd

    from ..cells import CellResult
    from .result import CompareResult

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
                  alpha: float | None = None) -> CompareResult:
    """Per cell, every variant's ``head`` against its ``base`` (B/A), judged together, read as ``compare`` reads.

    ``alpha``: each variant's test and the gate's (default ``inference.ALPHA``); a run that stopped early looked
    up to ``stopping.LOOKS`` times, so it is judged at 5% over its looks (``run_alpha``), its intervals at that
    level."""
    from ..frame import build_frame
    from ..statistics.inference import ALPHA
    from .result import CompareResult
    from .sets import broken, variant_changes

    alpha = ALPHA if alpha is None else alpha
    df = build_frame(list(cells))
    df_a, df_b = side_rows(df, base), side_rows(df, head)
    pairs = [(c.name, c.name) for c in cells if c.has_records]
    variants, only_a, only_b = variant_changes(df_a, df_b, pairs, by_window=True)
    if alpha != ALPHA:
        variants = [dataclasses.replace(v, ci=v.ci.at(1 - alpha)) for v in variants]
    return CompareResult(base, head, variants, [], only_a, only_b, pairs, broke=broken(df_a, df_b, pairs),
                         normalise="none", unreplicated=sum(1 for v in variants if not v.ci.replicated), alpha=alpha)


def summary_lines(result: CompareResult) -> list[str]:
    """What an A/B run found and could see: the verdict counts, the false-discovery list, the resolution."""
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
    return lines
