"""The bisection over releases, pure: which release changed a measured ratio (``asv find``, for TF/Keras releases).

A probe is classified against the two ends the user named, never against a
threshold they would have to guess: the *good* end measured ratio g with its
95% interval, the *bad* end b. Their geometric midpoint ``sqrt(g * b)`` splits
the ratio axis; a probe whose whole interval lies on the good end's side is
``like-good``, on the bad end's side ``like-bad``. An interval that spans the
midpoint cannot decide: the probe is measured again with more samples
(``attempt`` 2), and if it still spans it is reported as ``undecided``, never
guessed. The ends themselves must differ (their intervals apart), or there
is nothing to bisect.

A release that cannot exist here (no wheel for the host's Pythons) or whose
cell fails to build or run is ``skipped`` with its reason, as ``git bisect
skip`` does: the search takes the next release nearest the middle. The
answer is the adjacent pair of decided releases with a change between them,
plus whatever undecided or skipped releases lie between the two (the change
is somewhere in that stretch).

A bisection assumes one change between the ends. When a change happened and
was undone in between, it finds one of the boundaries (each one it names is
real: a like-good release next to a like-bad one); the timeline shows them all.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

GOOD, BAD, UNDECIDED, SKIPPED = "like-good", "like-bad", "undecided", "skipped"
ATTEMPTS = 2          # a probe whose interval spans the midpoint is measured once more, with more samples


@dataclass(frozen=True)
class Measure:
    """What one release measured: the ratio (or time) with its 95% interval."""

    value: float
    low: float
    high: float
    unit: str = "x"                 # "x": a ratio; "s": a time

    def text(self) -> str:
        if self.unit == "s":
            return f"{_seconds(self.value)} [{_seconds(self.low)}, {_seconds(self.high)}]"
        return f"{_fmt(self.value)}x [{_fmt(self.low)}, {_fmt(self.high)}]"


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 10 else f"{x:.1f}"


def _seconds(x: float) -> str:
    return f"{x * 1e3:.3g} ms" if x < 1 else f"{x:.3g} s"


@dataclass
class Probe:
    """One release the search measured (or could not), in the order it did."""

    release: str
    state: str                      # GOOD | BAD | UNDECIDED | SKIPPED
    measure: Measure | None = None
    reason: str = ""                # skipped: why; undecided: what it spanned
    attempts: int = 1
    end: bool = False               # one of the two ends the user named

    def text(self) -> str:
        what = self.measure.text() if self.measure else self.reason
        extra = f" ({self.reason})" if self.measure and self.reason else ""
        again = f", measured {self.attempts} times" if self.attempts > 1 else ""
        return f"{self.release}: {self.state}{' (end)' if self.end else ''}: {what}{extra}{again}"


@dataclass
class Outcome:
    """The path of probes and the boundary they found (``last_good`` -> ``first_bad``), or why none."""

    releases: tuple[str, ...]       # the candidates, good end first
    probes: list[Probe] = field(default_factory=list)
    last_good: str | None = None
    first_bad: str | None = None
    between: list[Probe] = field(default_factory=list)    # undecided or skipped releases inside the boundary
    problem: str = ""               # why there is no boundary (an end failed, the ends do not differ)
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.last_good is not None and self.first_bad is not None

    def probe(self, release: str) -> Probe | None:
        return next((p for p in self.probes if p.release == release), None)

    @property
    def measured(self) -> int:
        """Releases measured between the ends (the ends are counted apart: they are often reused)."""
        return sum(1 for p in self.probes if not p.end and p.state != SKIPPED)

    def boundary_text(self) -> str:
        if not self.found:
            return self.problem or "no boundary found"
        good, bad = self.probe(self.last_good or ""), self.probe(self.first_bad or "")
        assert good is not None and bad is not None and good.measure and bad.measure
        text = f"changed between {self.last_good} and {self.first_bad}: {good.measure.text()} -> {bad.measure.text()}"
        if self.between:
            text += "; in between, " + "; ".join(f"{p.release} {p.state} ({p.reason})" for p in self.between)
        return text


def midpoint(good: Measure, bad: Measure) -> float:
    """The geometric middle of the two ends' values: the line a probe's interval must not cross."""
    return math.sqrt(good.value * bad.value)


def ends_differ(good: Measure, bad: Measure) -> bool:
    """The two ends' intervals are apart: they measured different things."""
    return good.high < bad.low or bad.high < good.low


def classify(probe: Measure, good: Measure, bad: Measure) -> str:
    """GOOD, BAD or UNDECIDED: which side of the ends' midpoint the probe's whole interval lies on."""
    mid = midpoint(good, bad)
    good_below = good.value < bad.value
    if probe.high < mid:
        return GOOD if good_below else BAD
    if probe.low > mid:
        return BAD if good_below else GOOD
    return UNDECIDED


MeasureFn = Callable[[str, int], Measure | str]     # (release, attempt) -> its measure, or why it has none


def search(releases: Sequence[str], measure: MeasureFn) -> Outcome:
    """Bisect ``releases`` (ordered from the good end to the bad end) with ``measure``.

    ``measure(release, attempt)`` returns the release's ``Measure`` or a
    one-line reason it has none (it cannot exist here, its build failed);
    ``attempt`` 2 asks for more samples. The ends are measured first; each
    later probe is the undecided-so-far release nearest the middle of the
    stretch that still holds the change.
    """
    out = Outcome(tuple(releases))
    if len(releases) < 2:
        out.problem = "a bisection needs two different releases as its ends"
        return out
    ends: list[Measure] = []
    for release, role in ((releases[0], "good"), (releases[-1], "bad")):
        got = measure(release, 1)
        if isinstance(got, str):
            out.probes.append(Probe(release, SKIPPED, None, got, end=True))
            out.problem = f"the {role} end {release} has no measurement: {got}"
            return out
        out.probes.append(Probe(release, GOOD if role == "good" else BAD, got, end=True))
        ends.append(got)
    good, bad = ends
    if not ends_differ(good, bad):
        out.probes[0].state = out.probes[1].state = UNDECIDED
        out.problem = (f"the ends do not differ: {releases[0]} {good.text()} and {releases[-1]} {bad.text()} "
                       "overlap, so there is no change to find between them")
        return out
    lo, hi = 0, len(releases) - 1
    states: dict[int, Probe] = {lo: out.probes[0], hi: out.probes[1]}
    while True:
        open_ = [i for i in range(lo + 1, hi) if i not in states]
        if not open_:
            break
        middle = (lo + hi) / 2
        i = min(open_, key=lambda k: (abs(k - middle), k))
        probe = _probe(releases[i], measure, good, bad)
        out.probes.append(probe)
        states[i] = probe
        if probe.state == GOOD:
            lo = i
        elif probe.state == BAD:
            hi = i
    out.last_good, out.first_bad = releases[lo], releases[hi]
    out.between = [states[i] for i in range(lo + 1, hi) if i in states]
    return out


def _probe(release: str, measure: MeasureFn, good: Measure, bad: Measure) -> Probe:
    last: Measure | None = None
    for attempt in range(1, ATTEMPTS + 1):
        got = measure(release, attempt)
        if isinstance(got, str):
            return Probe(release, SKIPPED, None, got, attempts=attempt)
        last = got
        state = classify(got, good, bad)
        if state != UNDECIDED:
            return Probe(release, state, got, attempts=attempt)
    return Probe(release, UNDECIDED, last, f"its interval spans {_fmt(midpoint(good, bad))}x, the middle of the ends",
                 attempts=ATTEMPTS)
