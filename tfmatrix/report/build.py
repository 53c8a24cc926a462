"""The cross-version report: ``reports/cells/*.json`` -> ``reports/index.html``, ``results.csv``, ``claims.csv|json``,
``hardware.csv``.

``build(cells_dir, out_dir, baseline=None)`` is four steps, each a function
here: ``load`` reads every document the report is made from, once (the cell
files, the run archive: every run kept, each cell's previous one and the
noise of each, and what ``bisect``,
``timeline`` and ``explain`` left beside the report: ``results``' readers);
``analyse`` asks the questions of them (the tidy frame, the cross-version
tables, each seed's claim at the seed's own configuration, the seeds' questions, the
same cells on other hardware or devices, the warnings); ``render_files``
makes the page (``html``, its sections from the ``*_view`` modules, which
read no file) and the CSV and JSON texts, and ``summary`` the command line's
account of them; ``write`` puts them in ``out_dir`` atomically, with the
runs this report adds to the archive. Nothing runs: the report can be rebuilt at
any time from the cell files.
"""
from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..analysis.cells import CellResult, Loaded, Refused, load_dir, previous_kept
from ..analysis.claims.answers import ClaimResult, compute_claims
from ..analysis.claims.files import BUILTIN, builtin, questions
from ..analysis.claims.records import SEEDS, Claim
from ..analysis.claims.sources import ClaimSource, own_claims
from ..analysis.compare.upgrade import check_pair, upgrade_view
from ..analysis.frame import attach_previous, build_frame, results_rows
from ..analysis.runs import noise_model
from ..analysis.runs.prior import shipped
from ..analysis.series.entries import with_cells
from ..analysis.stopping import attach_stops, prior_borrowers, run_alpha
from ..errors import UserError
from ..results.archive import Archive, read_archive
from ..results.archive import save as save_archive
from ..results.foreign import child
from ..results.history_docs import HistoryFound, history_in
from ..results.profile_docs import ProfilesFound, profiles_in
from ..results.store import write_text_atomic
from . import devices_view, hardware_view
from .html import render
from .sections import SECTIONS, Analysed, Page, Section, files_of
from .tables import build_tables, resolve_baselines
from .warnings import refused_warnings, warnings_for


@dataclass
class Summary:
    """What ``build`` wrote, for the command line to print."""

    html: Path
    csv: Path
    cells: int
    statuses: dict[str, int]
    variants: int                          # cell x variant results (results.csv also lists the outside rows)
    questions_answered: int                # the seeds' questions with a measured line in some cell
    questions_total: int
    baseline: str
    baseline_note: str | None = None                       # matrix.toml's baseline had no results: the default stood in
    warnings: list[str] = field(default_factory=list)     # the loud ones
    claims_csv: Path | None = None
    claims_json: Path | None = None
    claims_answered: int = 0                               # claims with a measured line in some cell
    claims_total: int = 0
    refused: list[Refused] = field(default_factory=list)  # files in the cells directory that could not be read
    upgrade: str | None = None                             # the upgrade view's line, when a pair was chosen
    hardware_csv: Path | None = None
    hardware_pairs: int = 0                                # cells compared across hardware (Hardware section)
    device_pairs: int = 0                                  # environments compared across devices (Devices section)
    unanswered: list[str] = field(default_factory=list)    # the user's claims no cell answered, each with why per cell

    def line(self) -> str:
        counts = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items()))
        text = (f"report: {self.html} ({self.cells} cell{'s' * (self.cells != 1)}: {counts}; {self.variants} results; "
                f"{self.claims_answered} of {self.claims_total} claims and "
                f"{self.questions_answered} of {self.questions_total} questions answered)")
        if self.warnings:
            n = len(self.warnings)
            text += f"; {n} warning{'s' * (n != 1)}: " + " | ".join(self.warnings)
        if self.refused:
            n = len(self.refused)
            text += f"; {n} cell file{'s' * (n != 1)} refused (listed under Failures)"
        if self.upgrade:
            text += f"; {self.upgrade}"
        if self.hardware_pairs:
            n = self.hardware_pairs
            text += f"; {n} cell pair{'s' * (n != 1)} compared across hardware (hardware.csv)"
        if self.device_pairs:
            n = self.device_pairs
            text += f"; {n} environment pair{'s' * (n != 1)} compared across devices (the Devices section)"
        return text


