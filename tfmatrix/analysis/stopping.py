"""The stopping rule of sequential rounds: after each round a claim line is decided, the same, or open (it runs on).

Why: most claim lines are 5-30x effects that one or two rounds decide, while
the few near their edge (the only ones that changed between two back-to-back
runs) need more than the fixed three. Chromium's Pinpoint
(catapult ``dashboard/pinpoint/models/compare/compare.py``) answers
DIFFERENT / SAME / UNKNOWN after each batch of attempts and adds attempts
only for UNKNOWN; so does this rule, per line (claim x cell):

* **decided**: the claim holds or is reversed (``claims.verdict``);
* **same**: the interval lies within ``MARGIN`` of 1 (a "does not help"
  claim that holds; for any other claim, no difference beyond 10%: Pinpoint's
  SAME, two one-sided tests): more rounds would not change the answer;
* **open**: neither: its variants run another round, up to ``MAX_ROUNDS``.

A line is looked at after every round from its first look on, so a test at
``ALPHA`` each time would call too many lines (five looks at 5% call about
12-13% of unchanged lines different). Each look tests at ``ALPHA / LOOKS``
(Bonferroni over the looks: the union bound holds whatever the correlation of
the looks, so a line's error stays at ``ALPHA`` whenever it stops), and the
report judges the line at the same level on all the rounds it has
(``run_alpha``): a line that stopped, or ran on for a neighbour, is still
one of its ``LOOKS`` looks. Looks are after rounds ``LOOK_AT``; the first
needs a variance from somewhere: a stored noise history of earlier runs on
this machine (the run archive, ``runs.noise_model.history_at``) lets round 1 decide a large effect;
without one the first look is after round 2.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..matrix.records import AUTO_ROUNDS_CAP
from ..results.documents import SuiteResults
from .cells import CellResult
from .claims.answers import HOLDS, REVERSED, ClaimResult
from .claims.records import MARGIN, NOT_A, SEEDS, Claim
from .claims.specs import ParamSpec, in_benchmarks, matches, param_spec
from .statistics.inference import ALPHA, RatioCI

MAX_ROUNDS = AUTO_ROUNDS_CAP    # a line still open after this many rounds stops there, "no clear difference"
LOOK_AT = (1, 2, 3, 4)          # the rounds after which lines are judged
LOOKS = len(LOOK_AT)
LOOK_ALPHA = ALPHA / LOOKS      # each look's test: the looks' errors sum to at most ALPHA
DECIDED, SAME, OPEN = "decided", "same", "open"
FIRST = "first"     # a series line (``series.since``) stopped at the rounds the first runs of a series take


def first_look(warm: bool) -> int:
    """The round of the first look: 1 with a noise history of these cells on this machine, else 2."""
    return 1 if warm else 2


def first_look_words(history: str, judge: str, prior: bool = False) -> str:
    """Why the first look comes when it does, as a sequential run's opening line says it (``history``: the noise
    history round 1 is judged with, "" none; ``prior``: the shipped prior is lent where that history is silent)."""
    if prior:
        lent = "the prior shipped with tfmatrix, lent wider than measured (large effects decide at round 1, the " \
               "rest after round 2)"
        if history:
            return "round 1 judged with the noise history %s, and where it is silent with %s" % (history, lent)
        return "no noise history of these cells here yet: round 1 judged with %s" % lent
    if history:
        return "round 1 judged with the noise history %s" % history
    if judge == "ab":       # its history only bounds what the family's prior lends an early look (compare.ab)
        return "a case's variance needs two rounds of its own: the first look is after round 2"
    return "no noise history of these cells here yet: the first look is after round 2"


def look_rounds(warm: bool, cap: int = MAX_ROUNDS) -> list[int]:
    """The rounds after which lines are judged: ``LOOK_AT`` from the first look, and the cap (nothing runs after
    it), at most ``LOOKS`` of them (the level each look tests at counts on no more)."""
    return sorted({r for r in LOOK_AT if first_look(warm) <= r < cap} | {cap})[-LOOKS:]


def is_look(round_no: int, warm: bool, cap: int = MAX_ROUNDS) -> bool:
    """Whether lines are judged after ``round_no``."""
    return round_no in look_rounds(warm, cap)


@dataclass(frozen=True)
class LineState:
    """One claim line after a look: where it stands, and the variants (cell, id) its next round would measure."""

    claim: str
    cell: str                       # the claim cell's name ("a vs b" for cross-cell claims)
    a: tuple[str, str]              # (cell, variant id) of side a
    b: tuple[str, str]
    verdict: str
    state: str                      # DECIDED | SAME | OPEN
    ratio: float

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What names a line across looks and in the cell file: claim, cell, and the two variant ids."""
        return (self.claim, self.cell, self.a[1], self.b[1])


