"""The series of kept runs and what they say: per testbed and cell, which variants stepped, when, by how much.

A step is found in two places, as ``compare`` finds a change in two
(``--normalise cell`` and ``control``): each variant against its cell's
common move of that run (one variant got slower while the rest did not),
and the cell's common move against its containers' reference workload (the
whole cell or user file got slower; without a reference, against nothing,
and the answer says so). Runs are compared only within one testbed and one
request (the same benchmarks, preset and rounds): a run of other benchmarks
starts a series of its own. A claim line whose verdict changed says when.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ...results.archive import KeptRun, Testbed
from ..claims.answers import CANNOT
from ..runs.noise_model import CONTROL
from ..statistics.steps import Point, SeriesAnswer, Step, Wander, common_move, find_steps, pooled_wander
from ..statistics.tails import whole_cell
from ..statistics.words import THIN

WHOLE = "~whole cell"      # the variant id the cell's common move goes by
AGAINST_CONTROL = "against its containers' reference workload"
HOST_STEADY = 1.25         # the host reference's move over a series of a steady day here: 10-12% (2026-11-29),
#                            a busy one 54-83%
WITHIN = 3                 # the series gate reads steps among each series' newest WITHIN runs: one run after a
#                            step is a suspect, the second confirms it, the third still fails while it stays


@dataclass(frozen=True)
class VariantSeries:
    """One variant's points over the kept runs (its offset from the cell's move of each run) and their answer."""

    variant: str
    points: tuple[Point, ...]
    answer: SeriesAnswer


@dataclass(frozen=True)
class LineChange:
    """A claim line whose verdict changed: from ``before`` to ``after`` at ``run``; ``held``: the runs since (that
    one included) that gave ``after``."""

    line: str
    before: str
    after: str
    run: str
    when: str
    held: int


@dataclass(frozen=True)
class CellSeries:
    """A cell's kept runs on one testbed, with one request: the whole cell's answer, each variant's, the lines'."""

    testbed: Testbed
    cell: str
    runs: tuple[KeptRun, ...]
    whole: VariantSeries
    normalised: str                   # what the whole cell's move is taken against ("its reference workload", ...)
    variants: tuple[VariantSeries, ...]
    changes: tuple[LineChange, ...]
    lines: tuple[VariantSeries, ...] = ()      # each claim line's ratio over the runs (``variant``: the line's key)

    @property
    def stepped_lines(self) -> list[VariantSeries]:
        """The claim lines whose ratio stepped, the largest steps first."""
        return _largest_first(self.lines)

    @property
    def stepped(self) -> list[VariantSeries]:
        """The series with a step, the whole cell first, then the largest steps."""
        return ([self.whole] if self.whole.answer.steps else []) + _largest_first(self.variants)

    def measured_same(self, step: Step) -> bool:
        """Whether nothing measured (the code, the environment: ``entries.code_key``) changed between the run before
        ``step`` and its first run, as far as the kept files say (a file from before they said: unknown, False)."""
        return measured_same(self.runs, step.run)

    def host_move(self) -> float | None:
        """How far the host's reference workload moved over the runs (its slowest run over its fastest, a ratio;
        None: a run timed none)."""
        refs = [r.host_reference_s for r in self.runs if r.host_reference_s]
        return max(refs) / min(refs) if refs and len(refs) == len(self.runs) else None

    def steady(self) -> bool:
        """Whether the host's wander measured on steady days (``tails.whole_cell``) fits this series: its whole move
        is taken against its containers' reference workload, as that was measured, and the host's reference moved
        over the runs no more than on a steady day (``HOST_STEADY``). On a busy day the work follows the reference
        less closely (measured: a host reference of 10.1-18.5 ms, the containers' 10.3-11.5 ms, the file's 20% step
        seen as 4% in the busiest run), and the series is judged on its own runs and the other cells' alone."""
        move = self.host_move()
        return self.normalised == AGAINST_CONTROL and move is not None and move <= HOST_STEADY

    def cannot_tell(self) -> float | None:
        """The host's move (``host_move``) where it is beyond a steady day's (``HOST_STEADY``) and no whole-cell step
        was named: a step of the whole cell (every variant of a file 20% slower) is then not told apart from the
        host's day, whatever its reference workload says (on a day the host reference moved by 54%, a 20% step of a
        whole file went unnamed at three rounds a run: issue 63; on a busy one, 10.1-18.5 ms, the file's 20% showed
        as 4% in the busiest run). None where it can tell."""
        move = self.host_move()
        if move is None or self.whole.answer.steps or not math.isfinite(self.whole.answer.resolves):
            return None
        return move if move > HOST_STEADY else None

    def resolves(self) -> float | None:
        """The median variant's smallest step this series resolves (as a ratio; None: too few runs)."""
        values = sorted(s.answer.resolves for s in self.variants if math.isfinite(s.answer.resolves))
        return values[len(values) // 2] if values else None


def _largest_first(series: Sequence[VariantSeries]) -> list[VariantSeries]:
    """The series with a step, the largest step first."""
    found = [s for s in series if s.answer.steps]
    return sorted(found, key=lambda s: -max(abs(math.log(st.ratio)) for st in s.answer.steps))


HOST = "host"       # a step's kind where nothing measured changed in its run: the host's state, not a regression


def measured_same(runs: Sequence[KeptRun], run: str) -> bool:
    """Whether nothing measured changed between ``run`` and the run before it in ``runs`` (unknown: False)."""
    at = next((i for i, r in enumerate(runs) if r.run == run), 0)
    return at > 0 and bool(runs[at].code) and runs[at].code == runs[at - 1].code


def attributed(answer: SeriesAnswer, runs: Sequence[KeptRun]) -> SeriesAnswer:
    """``answer`` with each confirmed step in a run where nothing measured changed (the code, the environment) made
    a ``HOST`` step: the machine's state moved, as on this host a whole kind of work does now and then (measured:
    every matmul variant of a file 30% faster from one run on, nothing changed). As asv lays steps on commits, a
    regression is a step where what was measured changed."""
    steps = tuple(replace(s, kind=HOST) if s.kind in ("regression", "improvement") and measured_same(runs, s.run)
                  else s for s in answer.steps)
    if steps == answer.steps:
        return answer
    named = [s for s in steps if s.kind in ("regression", "improvement")]
    status = "step" if named else ("suspicious" if any(s.kind == "suspicious" for s in steps) else "steady")
    return replace(answer, steps=steps, status=status)


def step_text(name: str, step: Step, same: bool = False, line: bool = False) -> str:
    """ "X 20% slower since run R (date), confirmed by 3 runs" (or "suspicious: one run so far"); ``same``: nothing
    measured changed in that run, said beside it (a ``HOST`` step is the machine's); ``line``: X is a claim line,
    whose ratio (time A/B) moved ("its ratio x1.20")."""
    change = step.ratio - 1.0
    way = "slower" if change > 0 else "faster"
    size = (f"its ratio (time A/B) x{step.ratio:.3f} [{step.low:.3f}, {step.high:.3f}]" if line
            else f"{abs(change):.0%} {way} [{step.low:.3f}, {step.high:.3f}]")
    code = "; nothing measured changed in that run (the code, the environment): the host's state" if same else ""
    if step.kind == "suspicious":
        return f"{name}: {size} in the newest run ({step.when}) only: suspicious, not confirmed yet{code}"
    run = f"run {step.when}" if step.run == step.when else f"run {step.run} ({step.when})"
    return f"{name}: {size} since {run}, confirmed by {step.after} runs{code}"


def change_text(change: LineChange) -> str:
    return (f"{change.line}: {change.before} until {change.run} ({change.when}), {change.after} since "
            f"({change.held} run{'s' if change.held != 1 else ''})")


def groups(runs: Sequence[KeptRun]) -> dict[tuple[str, str, str], list[KeptRun]]:
    """The kept runs by (testbed key, cell, request), oldest first."""
    out: dict[tuple[str, str, str], list[KeptRun]] = defaultdict(list)
    for r in sorted(runs, key=lambda r: r.finished):
        out[(r.testbed.key, r.cell, r.request)].append(r)
    return dict(out)


def cell_series(runs: Sequence[KeptRun]) -> list[CellSeries]:
    """Every (testbed, cell, request) series of the kept runs.

    The run-to-run wander a step is judged against is measured over many
    series at once (``steps.pooled_wander``), never one series' few runs: a
    variant's, over its cell's variants; a whole cell's, over every other
    cell's whole series on its testbed (cells on one host wander alike) and
    the host's measured wander (``tails.whole_cell``), as the prior beside
    which the series' own runs are fitted (``whole_prior``): a user's one
    cell is judged on more than its five runs, many cells on each other. The
    host's figure is a steady day's: a series of a busier day (``steady``)
    has the other cells' alone.
    """
    made = [_one(group) for group in groups(runs).values()]
    out = []
    for s, whole in made:
        others = pooled_wander([w for t, w in made if t.testbed.key == s.testbed.key and t is not s])
        prior = whole_prior(others, whole_cell() if s.steady() else None)
        answer = attributed(find_steps(whole, prior=prior), s.runs)
        out.append(replace(s, whole=VariantSeries(WHOLE, whole, answer)))
    return sorted(out, key=lambda s: (s.testbed.key, s.cell, s.runs[0].finished))


def whole_prior(others: Wander, host: Wander | None) -> Wander | None:
    """The other series' whole-cell wander (``others``) and the host's (``tails.whole_cell``, where it fits),
    pooled on their degrees of freedom: what a cell's whole series is judged beside (None: neither is known)."""
    known = [w for w in (host, others) if w is not None and w.d > 0 and math.isfinite(w.var)]
    if len(known) < 2:
        return known[0] if known else None
    d = sum(w.d for w in known)
    return Wander(sum(w.d * w.var for w in known) / d, d, "; ".join(w.source or f"{w.d:.0f} other runs" for w in known))


def _one(runs: Sequence[KeptRun]) -> tuple[CellSeries, tuple[Point, ...]]:
    """One series without its whole cell's answer (``cell_series`` judges it), and the whole cell's points."""
    raw: dict[str, list[Point]] = defaultdict(list)
    for r in runs:
        for vid, (mean, var) in r.means.items():
            if vid != CONTROL and math.isfinite(mean):
                raw[vid].append(Point(r.run, r.finished, mean, var))
    moves = {p.run: p for p in common_move(raw)} if raw else {}
    offsets = {vid: tuple(Point(p.run, p.when, p.log_mean - moves[p.run].log_mean, p.var)
                          for p in points if p.run in moves) for vid, points in sorted(raw.items())}
    variants = _judged(offsets, runs)
    whole_points, normalised = _whole(runs, moves)
    pending = VariantSeries(WHOLE, whole_points, find_steps(()))
    return (CellSeries(runs[0].testbed, runs[0].cell, tuple(runs), pending, normalised, variants,
                       tuple(line_changes(runs)), line_series(runs)), whole_points)


def line_series(runs: Sequence[KeptRun]) -> tuple[VariantSeries, ...]:
    """Each claim line's ratio over ``runs`` (oldest first) and its steps: a point per run that kept its value, with
    its log variance (NaN: one process a side); the wander pooled over the cell's lines. A claim's
    ratio moves when either of its variants does: this says when the answer's size changed, as ``line_changes``
    says when its verdict did."""
    raw: dict[str, list[Point]] = defaultdict(list)
    for r in runs:
        for line, (ratio, _, _, var) in r.values.items():
            if math.isfinite(ratio) and ratio > 0:
                raw[line].append(Point(r.run, r.finished, math.log(ratio), var))
    return _judged({line: tuple(points) for line, points in sorted(raw.items())}, runs)


def _judged(series: Mapping[str, tuple[Point, ...]], runs: Sequence[KeptRun]) -> tuple[VariantSeries, ...]:
    """Each of a cell's series (its variants', or its claim lines') judged by the step rule, the run-to-run wander
    pooled over them all (``steps.pooled_wander``), each step laid on what changed in its run (``attributed``)."""
    wander = pooled_wander(list(series.values())).var if series else math.nan
    given = wander if math.isfinite(wander) else None
    return tuple(VariantSeries(name, points, attributed(find_steps(points, given), runs))
                 for name, points in series.items())


def _whole(runs: Sequence[KeptRun], moves: Mapping[str, Point]) -> tuple[tuple[Point, ...], str]:
    """The cell's common move per run against its reference workload, else the host's, else as measured."""
    if all(CONTROL in r.means and math.isfinite(r.means[CONTROL][0]) for r in runs):
        ref = {r.run: r.means[CONTROL] for r in runs}
        normalised = AGAINST_CONTROL
    elif all(r.host_reference_s for r in runs):
        ref = {r.run: (math.log(r.host_reference_s or 1.0), math.nan) for r in runs}
        normalised = "against the host's reference workload"
    else:
        ref = {r.run: (0.0, 0.0) for r in runs}
        normalised = "as measured (some run timed no reference workload)"
    points = tuple(Point(p.run, p.when, p.log_mean - ref[p.run][0], _plus(p.var, ref[p.run][1]))
                   for p in moves.values() if p.run in ref)
    return points, normalised


def _plus(a: float, b: float) -> float:
    return a + b if math.isfinite(b) else a


@dataclass(frozen=True)
class GateHit:
    """A step the series gate reads: in ``cell``, ``variant`` (``WHOLE``: the cell as a whole) stepped by ``step``."""

    series: CellSeries
    variant: str
    step: Step


def gate(series: Sequence[CellSeries], threshold: float, within: int) -> tuple[list[GateHit], list[GateHit]]:
    """(offenders, suspects) of the kept runs as a CI gate's baseline: a confirmed regression whose 95% interval
    lies above 1 + ``threshold`` and whose first run is among each series' newest ``within`` runs fails it; a
    suspicious step of that size on the newest run alone is a suspect (one run cannot fail a series gate: the
    next run confirms it or not). A ``HOST`` step (nothing measured changed) is neither."""
    offenders, suspects = [], []
    for s in series:
        newest = {r.run for r in s.runs[-within:]}
        for v in (s.whole, *s.variants):
            for st in v.answer.steps:
                if st.run not in newest or st.ratio <= 1.0:
                    continue
                if st.kind == "regression" and st.low > 1.0 + threshold:
                    offenders.append(GateHit(s, v.variant, st))
                elif st.kind == "suspicious" and st.ratio > 1.0 + threshold and not s.measured_same(st):
                    suspects.append(GateHit(s, v.variant, st))
    return offenders, suspects


def line_changes(runs: Sequence[KeptRun]) -> list[LineChange]:
    """Each claim line's last verdict change over ``runs`` (oldest first); a run that could not answer the line
    (one round, or no such configuration) is skipped, not counted as a change."""
    by_line: dict[str, list[tuple[KeptRun, str]]] = defaultdict(list)
    for r in runs:
        for line, verdict in r.lines.items():
            if verdict not in (THIN, CANNOT):        # no answer in that run: neither a change nor a hold
                by_line[line].append((r, verdict))
    out = []
    for line, seen in sorted(by_line.items()):
        last = max((i for i in range(1, len(seen)) if seen[i][1] != seen[i - 1][1]), default=None)
        if last is not None:
            run, after = seen[last]
            out.append(LineChange(line, seen[last - 1][1], after, run.run, run.finished, len(seen) - last))
    return out
