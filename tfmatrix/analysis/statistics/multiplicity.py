"""Many comparisons at once: false discoveries in a list of changes, family-wise errors at the gate.

A run compares hundreds of variants; at 5% each, an unchanged run calls a
dozen of them different. A list of changed variants is therefore read at a
false-discovery rate (Benjamini-Hochberg), and the CI gate, where one false
failure blocks a merge, family-wise (Holm).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import false_discovery_control

from .inference import ALPHA, POWER, Contrast


def bh(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values); nan stays nan and is not counted."""
    idx = [i for i, p in enumerate(pvalues) if math.isfinite(p)]
    out = [math.nan] * len(pvalues)
    if idx:
        adjusted = false_discovery_control([pvalues[i] for i in idx], method="bh")
        for i, q in zip(idx, adjusted, strict=True):
            out[i] = float(q)
    return out


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values: family-wise control; nan stays nan and is not counted."""
    idx = sorted((i for i, p in enumerate(pvalues) if math.isfinite(p)), key=lambda i: pvalues[i])
    m = len(idx)
    out = [math.nan] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(idx):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


@dataclass(frozen=True)
class GateCall:
    """One variant at the gate: does it fail, and the smallest slowdown that would have failed it."""

    fails: bool
    p_family: float         # Holm-adjusted one-sided p of "not slower at all"
    mde: float              # the slowdown (0.3 = 30%) that fails the gate with POWER


def gate(contrasts: Sequence[Contrast | None], slower_than: float, alpha: float = ALPHA) -> list[GateCall]:
    """``--fail-on slower:X%``: which of B/A ``contrasts`` fail, family-wise.

    A variant fails when it is slower with family-wise confidence (Holm over
    every gated variant: the chance that any unchanged variant fails is at
    most ``alpha``) and its own interval lies wholly above 1 + X (it is
    credibly more than X slower). Not replicated: it cannot fail, and its
    detectable slowdown is unknown (nan).
    """
    margin = math.log1p(slower_than)
    ps = [c.p_above(0.0) if c is not None else math.nan for c in contrasts]
    adjusted = holm(ps)
    m = max(1, sum(1 for p in ps if math.isfinite(p)))
    out = []
    for c, p in zip(contrasts, adjusted, strict=True):
        if c is None or not c.replicated:
            out.append(GateCall(False, math.nan, math.nan))
            continue
        low = c.interval()[0]
        fails = p < alpha and low > 1.0 + slower_than
        beta = c.t(POWER)
        need = max(margin + (c.t(1 - alpha / 2) + beta) * c.se, (c.t(1 - alpha / m) + beta) * c.se)
        out.append(GateCall(fails, p, math.expm1(need)))
    return out