# -- load: every document the report is made from, read once ---------------------------------------

@dataclass(frozen=True)
class Inputs:
    """What a report is made from, as read by ``load``."""

    source: str                    # the cells directory, as the noise history names the run's source
    loaded: Loaded                 # the readable cell files, and the refused ones
    earlier: list[CellResult]      # each cell's previous complete run (the archive's, or ``--previous DIR``)
    history: HistoryFound          # bisect answers and timelines beside the report
    profiles: ProfilesFound        # ``explain``'s profiles beside the report
    archive: Archive = Archive()   # every run kept beside the report (``runs/``)


def load(cells_dir: Path, out_dir: Path, previous: Path | None = None) -> Inputs:
    """Read ``cells_dir`` (``UserError`` when no cell file can be read) and what lies beside the report in
    ``out_dir``; ``previous``: a directory of an earlier run's cell files (default: each cell's run before this
    one in the run archive)."""
    loaded = load_dir(cells_dir)
    archive = read_archive(out_dir)
    earlier = _cells_in(previous) if previous is not None else previous_kept(out_dir, archive, loaded.cells)
    return Inputs(str(cells_dir), loaded, earlier, history_in(out_dir), profiles_in(out_dir), archive)


def _cells_in(previous_dir: Path) -> list[CellResult]:
    """The cell files of an earlier run (none where there is no such directory, or none can be read)."""
    if not previous_dir.is_dir() or not any(previous_dir.glob("*.json")):
        return []
    try:
        return load_dir(previous_dir).cells
    except UserError:
        return []


# -- analyse: the questions asked of them --------------------------------------------------------

def previous_run(cells: list[CellResult], earlier: list[CellResult]) -> list[CellResult]:
    """The cells of the previous complete run measured with the same request as this one's.

    Only cells measured with the same request (preset, benchmarks, suite,
    rounds) count: a run of other benchmarks says nothing about this one's noise.
    """
    now = {c.name: c for c in cells if c.has_records}
    return [c for c in earlier if c.name in now and c.has_records
            and c.doc.request == now[c.name].doc.request]


def run_to_run(cells: list[CellResult], earlier: list[CellResult], noise: noise_model.NoiseHistory,
               this_run: Sequence[str]) -> list[str]:
    """Agreement with the previous run, as summary lines (none without a previous run); each variant's run-to-run
    wander in the other runs the archive keeps (not ``this_run``, not the previous one) joins its contrast."""
    if not earlier:
        return []
    from ..analysis.compare.sets import compare_cells
    from ..analysis.runs.kept import spread_of

    now = {c.name: c for c in cells}
    spread = spread_of(noise, without=[*this_run, *noise_model.run_ids(earlier)])
    result = compare_cells(earlier, [now[c.name] for c in earlier], "previous run", "this run", spread=spread)
    when = sorted(c.finished for c in earlier if c.finished)
    head = (f"compared with the previous run of {len(earlier)} cell(s) ({when[0] if when else 'date not recorded'}); "
            "each comparison below shows its ratio in that run beside it")
    return [head] + result.summary_lines()[1:]


@dataclass(frozen=True)
class Asked:
    """What the report is asked to compare: the baseline cell and the upgrade pair, each with where it came from
    (for error messages), and the user's own claims; ``build`` documents each."""

    baseline: str | None = None
    baseline_source: str = "baseline"
    baseline_fallback: bool = False
    upgrade: tuple[str, str] | None = None
    upgrade_source: str = "[report] compare"
    own: tuple[Claim, ...] = ()
    claims_from: ClaimSource | None = None      # a matrix file whose own claims are gathered here (``own`` given: not)

    def user_claims(self) -> tuple[Claim, ...]:
        """The user's claims: ``own``, else those of ``claims_from`` (read and checked), else none."""
        if self.own or self.claims_from is None:
            return self.own
        return own_claims(self.claims_from)


