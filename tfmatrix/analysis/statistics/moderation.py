"""Families of comparisons: process effects, moderated variances, a family's common move, noise models.

One comparison's numbers (``inference.contrast``) are few: three rounds a
side. What makes them enough is what the other variants of the same run
know: the processes they shared (``process_effects``), how noisy variants
of that benchmark are (``moderate``: empirical Bayes, limma's moment fit,
Smyth 2004), and what the whole cell moved by (``normalise``). ``judge``
puts them together; every verdict in the report goes through it.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import special

from .inference import MIN_SD, Contrast, Side, contrast

MIN_MATES = 5           # variants a process must share to estimate its effect (fewer: left in)
MIN_FIT = 3             # replicated variants a prior is fitted from
MIN_GROUP = 30          # a benchmark with fewer variants in a comparison is moderated with its whole family
PRIOR_WORTH = 2.0       # a prior worth this many times a member's own degrees of freedom is given whole to all
ROBUST_TAIL = 1.0       # else a member keeps d0 x its upper-tail probability under the prior (``robust_d0``)


def process_effects(sides: Sequence[Side], min_mates: int = MIN_MATES) -> dict[str, float]:
    """How much faster or slower each process ran than its side's average, from the variants it sampled.

    The variants sampled in one process (one window) share its state (which
    core, what else ran, where memory landed): the median over them of how
    far each one's unit sits from its own mean over its side's units is that
    process's effect. Processes shared by fewer than ``min_mates`` variants
    get none.
    """
    centred: dict[str, list[float]] = defaultdict(list)
    for s in sides:
        if s.n < 2 or len(s.processes) != s.n:
            continue
        for proc, y in zip(s.processes, s.logs, strict=True):
            if proc:
                centred[proc].append(y - s.mean)
    return {p: float(np.median(v)) for p, v in centred.items() if len(v) >= min_mates}


def without_effects(s: Side, effects: Mapping[str, float]) -> Side:
    """``s`` with its processes' effects subtracted: its variance is then its own, not its processes'."""
    if s.n < 2 or len(s.processes) != s.n or not any(p in effects for p in s.processes):
        return s
    return replace(s, logs=tuple(y - effects.get(p, 0.0) for p, y in zip(s.processes, s.logs, strict=True)))


def shared_variance(s: Side, effects: Mapping[str, float]) -> tuple[float, float]:
    """What the effects of ``s``'s processes add to the variance of its mean, and on how many degrees of freedom.

    Taken out of each unit, they still moved the side's mean together for
    every variant of those processes: that part returns here (0 when the
    side's processes had no effect estimated).
    """
    found = [effects[p] for p in s.processes if p in effects]
    if len(found) < 2 or len(found) != s.n:
        return 0.0, math.inf
    return float(np.var(found, ddof=1)) / s.n, float(s.n - 1)


def remove_process_effects(sides: Sequence[Side], min_mates: int = MIN_MATES) -> list[Side]:
    """Each side with its processes' effects (``process_effects``) taken out."""
    effects = process_effects(sides, min_mates)
    return [without_effects(s, effects) for s in sides] if effects else list(sides)


@dataclass(frozen=True)
class Prior:
    """A variance prior for a family of comparisons: ``s0`` (variance of one unit) on ``d0`` degrees of freedom."""

    s0: float
    d0: float
    source: str = "moderated"


def _trigamma_inverse(y: float) -> float:
    """x with trigamma(x) = y (limma's Newton iteration)."""
    if y > 1e7:
        return 1.0 / math.sqrt(y)
    if y < 1e-6:
        return 1.0 / y
    x = 0.5 + 1.0 / y
    for _ in range(50):
        tri = float(special.polygamma(1, x))
        step = tri * (1 - tri / y) / float(special.polygamma(2, x))
        x += step
        if -step / x < 1e-8:
            break
    return x


def fit_prior(variances: Sequence[float], dfs: Sequence[float], source: str = "moderated") -> Prior | None:
    """The scaled inverse-chi-square prior of a family's variances, by moments (limma's ``fitFDist``).

    None with fewer than ``MIN_FIT`` replicated members. When the members'
    noise differs more than their degrees of freedom explain (this host:
    per-round SDs from 11% at the median to 22% at the 90th percentile),
    ``d0`` comes out small and the prior counts for little; ``moderate``
    then gives each member its own share of it (``robust_d0``), so the
    noisiest are not shrunk towards the others. ``d0`` is capped at 100 x
    the largest member's ``d`` (variances that differ no more than their
    degrees of freedom explain).
    """
    pairs = [(max(s, MIN_SD ** 2), d) for s, d in zip(variances, dfs, strict=True)
             if d > 0 and math.isfinite(s) and math.isfinite(d)]
    if len(pairs) < MIN_FIT:
        return None
    s2 = np.asarray([p[0] for p in pairs])
    d = np.asarray([p[1] for p in pairs])
    e = np.log(s2) - special.digamma(d / 2) + np.log(d / 2)
    emean = float(e.mean())
    evar = float(np.var(e, ddof=1) - np.mean(special.polygamma(1, d / 2)))
    cap = 100.0 * float(d.max())
    d0 = min(2 * _trigamma_inverse(evar), cap) if evar > 0 else cap
    return Prior(math.exp(emean + float(special.digamma(d0 / 2)) - math.log(d0 / 2)), d0, source)


@dataclass(frozen=True)
class Limit:
    """What a family's prior may lend one comparison of a family that cannot vouch for its own prior (``ab``'s
    cases: a few rounds each, and kinds of work whose noise differs), so that no look rests on more certainty than
    the variant's own evidence supports.

    A family fitted from members of one to three degrees of freedom each cannot tell whether their noise is alike (the
    fit often returns its cap, 100 x their degrees of freedom: a loop noisier than its mates was decided at round 2
    on 201). So, with a limit, a member keeps of the prior only its share by its own rounds (``robust_d0``'s tail,
    however strong the prior looks: shrunk whole, a case four times noisier than its mates was called different at
    the last round too); and when it is judged ``early`` (before its run's last round) the prior counts for at most
    ``d0`` degrees of freedom (its own kept history's) or ``PRIOR_WORTH`` times its own, whichever is more, with a
    variance of at least ``s0`` (its own kept variance; 0 unknown).
    """

    d0: float = 0.0
    s0: float = 0.0
    early: bool = True


def limited(prior: Prior, c: Contrast, limit: Limit | None = None) -> Prior:
    """The prior one member ``c`` of a family is moderated with: ``robust_d0``'s share of it; with a ``limit``, its
    tail share whatever the prior's worth, the prior first capped and floored when the look is early."""
    if limit is None:
        return replace(prior, d0=robust_d0(prior, c.s2, c.d))
    if limit.early:
        most = max(limit.d0, PRIOR_WORTH * c.d if c.d > 0 and math.isfinite(c.d) else 0.0)
        prior = Prior(max(prior.s0, limit.s0), min(prior.d0, most), prior.source)
    return replace(prior, d0=robust_d0(prior, c.s2, c.d, worth=math.inf))


def robust_d0(prior: Prior, s2: float, d: float, tail: float = ROBUST_TAIL, worth: float = PRIOR_WORTH) -> float:
    """The prior's degrees of freedom for one member: all of them, or fewer the further its variance lies above it.

    A prior worth ``PRIOR_WORTH`` times the member's own ``d`` or more (the
    family's variances differ no more than their degrees of freedom explain)
    is given whole. A weaker one (variances that differ: this host's) is
    given as limma's ``robust=TRUE`` would, in one line: under the prior, a
    member's ``s2 / s0`` is F(d, d0); one with upper-tail probability p
    below ``tail`` keeps ``d0 x p / tail``, so a variant noisier than its
    mates is judged mostly on its own rounds. Shrunk whole instead, the
    noisiest tenth were called different 10-15% of the time at 2-3 rounds
    (the reason the old all-or-nothing guard refused such a prior).
    ``worth``: the prior's worth from which it is given whole (``limited``
    gives an early look's never whole: infinite).
    """
    if not (d > 0 and math.isfinite(s2)) or math.isinf(prior.d0) or prior.d0 >= worth * d:
        return prior.d0
    p = float(special.fdtrc(d, prior.d0, max(s2, MIN_SD ** 2) / prior.s0))
    return prior.d0 * min(1.0, p / tail)


def moderated(c: Contrast, prior: Prior | None) -> Contrast:
    """``c`` with its variance shrunk towards the prior: (d0 s0 + d s) / (d0 + d) on d0 + d degrees of freedom.

    An unreplicated comparison takes the prior's variance as its own.
    """
    if prior is None:
        return c
    if c.d > 0 and math.isfinite(c.s2):
        s2 = (prior.d0 * prior.s0 + c.d * max(c.s2, MIN_SD ** 2)) / (prior.d0 + c.d)
        return replace(c, s2=s2, d=prior.d0 + c.d, prior=prior.source)
    return replace(c, s2=prior.s0, d=prior.d0, prior=prior.source)


def moderate(contrasts: Sequence[Contrast | None], groups: Sequence[Hashable],
             families: Sequence[Hashable] | None = None,
             limits: Sequence[Limit | None] | None = None) -> list[Contrast | None]:
    """Every contrast moderated across the others of its group: a benchmark, or its whole family.

    ``groups`` are benchmarks (variants of similar noise); a benchmark with
    fewer than ``MIN_GROUP`` members in the comparison is moderated with the
    rest of its ``families`` entry (a cell pair) instead, since a prior
    fitted from a handful of variances is itself noise. The prior is fitted
    from the group's own replicated variances and given to each member that
    has no other source (an unreplicated member takes it whole); one already
    judged by a stored noise model keeps that. ``limits``: per contrast, what
    the prior may lend it when it is judged early (``limited``).
    """
    fam = list(families) if families is not None else [None] * len(groups)
    size: dict[Hashable, int] = defaultdict(int)
    for c, g, f in zip(contrasts, groups, fam, strict=True):
        if c is not None and not c.prior:
            size[(f, g)] += 1
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, (c, g, f) in enumerate(zip(contrasts, groups, fam, strict=True)):
        if c is not None and not c.prior:
            members[(f, g) if size[(f, g)] >= MIN_GROUP else (f, None)].append(i)
    out = list(contrasts)
    for idx in members.values():
        own = [c for c in (contrasts[i] for i in idx) if c is not None and c.replicated]
        prior = fit_prior([c.s2 for c in own], [c.d for c in own])
        for i in idx:
            c = contrasts[i]
            if c is not None and prior is not None:
                out[i] = moderated(c, limited(prior, c, limits[i] if limits is not None else None))
    return out


def common_move(contrasts: Sequence[Contrast]) -> tuple[float, float, int]:
    """What a family moved by in common (log), the variance of that estimate, and how many it rests on.

    The median log ratio, recomputed without the members that are clearly
    off it (beyond 3 of their own standard errors) until it settles: a
    change of a third of a cell's variants does not drag the others with it.
    Its variance is about pi/2 x the mean variance / n (a median's).
    """
    logs = np.asarray([c.log_ratio for c in contrasts])
    ses = np.asarray([c.se if c.replicated else math.inf for c in contrasts])
    keep = np.ones(len(logs), dtype=bool)
    move = float(np.median(logs))
    for _ in range(10):
        new_keep = ~(np.abs(logs - move) > 3 * ses)
        if new_keep.sum() < max(3, len(logs) // 2) or (new_keep == keep).all():
            break
        keep = new_keep
        move = float(np.median(logs[keep]))
    finite = ses[keep & np.isfinite(ses)]
    var = math.pi / 2 * float(np.mean(finite ** 2)) / len(finite) if len(finite) else 0.0
    return move, var, int(keep.sum())


def normalise(contrasts: Sequence[Contrast], families: Sequence[Hashable],
              ) -> tuple[list[Contrast], dict[Hashable, tuple[float, float, int]]]:
    """Each contrast with its family's common move taken out: the variants that shared processes in both runs.

    What a whole cell (or a whole slice of its processes) moved by between
    two runs is a run-level effect one run a side cannot tell from the run's
    own drift (whole cells moved up to 15% between two runs of the same
    code); taken out, each variant is judged on how it moved against the
    variants that ran beside it, and the moves come back (``common_move``
    per family) to be shown, not judged. Families of fewer than 3 keep theirs.
    """
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, g in enumerate(families):
        members[g].append(i)
    out = list(contrasts)
    moves: dict[Hashable, tuple[float, float, int]] = {}
    for g, idx in members.items():
        if len(idx) < 3:
            continue
        move, var, kept = common_move([contrasts[i] for i in idx])
        moves[g] = (move, var, kept)
        for i in idx:
            c = contrasts[i]
            out[i] = replace(c, log_ratio=c.log_ratio - move, extra=c.extra + var)
    return out, moves


def judge(pairs: Sequence[tuple[Side, Side]], benchmarks: Sequence[Hashable],
          families: Sequence[Hashable | None] | None = None,
          priors: Sequence[tuple[Prior | None, Prior | None]] | None = None,
          within: Sequence[Hashable] | None = None,
          anchors: Sequence[tuple[float, float, float] | None] | None = None,
          limits: Sequence[Limit | None] | None = None,
          ) -> tuple[list[Contrast | None], dict[Hashable, tuple[float, float, int]]]:
    """The whole rule for a family of comparisons (first / second of each pair), in one place.

    One ``contrast`` per pair, each side's unit variance from elsewhere
    where given (``priors``: per pair, the first and second side's; a
    stored noise model for one unit a side, ``with_noise_model``), and
    each other variance moderated across its ``benchmarks`` group (or, for
    a small one, across its ``within`` group: the cell pair).
    The process effects come out of each side first (``process_effects``:
    each variant's variance without the wobble its processes shared). What
    they moved the sides' means by returns as an extra variance
    (``shared_variance``), unless both sides ran in the same processes
    (window-mates: it cancels) or ``families`` are given (two runs of the
    same cells: per pair, the variants that shared its processes), whose
    common move is taken out after (``normalise``); the moves come back,
    to be shown. ``anchors``: per pair, a move measured by a control the
    change cannot touch (``control.control_move``: log, variance, degrees of
    freedom); a pair with one has that move taken out instead of its
    family's (``anchored``), so a change of its whole family is judged, and
    its processes' shared effects return as for unnormalised pairs.
    ``limits``: per pair, what the moderation's prior may lend it early
    (``Limit``: a sequential ``ab``'s looks before its last round).
    """
    unique: dict[int, Side] = {}
    for a, b in pairs:
        unique.setdefault(id(a), a)
        unique.setdefault(id(b), b)
    effects = process_effects(list(unique.values()))
    if families is not None and anchors is not None:
        families = [None if anchor is not None else f for f, anchor in zip(families, anchors, strict=True)]
    if families is not None:      # a family too small to find its common move in is judged as measured
        size: dict[Hashable, int] = defaultdict(int)
        for f in families:
            size[f] += 1
        families = [f if f is not None and size[f] >= MIN_MATES else None for f in families]
    shared: list[tuple[float, float]] = []
    for i, (a, b) in enumerate(pairs):
        if (families is not None and families[i] is not None) or a.processes == b.processes:
            shared.append((0.0, math.inf))
            continue
        (va, da), (vb, db) = shared_variance(a, effects), shared_variance(b, effects)
        parts = [(v, d) for v, d in ((va, da), (vb, db)) if v > 0]
        total = sum(v for v, _ in parts)
        shared.append((total, total ** 2 / sum(v ** 2 / d for v, d in parts) if parts else math.inf))
    pairs = [(without_effects(a, effects), without_effects(b, effects)) for a, b in pairs]
    out: list[Contrast | None] = [contrast(a, b) for a, b in pairs]
    out = [replace(c, extra=v, extra_d=d) if c is not None and v > 0 else c
           for c, (v, d) in zip(out, shared, strict=True)]
    if priors is not None:
        out = [with_noise_model(c, *pr) if c is not None else None for c, pr in zip(out, priors, strict=True)]
    out = moderate(out, benchmarks, within, limits)
    if anchors is not None:
        out = [anchored(c, anchor) if c is not None and anchor is not None else c
               for c, anchor in zip(out, anchors, strict=True)]
    moves: dict[Hashable, tuple[float, float, int]] = {}
    if families is not None:
        idx = [i for i, c in enumerate(out) if c is not None and families[i] is not None]
        done, moves = normalise([out[i] for i in idx], [families[i] for i in idx])  # type: ignore[misc]
        for i, c in zip(idx, done, strict=True):
            out[i] = c
    return out, moves


def anchored(c: Contrast, anchor: tuple[float, float, float]) -> Contrast:
    """``c`` with a control's move (log, its variance, its degrees of freedom) taken out, its variance added."""
    move, var, d = anchor
    return replace(with_extra(c, var, d), log_ratio=c.log_ratio - move)


def with_extra(c: Contrast, var: float, d: float) -> Contrast:
    """``c`` with a variance its own units cannot see added (on ``d`` degrees of freedom; Welch-Satterthwaite)."""
    extra, extra_d = summed([(c.extra, c.extra_d), (var, d)])
    return replace(c, extra=extra, extra_d=extra_d)


def summed(parts: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """Independent variances, each on its degrees of freedom, summed: (variance, Welch-Satterthwaite's degrees of
    freedom; infinite when every part is known exactly, or there is none)."""
    known = [(v, d) for v, d in parts if v > 0]
    var = sum(v for v, _ in known)
    spread = sum(v ** 2 / d for v, d in known)
    if var <= 0:
        return 0.0, math.inf
    return var, var ** 2 / spread if spread > 0 else math.inf


def with_noise_model(c: Contrast, prior_a: Prior | None, prior_b: Prior | None) -> Contrast:
    """A comparison judged with each side's unit variance from elsewhere (a noise model, its variants' own).

    Unreplicated (one unit a side): that variance is its own. Replicated: its
    own variance is moderated towards it (``moderated``), on the smaller
    side's degrees of freedom.
    """
    if prior_a is None or prior_b is None:
        return c
    # paired: two independent processes per unit (two cells of a round; window-mates: their shared effect is out)
    s2 = prior_a.s0 + prior_b.s0 if c.paired else (prior_a.s0 / c.n_a + prior_b.s0 / c.n_b) / c.c
    prior = Prior(s2, min(prior_a.d0, prior_b.d0), prior_a.source)
    if c.replicated:
        return moderated(c, prior)
    return replace(c, s2=prior.s0, d=prior.d0, prior=prior.source)
