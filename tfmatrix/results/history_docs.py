"""The two documents ``history/`` writes beside a report and the report reads back: a bisect answer and a timeline.

One definition of each shape, one writer (``history.bisect`` / ``history.timeline``
build the record, ``to_json`` dumps it) and one reader (``from_json``; ``history_in``
finds them beside a report), with a version like the cell file's (``documents.Format``):
a newer file is refused with one line, an older one upgraded step by step.
Files written before the version existed carry no ``schema`` key; they are
read as version 1, which they are. Where they live is declared here too
(``BISECT_DIR``, ``timeline_file``), so the writer and the reader cannot
disagree on a name.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from .foreign import RESULTS_CAP, read_file
from .formats import Format, versioned

BISECT_DIR = "bisect"                      # <reports>/bisect/<target>-<axis>-<good>-<bad>.json
BISECT_FORMAT = Format("tfmatrix.bisect", 1, {}, "bisect answer")
TIMELINE_FORMAT = Format("tfmatrix.timeline", 1, {}, "timeline")
TIMELINE_FILES = (("tf", "timeline", "TensorFlow releases"), ("keras", "timeline-keras", "Keras 3 releases"),
                  ("jax", "timeline-jax", "JAX releases"), ("torch", "timeline-torch", "PyTorch releases"))


def timeline_file(axis: str, suffix: str = ".json") -> str:
    """``timeline.json`` for TF releases, ``timeline-keras.json`` for Keras 3's, ``timeline-jax.json`` and
    ``timeline-torch.json`` for the backends' (``.csv`` beside each)."""
    stem = next(stem for name, stem, _ in TIMELINE_FILES if name == axis)
    return stem + suffix


def _dump(fmt: Format, record: Any) -> dict[str, Any]:
    return {"schema": fmt.schema, "schema_version": fmt.version, **asdict(record)}


# -- bisect ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ProbeDoc:
    """One probe of a bisection as stored: the release, how it came out, its value and interval (or none)."""

    release: str
    state: str                     # like-good | like-bad | undecided | skipped
    end: bool
    attempts: int
    reason: str
    value: float | None
    low: float | None
    high: float | None
    unit: str | None               # "x" (a claim's ratio) or "s" (a variant's time)
    how: str = ""                  # reused | measured ...


@dataclass(frozen=True)
class BisectDoc:
    """A bisection's answer: which release changed the target, every probe, the packages that differ there."""

    target: str
    label: str
    axis: str                      # "tf" | "keras" | "jax" | "torch"
    tf: str                        # the keras axis: the TF every Keras ran on
    good: str
    bad: str
    found: bool
    last_good: str | None
    first_bad: str | None
    answer: str
    between: list[str] = field(default_factory=list)
    problem: str = ""
    probes: list[ProbeDoc] = field(default_factory=list)
    packages: list[list[str]] = field(default_factory=list)      # [package, last good, first bad]
    notes: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)       # where, from profiles of both releases (``history.why``)
    keras: str = ""                # a backend axis: the Keras 3 every release ran under

    def to_json(self) -> dict[str, Any]:
        return _dump(BISECT_FORMAT, self)

    @classmethod
    def from_json(cls, doc: Any, path: Path) -> BisectDoc:
        doc = versioned(doc, BISECT_FORMAT, path)
        try:
            probes = [ProbeDoc(**p) for p in doc["probes"]]
            values = {k: v for k, v in doc.items() if k not in ("schema", "schema_version", "probes")}
            return cls(**values, probes=probes)
        except (KeyError, TypeError) as exc:
            raise UserError(f"{path}: not a {BISECT_FORMAT.what} this tfmatrix reads ({exc})") from None


# -- timeline --------------------------------------------------------------------------------

@dataclass(frozen=True)
class TimelinePoint:
    """One claim in one release's cell: its first line (ratio, interval, verdict), or why it has none."""

    claim: str
    release: str
    cell: str
    ratio: float | None
    low: float | None
    high: float | None
    verdict: str
    line: str = ""
    reason: str = ""
    source: str = ""               # the cell file it was read from, relative to the reports directory