def _within(ci: RatioCI, alpha: float, margin: float) -> bool:
    """Shown within ``margin`` of 1: the interval at ``1 - 2 alpha`` lies inside [1/(1 + margin), 1 + margin] (two
    one-sided tests at ``alpha``)."""
    same = ci.at(1 - 2 * alpha)
    return ci.replicated and same.low > 1 / (1 + margin) and same.high < 1 + margin


def state_of(verdict: str, expect: str, ci: RatioCI, alpha: float = LOOK_ALPHA) -> str:
    """DECIDED, SAME or OPEN from a claim line's verdict and its interval.

    A "does not help" claim that holds is SAME (shown within its margin);
    any other claim is SAME when it is shown within ``MARGIN`` of 1.
    """
    if verdict == HOLDS and expect == NOT_A:
        return SAME
    if verdict in (HOLDS, REVERSED):
        return DECIDED
    return SAME if _within(ci, alpha, MARGIN) else OPEN


# An A/B case shown within 5% of 1 (two one-sided tests at the look's level) is the same: a change of 5% or more,
# the smallest ``ab`` is built to find (docs/measurement.md), is ruled out, and more rounds would only resolve smaller
# ones. At 2% no unchanged case could stop before the cap (its interval after 4 rounds is +-3% here), so every ``ab``
# ran all its rounds; at 5% most stop at the look after round 4 (measured: docs/measurement.md).
AB_SAME = 0.05


def case_state(ci: RatioCI, alpha: float = LOOK_ALPHA, margin: float = AB_SAME) -> str:
    """An ``ab`` case (head against base) after a look: DECIDED when its interval at ``alpha`` excludes 1, SAME
    when it is shown within ``margin`` of 1, else OPEN."""
    if ci.replicated and (ci.low > 1.0 or ci.high < 1.0):
        return DECIDED
    return SAME if _within(ci, alpha, margin) else OPEN


def line_states(claims: Sequence[ClaimResult], alpha: float = LOOK_ALPHA) -> list[LineState]:
    """Every measured line of ``claims`` (computed at ``alpha``) with its state after this look."""
    out = []
    for result in claims:
        for cc in result.cells:
            expect = result.claim.expected(cc.target)
            for line in cc.lines:
                c = line.comparison
                out.append(LineState(result.claim.key, cc.name, (c.cell_a.name, c.a_id), (c.cell_b.name, c.b_id),
                                     line.verdict, state_of(line.verdict, expect, c.ci, alpha), c.ci.ratio))
    return out


def named_variants(df: Any, claims: Sequence[Claim]) -> set[tuple[str, str]]:
    """The (cell, variant id) rows of a frame that a side of ``claims`` names (its benchmarks and parameter values):
    a run's variants that are some claim's or question's, whether or not it made a line of them."""
    specs = _side_specs(claims)
    return {(str(c), str(i)) for c, i, bench, params in zip(df["cell"], df["id"], df["benchmark"], df["params"],
                                                            strict=True)
            if any(_names(str(bench), params, *spec) for spec in specs)}


