"""What comparing two result sets found: each variant's change (``VariantChange``) and the whole (``CompareResult``).

``sets.compare_cells`` (and ``ab``'s ``compare_sides``) make one; it
answers the CI gate (``offenders``, ``gate_line``: family-wise, through
``multiplicity.gate``) and says in lines what the comparison rests on and
what it could see (``summary_lines``), which the command and the views
(``report.compare_view``) print as they are.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..runs.control import uniform_note
from ..runs.kept import SOURCE as HISTORY
from ..runs.kept import RunSpread
from ..runs.run_level import RunLevel
from ..statistics.inference import ALPHA, Contrast, RatioCI
from ..statistics.multiplicity import GateCall, gate
from ..statistics.stats import deviation
from ..statistics.tails import one_process
from ..statistics.words import CHANGED, CLEAR, FASTER, SLOWER, THIN, UNCLEAR, A, B
from .agreement import Agreement, ComparisonChange
from .order import ORDER_DEPENDENT, OrderTest

FDR = 0.05      # the false-discovery rate a list of changed variants is read at
SUSPECT = ("one process a side, as far as this host's processes stray now and then; rounds on both sides or ab "
           "settle it")
CHANGES = {A: FASTER, B: SLOWER}   # a B/A ratio's direction: B against A


def change_verdict(ci: RatioCI) -> str:
    """"slower"/"faster" (B against A), ``UNCLEAR`` or ``THIN``: a B/A ratio's verdict, ``words.direction`` named
    as a change."""
    return CHANGES.get(ci.verdict, ci.verdict)


@dataclass(frozen=True)
class VariantChange:
    """One variant measured on both sides: time ratio B/A, its interval and what it rests on."""

    cell_a: str
    cell_b: str
    id: str
    benchmark: str
    time_a: float               # exp(mean per-round log p10): the numbers the ratio is made of (time_b / time_a)
    time_b: float
    ci: RatioCI
    noise: float                # what one round's ratio wanders by (its SD, relative: 0.1 = 10%); shown, not a rule
    contrast: Contrast | None = None
    q: float = math.nan         # its Benjamini-Hochberg adjusted p-value among the variants compared
    pooled: tuple[float, float] = (math.nan, math.nan)   # the pooled p10 of all samples, A and B (labelled so)
    order: OrderTest | None = None      # ab: whether which side went first moved it (``order``; None: not tested)

    @property
    def deviation(self) -> float:
        return deviation(self.time_a, self.time_b)

    @property
    def order_dependent(self) -> bool:
        return self.order is not None and self.order.flagged

    @property
    def gated(self) -> Contrast | None:
        """What the gate judges: the contrast, an order-dependent one moved towards 1 by what position moved it
        (``OrderTest.discounted``)."""
        if self.order is not None and self.order.flagged and self.contrast is not None:
            return self.order.discounted(self.contrast)
        return self.contrast

    @property
    def verdict(self) -> str:
        """``change_verdict``; ``ORDER_DEPENDENT`` where the side that went first moved it beyond the noise."""
        return ORDER_DEPENDENT if self.order_dependent else change_verdict(self.ci)

    @property
    def discovery(self) -> bool:
        """Changed, and still so when the whole list is read at a ``FDR`` false-discovery rate."""
        return self.verdict in CHANGED and self.q < FDR


@dataclass
class CompareResult:
    label_a: str
    label_b: str
    variants: list[VariantChange]
    comparisons: list[ComparisonChange]
    only_a: list[str] = field(default_factory=list)    # "cell: id" measured ok on one side only
    only_b: list[str] = field(default_factory=list)
    cells: list[tuple[str, str]] = field(default_factory=list)
    host_a: float | None = None       # the host reference's median time in each run (suite.reference), when recorded
    host_b: float | None = None
    scale: float = 1.0                # B's times were divided by this (--normalise: host_b / host_a)
    broke: list[tuple[str, str]] = field(default_factory=list)   # ("cell: id", reason): ok in A, failed in B
    normalise: str = "none"
    shift: float | None = None        # the median B/A over every variant: what the whole run moved by
    unreplicated: int = 0             # variants with one process a side and no variance from elsewhere
    cell_moves: dict[str, float] = field(default_factory=dict)   # per cell pair: its median B/A, when taken out
    cell_refs: dict[str, float] = field(default_factory=dict)    # per cell pair: its containers' reference B/A
    run_levels: dict[str, RunLevel] = field(default_factory=dict)  # per cell: its spread over the runs kept
    controls: dict[str, float] = field(default_factory=dict)     # per cell pair: the control's B/A taken out
    alpha: float = ALPHA              # each variant's test and the gate's (a sequential ab: 5% over its looks)
    spread: RunSpread | None = None   # each variant's run-to-run wander in the kept runs, added to its contrast

    def gate_calls(self, slower_than: float) -> list[GateCall]:
        """Each variant at the gate, in ``variants``' order; one process a side: against the measured tail."""
        return gate([v.gated for v in self.variants], slower_than, self.alpha, one_process())

    def offenders(self, slower_than: float) -> list[str]:
        """What fails a CI gate (``--fail-on slower:X%``): each variant that broke, then each one slower with
        family-wise confidence (Holm over every variant compared: an unchanged run fails at most 5% of the
        time) and its own 95% interval above 1 + ``slower_than``, worst first."""
        out = [f"broke: {what}: {why}" for what, why in self.broke]
        calls = self.gate_calls(slower_than)
        slow = sorted((v for v, call in zip(self.variants, calls, strict=True) if call.fails),
                      key=lambda v: -v.ci.ratio)
        return out + [f"slower: {self._gated(v)}" for v in slow]

    def order_lines(self) -> list[str]:
        """Each order-dependent variant (``ab``) with its one-line why, largest order effect first."""
        found = sorted((v for v in self.variants if v.order is not None and v.order.flagged),
                       key=lambda v: -abs(v.order.contrast.log_ratio) if v.order is not None else 0.0)
        return [f"{ORDER_DEPENDENT}: {v.cell_b}: {v.id}: {v.order.why}" for v in found if v.order is not None]

    def suspects(self, slower_than: float) -> list[str]:
        """Variants one process a side that their t test would fail but this host's one-process tail does not:
        printed, not failed; rounds on both sides (or ``ab`` for a benchmark file) settle them."""
        calls = self.gate_calls(slower_than)
        return [f"suspect ({SUSPECT}): {self._gated(v)}"
                for v, call in sorted(zip(self.variants, calls, strict=True), key=lambda vc: -vc[0].ci.ratio)
                if call.suspect]

    @staticmethod
    def _gated(v: VariantChange) -> str:
        return f"{v.cell_b}: {v.id}: {v.ci.ratio:.3f}x [{v.ci.low:.3f}, {v.ci.high:.3f}], noise {v.noise:.1%}"

    def gate_line(self, slower_than: float) -> str:
        """What the gate could see: the smallest slowdown that fails it (80% of the time), over the variants."""
        calls = self.gate_calls(slower_than)
        mdes = sorted(c.mde for c in calls if math.isfinite(c.mde))
        blind = len(self.variants) - len(mdes)
        if not mdes:
            return ("the gate could see no slowdown: no variant has replicated measurements (run --rounds 2 or "
                    "more)")
        median = mdes[len(mdes) // 2]
        tailed = sum(1 for c in calls if c.tail)
        null = one_process()
        return (f"the gate finds a slowdown of {_mde_text(median)} or more in half the variants (80% of the time), "
                f"{_mde_text(mdes[0])} in the best measured, {_mde_text(mdes[-1])} in the worst; smaller ones cannot "
                "be seen by "
                f"this comparison" + (f"; {blind} variant(s) not gated: not enough replication" if blind else "")
                + (f"; {tailed} variant(s) measured in one process a side are judged against this host's "
                   f"one-process tail (Student t, {null.df:g} df, scale {null.scale:g}; tfmatrix/data/"
                   "noise_tails.toml), not their t test: one process is now and then 25-35% slow" if tailed else "")
                + self.uniform_note())

    def uniform_note(self) -> str:
        """Can a slowdown of a whole slice or cell fail the gate? (``control.uniform_note``)"""
        return uniform_note(self.normalise, self.cell_moves, self.controls, self.run_levels)

    @property
    def agreement(self) -> Agreement:
        return Agreement.of([(f"{v.cell_b}: {v.id}", v.deviation) for v in self.variants])

    @property
    def comparison_agreement(self) -> Agreement:
        return Agreement.of([(f"{c.question} {c.group}: {c.config}", c.deviation) for c in self.comparisons])

    @property
    def reversed(self) -> list[ComparisonChange]:
        return [c for c in self.comparisons if c.reversed]

    def verdicts(self) -> dict[str, int]:
        out = {FASTER: 0, SLOWER: 0, UNCLEAR: 0, THIN: 0, ORDER_DEPENDENT: 0}
        for v in self.variants:
            out[v.verdict] += 1
        return out

    def counts_text(self) -> str:
        """'N slower, N faster, N no clear difference[, N not enough replication][, N order-dependent]': compare's
        and ab's summary."""
        counts = self.verdicts()
        return (f"{counts['slower']} slower, {counts['faster']} faster, {counts['no clear difference']} no clear "
                "difference" + (f", {counts['not enough replication']} not enough replication"
                                if counts["not enough replication"] else "")
                + (f", {counts[ORDER_DEPENDENT]} {ORDER_DEPENDENT}" if counts[ORDER_DEPENDENT] else ""))

    def summary_lines(self) -> list[str]:
        clear_a = sum(1 for c in self.comparisons if c.verdict_a in CLEAR)
        return [
            f"A = {self.label_a}, B = {self.label_b}; {len(self.cells)} cell pair(s)",
            self.agreement.line("variants (times: geometric mean of the rounds' 10th percentiles)"),
            f"verdicts, B against A: {self.counts_text()}",
        ] + ([self.discovery_line()] if self.unreplicated < len(self.variants) else []) + [
            self.resolution_line(),
            self.prior_line(),
        ] + ([self.spread_line()] if self.across_runs else []) + [
            self.comparison_agreement.line("the questions' lines (time ratios)"),
            f"the questions' lines clear in A: {clear_a}; reversed in B: {len(self.reversed)}; "
            f"clear in one and unclear in the other: {sum(1 for c in self.comparisons if c.flipped)}",
            self.host_line(),
        ] + ([self.replication_line()] if self.unreplicated else [])

    def discovery_line(self) -> str:
        found = [v for v in self.variants if v.discovery]
        slower = sum(1 for v in found if v.verdict == SLOWER)
        return (f"read as one list at a {FDR:.0%} false-discovery rate (Benjamini-Hochberg): {slower} slower, "
                f"{len(found) - slower} faster; each variant's own verdict is a {self.alpha * 100:.3g}% test, so about "
                f"1 in {round(1 / self.alpha)} unchanged variants is called different by chance")

    def resolution_line(self) -> str:
        mdes = sorted(v.ci.mde for v in self.variants if math.isfinite(v.ci.mde))
        if not mdes:
            return "no variant has replicated measurements: no change can be resolved"
        return (f"smallest change resolved (80% of the time): {mdes[len(mdes) // 2]:.0%} at the median variant, "
                f"{mdes[0]:.0%} at best, {mdes[-1]:.0%} at worst; a \"no clear difference\" says nothing about "
                "changes smaller than its own")

    def prior_line(self) -> str:
        """What share of the comparisons had a variance prior, and from where (``moderation``, ``runs.kept``)."""
        kinds = {"moderated": 0, "history": 0, "noise model": 0}
        for v in self.variants:
            prior = v.contrast.prior if v.contrast is not None else ""
            if prior:
                kinds["history" if HISTORY in prior else "noise model" if prior.startswith("noise model")
                      else "moderated"] += 1
        n = max(1, len(self.variants))
        if not sum(kinds.values()):
            return "variance priors: none (each variant judged on its own rounds, where it has two or more)"
        return (f"variance priors: {sum(kinds.values()) / n:.0%} of the variants compared ("
                f"{kinds['moderated'] / n:.0%} moderated across their benchmark or cell pair, "
                f"{kinds['history'] / n:.0%} their own noise in the kept runs, "
                f"{kinds['noise model'] / n:.0%} a noise model file)")

    @property
    def across_runs(self) -> bool:
        """Some variant is compared across two runs (its rounds unpaired), not between cells of one run."""
        return any(v.contrast is not None and not v.contrast.paired for v in self.variants)

    def spread_line(self) -> str:
        """Whether the run-to-run wander of each variant (``kept.run_spread``) joined its interval, and how much."""
        if self.spread is None:
            return ("run-to-run wander: not known (each interval rests on its rounds alone, and a variant that "
                    "moves between runs by more than its rounds show is called different more often than 5%; "
                    "kept runs measure it: `compare --kept DIR`, or the noise history a report keeps)")
        added = [self.spread.of_pair((v.cell_a, v.id), (v.cell_b, v.id)) for v in self.variants]
        wander = sorted(math.sqrt(a[0] / 2) for a in added if a is not None)
        if not wander:
            return f"run-to-run wander: none of the variants compared is in the {self.spread.source}"
        line = (f"run-to-run wander (each variant's, beyond its rounds, from the {self.spread.source}) added to "
                f"{len(wander)} of {len(self.variants)} variants' intervals: {wander[len(wander) // 2]:.1%} at the "
                f"median, {wander[int(0.9 * (len(wander) - 1))]:.1%} at the 90th percentile")
        levels = {cell: self.spread.levels[cell] for cell in self.controls if cell in self.spread.levels}
        if levels:
            line += ("; and how far each cell's move strays from its control's between runs, added to its variants' "
                     "(--normalise control): " + ", ".join(f"{cell} {math.sqrt(var):.1%}"
                                                             for cell, (var, _) in sorted(levels.items())))
        return line

    def replication_line(self) -> str:
        return (f"{self.unreplicated} variants have one process a side and no noise model from a replicated run: "
                "not enough replication for a verdict (run --rounds 2 or more, or compare result sets of a reports "
                "directory whose run archive kept a replicated run of the same cells)")

    def host_line(self) -> str:
        moved = f"every variant together moved B/A {self.shift:.3f} (median)" if self.shift else \
            "too few variants to tell what the whole run moved by"
        if self.host_a and self.host_b:
            host = (f"the host reference workload {self.host_a * 1e3:.2f} ms in A, {self.host_b * 1e3:.2f} ms in B "
                    f"(B/A {self.host_b / self.host_a:.3f})")
        else:
            host = "no host reference on both sides (runs before the interleaved schedule)"
        moves = ", ".join(f"{cell} {move:.3f}" + self._move_note(cell, move) for cell, move in self.cell_moves.items())
        how = {"none": "ratios as measured (--normalise cell|host|run takes a common move out)",
               "cell": f"each cell's common move taken out ({moves}): a run-level move of a whole cell, which one "
                       "run a side cannot tell from the run's own drift, is shown, not judged",
               "control": "each cell's move taken from its containers' reference workload ("
                          + ", ".join(f"{c} {m:.3f}" for c, m in self.controls.items()) + "): a change that slowed "
                          "a whole cell is judged" + (f"; common move taken out where there is none ({moves})"
                                                      if len(self.controls) < len(self.cell_moves) else ""),
               "host": f"ratios divided by the host reference's B/A {self.scale:.3f}",
               "run": f"ratios divided by the common move {self.scale:.3f}: a change that slowed every variant "
                      "alike is not seen"}[self.normalise]
        if self.normalise == "host" and not (self.host_a and self.host_b):
            how = "ratios as measured (no host reference on both sides)"
        if self.normalise == "run" and not self.shift:
            how = "ratios as measured (too few variants to find the common move: --normalise run needs 10)"
        return f"{moved}; {host}; {how}"

    def _move_note(self, cell: str, move: float) -> str:
        notes = []
        if cell in self.cell_refs:
            notes.append(f"its containers' own reference {self.cell_refs[cell]:.3f}")
        if cell in self.run_levels:
            notes.append(self.run_levels[cell].text(move))
        return f" ({'; '.join(notes)})" if notes else ""


def _mde_text(mde: float) -> str:
    """A smallest visible slowdown as a percentage; past 10x, a variant whose interval spans orders of magnitude
    (one round a side of a call that recompiles) has no useful figure: "over 1000%" says so."""
    return f"{mde:.0%}" if mde <= 10 else "over 1000%"