TIMELINE_COLUMNS = tuple(TimelinePoint.__dataclass_fields__)      # timeline.csv's columns


@dataclass(frozen=True)
class ClaimAbout:
    """What a timeline's claim says, for the chart's title: the claim, and the two sides of its ratio."""

    claim: str
    a: str
    b: str


@dataclass(frozen=True)
class TimelineDoc:
    """Every one-cell claim across the releases of one axis: one point per claim and release."""

    axis: str                      # "tf" | "keras" | "jax" | "torch"
    tf: str                        # the keras axis: the TF it ran on
    releases: list[str]
    preset: str
    claims: dict[str, ClaimAbout]
    left_out: list[str] = field(default_factory=list)      # the claims that compare two cells
    points: list[TimelinePoint] = field(default_factory=list)
    keras: str = ""                # a backend axis: the Keras 3 it ran under

    def to_json(self) -> dict[str, Any]:
        return _dump(TIMELINE_FORMAT, self)

    def of(self, claim: str) -> list[TimelinePoint]:
        return [p for p in self.points if p.claim == claim]

    @classmethod
    def from_json(cls, doc: Any, path: Path) -> TimelineDoc:
        doc = versioned(doc, TIMELINE_FORMAT, path)
        try:
            claims: Mapping[str, Any] = doc["claims"]
            return cls(doc["axis"], doc["tf"], [str(r) for r in doc["releases"]], doc["preset"],
                       {k: ClaimAbout(**v) for k, v in claims.items()}, list(doc.get("left_out") or []),
                       [TimelinePoint(**p) for p in doc["points"]], str(doc.get("keras") or ""))
        except (KeyError, TypeError, AttributeError) as exc:
            raise UserError(f"{path}: not a {TIMELINE_FORMAT.what} this tfmatrix reads ({exc})") from None


# -- reading them back beside a report -----------------------------------------------------------

@dataclass(frozen=True)
class FoundBisect:
    """A bisect answer found beside a report, and its file (relative to the reports directory)."""

    file: str
    doc: BisectDoc


@dataclass(frozen=True)
class FoundTimeline:
    """A timeline found beside a report: its file, what its releases are ("TensorFlow releases"), the timeline."""

    file: str
    title: str
    doc: TimelineDoc


@dataclass(frozen=True)
class HistoryFound:
    """Every bisect answer (newest first) and timeline beside a report, and why each unreadable one was left out."""

    bisections: list[FoundBisect] = field(default_factory=list)
    timelines: list[FoundTimeline] = field(default_factory=list)
    unreadable_bisections: list[str] = field(default_factory=list)
    unreadable_timelines: list[str] = field(default_factory=list)


def _read(path: Path) -> Any:
    return json.loads(read_file(path, RESULTS_CAP, follow=True))


def history_in(reports: Path) -> HistoryFound:
    """What ``bisect`` and ``timeline`` left in ``reports``: a file that cannot be read is listed, never fatal."""
    bisections, bad_bisections = [], []
    files = sorted((reports / BISECT_DIR).glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in files:
        file = f"{BISECT_DIR}/{path.name}"
        try:
            bisections.append(FoundBisect(file, BisectDoc.from_json(_read(path), path)))
        except (OSError, ValueError, UserError) as exc:
            bad_bisections.append(f"{file}: {type(exc).__name__}: {exc}")
    timelines, bad_timelines = [], []
    for axis, _, title in TIMELINE_FILES:
        name = timeline_file(axis)
        path = reports / name
        if not path.exists():
            continue
        try:
            timelines.append(FoundTimeline(name, title, TimelineDoc.from_json(_read(path), path)))
        except (OSError, ValueError, UserError) as exc:
            bad_timelines.append(f"{name}: {type(exc).__name__}: {exc}")
    return HistoryFound(bisections, timelines, bad_bisections, bad_timelines)