def open_variants(states: Iterable[LineState]) -> dict[str, set[str]]:
    """Per cell, the variants an open line needs in the next round (both sides', in their own cells)."""
    out: dict[str, set[str]] = {}
    for s in states:
        if s.state == OPEN:
            for cell, vid in (s.a, s.b):
                out.setdefault(cell, set()).add(vid)
    return out


def same_margin(judge: str) -> float:
    """The margin within which a line of this run's looks (``claims`` or ``ab``) is the same."""
    return AB_SAME if judge == "ab" else MARGIN


def why_stopped(state: str, round_no: int, cap: int = MAX_ROUNDS, margin: float = MARGIN) -> str:
    """A line's stop in words, as the cell file and the report say it."""
    if state == DECIDED:
        return "decided after round %d" % round_no
    if state == SAME:
        return "within %d%% of 1 after round %d: more rounds would not change it" % (round(margin * 100), round_no)
    if state == FIRST:
        return "the first runs of its series: %d rounds, for later runs to be compared with" % round_no
    return "still open after round %d, the cap" % cap if round_no >= cap else "still open after round %d" % round_no


def sequential_of(results: SuiteResults | None) -> Mapping[str, Any]:
    """What a sequential run recorded in a cell's results (``config.schedule.sequential``; empty for any other run)."""
    schedule = results.config.get("schedule") if results is not None else None
    seq = schedule.get("sequential") if isinstance(schedule, dict) else None
    return seq if isinstance(seq, dict) else {}


def prior_borrowers(cells: Iterable[CellResult]) -> set[str]:
    """The cells whose looks borrowed the shipped prior (``analysis.runs.prior``): the report lends it to them."""
    return {c.name for c in cells if sequential_of(c.results).get("prior")}


def run_alpha(cells: Sequence[CellResult]) -> float:
    """The level the Claims are judged at: a sequential run's per-look level (its cell files say it), else ALPHA."""
    for c in cells:
        alpha = sequential_of(c.results).get("alpha")
        if isinstance(alpha, (int, float)):
            return float(alpha)
    return ALPHA


def run_cap(cells: Sequence[CellResult]) -> int | None:
    """A sequential run's cap on rounds (its cell files say it): a line judged on fewer was judged early; None for
    any other run."""
    for c in cells:
        cap = sequential_of(c.results).get("cap")
        if isinstance(cap, int) and not isinstance(cap, bool):
            return cap
    return None


def stops(cells: Sequence[CellResult]) -> dict[tuple[str, str, str, str], tuple[int, str]]:
    """Each line's rounds and why it stopped, as a sequential run's cell files recorded them (by ``LineState.key``)."""
    out: dict[tuple[str, str, str, str], tuple[int, str]] = {}
    for c in cells:
        for row in sequential_of(c.results).get("lines") or []:
            if isinstance(row, list) and len(row) == 6:
                out[(str(row[0]), str(row[1]), str(row[2]), str(row[3]))] = (int(row[4]), str(row[5]))
    return out


@dataclass(frozen=True)
class Extra:
    """Variants a question needs that no claim measures: kept, in the cells ``where`` says, by the default too."""

    question: str
    benchmarks: tuple[str, ...]
    spec: ParamSpec
    tf_major: int | None = None     # only cells of this TF major version
    keras3: bool = False            # only Keras 3 cells (any backend)

    def wanted(self, cell: CellResult) -> bool:
        return (self.tf_major is None or cell.tf_major == self.tf_major) and \
            (not self.keras3 or cell.keras_version.startswith("3"))


# The questions the claims' variants leave without a line (measured: a claims-only run answered 12 of 14), and the
# cheapest variants that give each one: seed 000's TF2-eager-against-TF1-graph pairs with the newest TF1 cell, which
# no claim measures in graph mode; which backend is fastest needs a model every Keras 3 backend runs.
EXTRAS: tuple[Extra, ...] = (
    Extra("tf2_eager_vs_tf1_graph", ("training.answer",),
          param_spec(model="small", data="small", input="numpy", loop=("fit", "train_on_batch"), api="tf.keras",
                     mode="graph"), tf_major=1),
    Extra("keras3_backends", ("inference.tiny",),
          param_spec(path=("call", "predict"), stage="compiled", mode="eager"), keras3=True),
)