def asked_claims(cells: list[CellResult], own: tuple[Claim, ...] = ()) -> tuple[Claim, ...]:
    """The claims the report judges: the built-in families the run asked (each cell file's request says which; a
    file from before families, or of a run of the seeds' only, asked the seeds'), then the user's own."""
    families = {f for c in cells for f in (c.doc.cell_request.claims or (SEEDS,))} or {SEEDS}
    return builtin(families) + own


def _noise_lent(df: pd.DataFrame, cells: Sequence[CellResult],
                kept: noise_model.NoiseModel | None) -> noise_model.NoiseModel | None:
    """What the report's lines borrow: the noise history kept here, and the shipped prior for the variants of the
    cells whose looks borrowed it (so the report judges a line as the look that stopped it did)."""
    borrowed = prior_borrowers(cells)
    if not borrowed or not len(df):
        return kept
    return shipped().lend(kept, [(str(c), str(i)) for c, i in zip(df["cell"], df["id"], strict=True)
                                 if c in borrowed])


def analyse(inputs: Inputs, asked: Asked) -> Analysed:
    """The report's figures (``UserError`` when the baseline or the upgrade pair is not a cell with results)."""
    cells, upgrade = inputs.loaded.cells, asked.upgrade
    baselines = resolve_baselines(cells, asked.baseline, asked.baseline_source, asked.baseline_fallback)
    if upgrade is not None:
        check_pair(cells, *upgrade, asked.upgrade_source)
    earlier = previous_run(cells, inputs.earlier)
    df = build_frame(cells)
    # the comparisons see the previous run's samples too (its ratios count as noise); results.csv does not
    compared = attach_previous(df, build_frame(earlier)) if earlier else df
    this_run = noise_model.run_ids(cells)
    noise = noise_model.history_of(inputs.archive.runs)
    compared = noise_model.annotate(compared, _noise_lent(compared, cells, noise_model.pooled(
        noise, without=this_run)))     # never its own
    claims = compute_claims(compared, cells, asked_claims(cells, asked.user_claims()), alpha=run_alpha(cells))
    attach_stops(claims, cells)
    model = noise_model.from_frame(df, inputs.source, cells)
    return Analysed(
        cells, df, build_tables(df, cells, baselines), baselines, compute_claims(compared, cells, questions()),
        run_to_run(cells, earlier, noise, this_run), claims,
        upgrade_view(df, *upgrade) if upgrade is not None else None,
        hardware_view.hardware_pairs(df, cells), devices_view.device_pairs(df, cells),
        warnings_for(cells),
        # each cell's part of the run's noise model kept with it, for later runs and comparisons
        *with_cells(inputs.archive, cells, claims, model))


# -- render and write --------------------------------------------------------------------------

def render_files(made: Analysed, inputs: Inputs, generated: str | None,
                 sections: Sequence[Section] = SECTIONS, progress: str | None = None) -> dict[str, str]:
    """Every file the report writes, by its path under the report's directory, as text: the page and what its
    ``sections`` write beside it (``progress``: the run's state, on a page made while it runs)."""
    page = Page(**{**vars(made), "warnings": [*made.warnings, *refused_warnings(inputs.loaded.refused)]},
                generated=generated or datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat(),
                refused=inputs.loaded.refused, history=inputs.history, profiles=inputs.profiles, progress=progress)
    return {**files_of(sections, page), "index.html": render(page, sections)}


def write(out_dir: Path, files: dict[str, str], archive: Archive | None = None) -> list[str]:
    """The report's files, each atomically, and the archive's new runs;
    returns a line for each cell file the archive could not keep. Every file's name is a plain path under
    ``out_dir`` (``foreign.child``): a name a document chose never writes outside it."""
    for name, text in files.items():
        write_text_atomic(out_dir.joinpath(*child(name)), text)
    if archive is not None and archive.pending:
        return [f"the run archive: {why}" for why in save_archive(out_dir, archive).skipped
                if why not in archive.skipped]
    return []


