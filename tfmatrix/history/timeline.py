"""``tfmatrix timeline``: every claim measured inside one cell, across every TensorFlow minor release.

One CPU cell per minor release from 1.14 to the newest in the table (its
newest patch), or with ``--axis keras`` one per Keras 3 minor release on one
TF; each runs only the variants the claims compare (``targets``), at the
preset's sizes, through the same runners, images, wheelhouse and interleaved
schedule as the matrix (the timeline's cells are one interleaved run). A
release whose cell file already holds those variants (the main matrix's,
an earlier timeline's or bisect's, same suite) is read, not measured again.

Per claim and release: the claim's first line (the seed's configuration)
with its ratio, 95% interval and verdict, in ``<reports>/timeline.csv`` and
``.json``; the report draws one chart per claim (``report.timeline_view``)
and marks each release where the verdict changes.

The claim that compares two cells (TF 2.0 + Keras 2.3.1 against TF 1.14 +
Keras 2.2.5) has no value per release and is left out, said so.

The steps (``reuse``, ``measure``, ``write``) take what they need; the
``timeline`` command (``commands/timeline.py``) reads the options and holds
the checkout's run lock around ``measure``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple
from pathlib import Path
from typing import Any

from rich.console import Console

from ..analysis.cells import CellResult, load_file
from ..analysis.claims.answers import CANNOT, NOT_MEASURED
from ..analysis.claims.files import builtin
from ..analysis.claims.records import Claim
from ..analysis.frame import build_frame
from ..analysis.timeline import DECIDED, reading, verdict_counts, verdict_steps
from ..execution.request import RunRequest
from ..matrix import Cell, Settings
from ..results.csv_files import csv_text
from ..results.history_docs import TIMELINE_COLUMNS, ClaimAbout, TimelineDoc, TimelinePoint, timeline_file
from ..results.store import suite_fingerprint, write_json_atomic, write_text_atomic
from ..runners.base import Runner
from ..versions import minor_series
from .axis import Axis
from .probes import PROBES_DIR, EarlierFiles, covers, probe_cell
from .targets import claim_line, claim_variant_ids


def timeline_claims(claims: Sequence[Claim] | None = None) -> tuple[Claim, ...]:
    """The claims of ``claims`` (default: the seeds') one cell answers (every claim but those that compare two
    cells)."""
    return tuple(c for c in (builtin() if claims is None else claims) if c.ref_cell is None)


def selection(preset: str, claims: Sequence[Claim] | None = None,
              bench_paths: Sequence[Path] = (), backend: str = "tensorflow") -> tuple[str, ...]:
    """Every variant a timeline claim compares on ``backend``'s cells, each once, in catalogue order
    (``bench_paths``: the user's files)."""
    ids: dict[str, None] = {}
    for claim in timeline_claims(claims):
        ids.update(dict.fromkeys(claim_variant_ids(claim, preset, bench_paths, backend)))
    return tuple(ids)


def points_for(release: str, cell: CellResult, source: str,
               claims: Sequence[Claim] | None = None) -> list[TimelinePoint]:
    """Every timeline claim in one cell's results."""
    out = []
    frame = build_frame([cell])             # once per cell, not once per claim
    for claim in timeline_claims(claims):
        line = claim_line(claim, cell, frame)
        if isinstance(line, tuple):
            out.append(TimelinePoint(claim.key, release, cell.name, None, None, None, line[0], reason=line[1],
                                     source=source))
        else:
            ci = line.comparison.ci
            low, high = (ci.low, ci.high) if ci.replicated else (None, None)
            out.append(TimelinePoint(claim.key, release, cell.name, ci.ratio, low, high, line.verdict,
                                     line=line.label, source=source))
    return out


def missing_points(release: str, cell: str, why: str, claims: Sequence[Claim] | None = None) -> list[TimelinePoint]:
    return [TimelinePoint(c.key, release, cell, None, None, None, CANNOT, reason=why)
            for c in timeline_claims(claims)]


def _decided(points: Sequence[TimelinePoint]) -> list[TimelinePoint]:
    return [p for p in points if p.verdict in DECIDED and p.ratio is not None]


def _steps(decided: Sequence[TimelinePoint]) -> tuple[list[int], int]:
    return verdict_steps([reading(p.verdict, p.low, p.high) for p in decided])


def changes(points: Sequence[TimelinePoint]) -> list[tuple[TimelinePoint, TimelinePoint]]:
    """Consecutive measured points of one claim (release order) whose verdicts differ beyond the noise.

    ``analysis.timeline.changed``: a different verdict with overlapping
    intervals is a ratio near the edge of "no clear difference", not a change.
    """
    decided = _decided(points)
    return [(decided[i], decided[i + 1]) for i in _steps(decided)[0]]


def flickers(points: Sequence[TimelinePoint]) -> int:
    """Neighbours whose verdicts differ while their intervals overlap."""
    return _steps(_decided(points))[1]


def timeline_csv(points: Sequence[TimelinePoint]) -> str:
    """``timeline.csv``: one row per point (``TIMELINE_COLUMNS``; an empty cell where there is no number)."""
    return csv_text(TIMELINE_COLUMNS, (astuple(p) for p in points))


def timeline_doc(points: Sequence[TimelinePoint], axis: Axis, releases: Sequence[str], preset: str,
                 claims: Sequence[Claim] | None = None) -> TimelineDoc:
    """The timeline as ``report.timeline_view`` reads it back (``results.history_docs.TimelineDoc``)."""
    about = {c.key: ClaimAbout(c.claim, c.a, c.b) for c in timeline_claims(claims)}
    across = [c.key for c in (builtin() if claims is None else claims) if c.ref_cell is not None]
    return TimelineDoc(axis.name, axis.tf, list(releases), preset, about, across, list(points), axis.keras)


def timeline_json(points: Sequence[TimelinePoint], axis: Axis, releases: Sequence[str], preset: str,
                  claims: Sequence[Claim] | None = None) -> dict[str, Any]:
    return timeline_doc(points, axis, releases, preset, claims).to_json()


def out_paths(reports: Path, axis: Axis) -> tuple[Path, Path]:
    return reports / timeline_file(axis.name), reports / timeline_file(axis.name, ".csv")


def minor_releases(axis: Axis) -> list[str]:
    """The axis's minor series, oldest first: a timeline's default ends are the first and the last."""
    return sorted({minor_series(v) for v in axis.versions}, key=lambda v: [int(x) for x in v.split(".")])


def reuse(axis: Axis, releases: Sequence[str], settings: Settings, reports: Path, ids: tuple[str, ...],
          redo: bool, claims: Sequence[Claim] | None = None
          ) -> tuple[dict[str, list[TimelinePoint]], list[tuple[str, Cell]]]:
    """Each release's points read from an earlier cell file that holds ``ids`` (none with ``redo``), and the
    releases left to measure with their cells; a release without a cell here has its reason as its points."""
    earlier = EarlierFiles(reports, suite_fingerprint())
    answered: dict[str, list[TimelinePoint]] = {}
    to_run = []
    for release in releases:
        cell = probe_cell(axis, release, settings)
        if isinstance(cell, str):
            answered[release] = missing_points(release, "", cell, claims)
            continue
        found = next((c for c in earlier.of(cell) if covers(c, ids)), None)
        if found is not None and not redo:
            answered[release] = points_for(release, found, _rel(found.path, reports), claims)
        else:
            to_run.append((release, cell))
    return answered, to_run


def measure(to_run: Sequence[tuple[str, Cell]], runner: Runner, request: RunRequest, reports: Path,
            console: Console, claims: Sequence[Claim] | None = None) -> dict[str, list[TimelinePoint]]:
    """Run the releases' cells as one interleaved run into ``<reports>/releases/cells``; each release's points."""
    from ..execution.dispatch import execute

    answered: dict[str, list[TimelinePoint]] = {}
    probes = reports / PROBES_DIR
    outcomes = execute([c for _, c in to_run], runner, request, probes, redo=True, console=console)
    for (release, cell), outcome in zip(to_run, outcomes, strict=True):
        path = probes / "cells" / f"{cell.name}.json"
        if outcome.status == "ok" and path.exists():
            answered[release] = points_for(release, load_file(path), _rel(path, reports), claims)
        else:
            answered[release] = missing_points(release, cell.name, f"{outcome.status}: {outcome.reason}", claims)
    return answered


def write(points: Sequence[TimelinePoint], axis: Axis, releases: Sequence[str], preset: str,
          reports: Path, claims: Sequence[Claim] | None = None) -> tuple[Path, Path]:
    """``timeline.json`` (what the report reads) and ``timeline.csv``; their paths."""
    json_path, csv_path = out_paths(reports, axis)
    write_json_atomic(json_path, timeline_json(points, axis, releases, preset, claims))
    write_text_atomic(csv_path, timeline_csv(points))
    return json_path, csv_path


def summary_lines(points: Sequence[TimelinePoint], claims: Sequence[Claim] | None = None) -> list[str]:
    """One line per claim: where its verdict changed, release by release."""
    out = []
    for claim in timeline_claims(claims):
        mine = [p for p in points if p.claim == claim.key]
        measured = _decided(mine)
        steps, within = _steps(measured)
        moves = [(measured[i], measured[i + 1]) for i in steps]
        if not measured:
            out.append(f"{claim.key}: not measured in any release ({(mine[0].reason if mine else '') or NOT_MEASURED})")
        elif not moves and len({p.verdict for p in measured}) == 1:
            out.append(f"{claim.key}: {measured[0].verdict} in all {len(measured)} releases measured")
        elif not moves:
            out.append(f"{claim.key}: no change beyond the noise in {len(measured)} releases measured "
                       f"({verdict_counts([p.verdict for p in measured])}; neighbours that differ overlap)")
        else:
            path = "; ".join(f"{a.release} {a.verdict} -> {b.release} {b.verdict}" for a, b in moves)
            out.append(f"{claim.key}: changed {len(moves)} times: {path}"
                       + (f" (and {within} verdict differences within the noise)" if within else ""))
    return out


def _rel(path: Path, reports: Path) -> str:
    try:
        return str(path.resolve().relative_to(reports.resolve()))
    except ValueError:
        return str(path)