def extras(claims: Sequence[Claim]) -> tuple[Extra, ...]:
    """The questions' extra variants (``files.questions``): kept where the seeds' claims run."""
    return EXTRAS if any(c.family == SEEDS for c in claims) else ()


def claim_variant_ids(catalogue: Iterable[tuple[str, str, Mapping[str, object]]],
                      claims: Sequence[Claim]) -> list[str]:
    """The ids of the catalogue's variants (benchmark, id, parameters) that a side of ``claims`` names, in catalogue
    order: what the default run measures (``variants = "claims"``)."""
    specs = _side_specs(claims) + [(x.benchmarks, x.spec) for x in extras(claims)]
    return [vid for bench, vid, params in catalogue if any(_names(bench, params, *spec) for spec in specs)]


def _side_specs(claims: Sequence[Claim]) -> list[tuple[tuple[str, ...], ParamSpec]]:
    """Every side of ``claims`` as (benchmark globs, parameter values): what ``_names`` matches a variant against."""
    return [(s.compare.benchmarks, side) for claim in claims for s in claim.setups
            for side in (s.compare.a, s.compare.b)]


def _names(bench: str, params: Mapping[str, object], benchmarks: tuple[str, ...], spec: Mapping[str, object]) -> bool:
    """A catalogue row (its benchmark and parameters) is one that ``benchmarks`` and ``spec`` pick."""
    return in_benchmarks(bench, benchmarks) and matches(params, spec)  # type: ignore[arg-type]


def attach_stops(claims: Sequence[ClaimResult], cells: Sequence[CellResult]) -> None:
    """Each line of a sequential run told why its rounds stopped, as its cell file recorded it (in place)."""
    found = stops(cells)
    for result in claims:
        for cc in result.cells:
            for line in cc.lines:
                c = line.comparison
                stop = found.get((result.claim.key, cc.name, c.a_id, c.b_id))
                if stop is not None:
                    line.stopped = stop[1]


def needed_here(catalogue: Iterable[tuple[str, str, Mapping[str, object]]], measurable: Iterable[str],
                cell: CellResult, claims: Sequence[Claim]) -> set[str]:
    """The variants of ``measurable`` (the ids a cell's plan left to measure) that can make a line of ``claims`` in
    ``cell``.

    A claim names the cells it is about (``cells``: a TF major version, Keras
    3, a backend) and, across cells, the source's reference cell
    (``ref_cell``): side a's variants are needed only in the cells it is
    about, side b's only in the reference cell (seed 000's TF 1.14 + Keras
    2.2.5). A claim within one cell needs both sides there, at
    its seed's own setup where both can run, else at the first stand-in that
    can (MobileNetV2 for EfficientNetV2S). The rest would be measured and
    answer nothing: Keras 3 on PyTorch ran seed 000's BiLSTM question model,
    a TF-2-only claim, for 310 s a round.
    """
    rows = list(catalogue)
    here = set(measurable)

    def picked(benchmarks: tuple[str, ...], spec: Mapping[str, object]) -> set[str]:
        return {vid for bench, vid, params in rows if vid in here and _names(bench, params, benchmarks, spec)}
    needed: set[str] = set()
    for claim in claims:
        about = claim.about(cell)
        for setup in claim.setups:
            if not setup.applies(cell):             # another framework's own answer (JAX, PyTorch)
                continue
            a, b = picked(setup.compare.benchmarks, setup.compare.a), picked(setup.compare.benchmarks, setup.compare.b)
            if claim.ref_cell is not None:          # across cells: each side where its cells are
                needed |= (a if about else set()) | (b if claim.ref_cell.matches(cell) else set())
                break
            if a and b and about:
                needed |= a | b
                break
    for x in extras(claims):
        if x.wanted(cell):
            needed |= picked(x.benchmarks, x.spec)
    return needed
