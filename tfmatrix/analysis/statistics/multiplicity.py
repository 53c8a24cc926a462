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
from .tails import Null, score


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
    tail: bool = False      # one process a side: judged against the measured null (``tails``), not its t test
    suspect: bool = False   # fails by its t test, not by the measured null: measure it again


def one_unit(c: Contrast) -> bool:
    """One process on a side of a contrast between runs: what it rests on cannot see a stray process."""
    return not c.paired and c.units < 2


def gate(contrasts: Sequence[Contrast | None], slower_than: float, alpha: float = ALPHA,
         one_process: Null | None = None) -> list[GateCall]:
    """``--fail-on slower:X%``: which of B/A ``contrasts`` fail, family-wise.

    A variant fails when it is slower with family-wise confidence (Holm over
    every gated variant: the chance that any unchanged variant fails is at
    most ``alpha``) and its own interval lies wholly above 1 + X (it is
    credibly more than X slower). Not replicated: it cannot fail, and its
    detectable slowdown is unknown (nan). ``one_process``: the null a
    contrast with one process on a side is judged against (``tails``: its
    normal score's measured distribution, whose tail is far wider than the t
    test's); such a variant that only its t test would fail is a suspect.
    """
    margin = math.log1p(slower_than)
    tailed = [c is not None and one_process is not None and c.replicated and one_unit(c) for c in contrasts]
    nominal = [c.p_above(0.0) if c is not None else math.nan for c in contrasts]
    ps = [one_process.sf(score(c)) if t and c is not None and one_process is not None else p
          for c, t, p in zip(contrasts, tailed, nominal, strict=True)]
    adjusted = holm(ps)
    as_t = holm(nominal) if any(tailed) else adjusted
    m = max(1, sum(1 for p in ps if math.isfinite(p)))
    out = []
    for c, p, p_t, t in zip(contrasts, adjusted, as_t, tailed, strict=True):
        if c is None or not c.replicated:
            out.append(GateCall(False, math.nan, math.nan))
            continue
        above = c.interval()[0] > 1.0 + slower_than
        beta = c.t(POWER)
        need = max(margin + (c.t(1 - alpha / 2) + beta) * c.se, (c.t(1 - alpha / m) + beta) * c.se)
        if t and one_process is not None:
            need = max(need, (one_process.ppf(1 - alpha / m) + one_process.ppf(POWER)) * c.se)
        fails = p < alpha and above
        out.append(GateCall(fails, p, math.expm1(need), t, t and not fails and p_t < alpha and above))
    return out