def build(cells_dir: Path, out_dir: Path, baseline: str | None = None, *, baseline_source: str = "baseline",
          baseline_fallback: bool = False, generated: str | None = None, previous: Path | None = None,
          upgrade: tuple[str, str] | None = None, upgrade_source: str = "[report] compare",
          own: tuple[Claim, ...] = (), claims_from: ClaimSource | None = None, progress: str | None = None
          ) -> Summary:
    """Read ``cells_dir/*.json``, write ``out_dir/``: ``index.html``, ``results|claims|hardware.csv``, ``claims.json``.

    ``baseline`` names the cell every table colours against (default: the
    oldest cell of each target); ``baseline_source`` says where that name
    came from in error messages (e.g. "matrix.toml: baseline");
    ``baseline_fallback``: a baseline without results gives way to the
    default instead of an error (``tables.resolve_baselines``). A cell file
    that cannot be read is left out and listed (``Summary.refused``, and the
    page's Failures section): one bad file never blocks the others' report.
    Raises ``UserError`` when no cell file can be read or the baseline is not
    a cell with results. ``generated`` fixes the timestamp shown (tests);
    default now. ``previous``: an earlier run's cell files (default: each
    cell's run before this one in the run archive): the summary states how
    well the two agree. ``upgrade`` (baseline, candidate) adds the upgrade view for that pair of cells to the page
    and writes ``upgrade.csv``; ``upgrade_source`` names where the pair came from in error messages. ``own``: the
    user's claims, judged after the built-in families the cells' run asked; ``claims_from``: the matrix file whose
    own claims are read and checked here instead (``report``: a claim added after the run is judged too).
    ``progress``: the page of a run still measuring (``execution.page``), with its state in words: written like
    any report, but nothing of it is kept (the run archive is the final report's).
    """
    out_dir = Path(out_dir)
    asked = Asked(baseline, baseline_source, baseline_fallback, upgrade, upgrade_source, own, claims_from)
    inputs = load(Path(cells_dir), out_dir, previous)
    made = analyse(inputs, asked)
    files, said = render_files(made, inputs, generated, progress=progress), summary(made, inputs, out_dir)
    if progress is not None:
        write(out_dir, files, None)
        return said
    said.warnings += write(out_dir, files, made.archive)
    return said


def summary(made: Analysed, inputs: Inputs, out_dir: Path) -> Summary:
    """What the files about to be written hold, in figures and loud warnings, for the command line."""
    cells, claims, asked = made.cells, made.claims, made.questions
    history, refused = inputs.history, inputs.loaded.refused
    return Summary(
        html=out_dir / "index.html", csv=out_dir / "results.csv", cells=len(cells),
        statuses=dict(Counter(c.status for c in cells)), variants=len(results_rows(made.df)),
        questions_answered=sum(1 for r in asked if any(c.lines for c in r.cells)), questions_total=len(asked),
        baseline=made.baselines.describe(), baseline_note=made.baselines.note,
        warnings=[w.text for w in made.warnings if w.level == "loud"]
        + [f"a bisect answer could not be read: {why}" for why in history.unreadable_bisections]
        + [f"a timeline could not be read: {why}" for why in history.unreadable_timelines]
        + [f"a profile could not be read: {why}" for why in inputs.profiles.unreadable]
        + [f"the run archive: {why}" for why in inputs.archive.skipped], refused=list(refused),
        claims_csv=out_dir / "claims.csv", claims_json=out_dir / "claims.json",
        claims_answered=sum(1 for r in claims if any(c.lines for c in r.cells)), claims_total=len(claims),
        upgrade=made.upgrade.line() if made.upgrade is not None else None,
        hardware_csv=out_dir / "hardware.csv", hardware_pairs=len(made.hardware), device_pairs=len(made.devices),
        unanswered=[unanswered(r) for r in claims
                    if r.claim.family not in BUILTIN and not any(c.lines for c in r.cells)],
    )


def unanswered(result: ClaimResult) -> str:
    """A claim no cell answered, in one line: why, per cell (or why no cell could hold it)."""
    why = [f"{c.name}: {c.empty_verdict}: {c.reason}" for c in result.cells] or result.notes or ["no cell ran"]
    return f"claim {result.claim.key}: no cell of this run answers it: " + "; ".join(why)
