"""The cross-version report: ``reports/cells/*.json`` -> ``reports/index.html``, ``results.csv``, ``claims.csv|json``,
``hardware.csv``.

``build(cells_dir, out_dir, baseline=None)`` reads every cell file (see
``load``), makes the tidy frame (``frame``), the cross-version tables
(``tables``), each seed's claim at the seed's own configuration
(``claims``), the seeds' findings with bootstrap CIs (``findings``), the same
cells on different hardware side by side (``hardware_view``), inline SVG
charts (``charts``) and renders one self-contained page (``html``).
Nothing runs: the report can be rebuilt at any time from the cell files.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis import noise_model
from ..analysis.cells import CellResult, Refused, load_dir
from ..analysis.claim_table import CLAIMS
from ..analysis.claims import compute_claims
from ..analysis.findings import FINDINGS
from ..analysis.frame import attach_previous, build_frame
from ..analysis.pairing import compute_all
from ..analysis.sequential import attach_stops, run_alpha
from ..analysis.upgrade import check_pair, upgrade_view
from ..errors import UserError
from ..results.store import PREVIOUS_DIR, write_text_atomic
from . import claims_view, devices_view, hardware_view, why_view
from .bisect_view import load_bisections
from .html import render, warnings_for
from .tables import build_tables, resolve_baselines, results_csv
from .timeline_view import load_timelines
from .upgrade_view import page_view, upgrade_csv


@dataclass
class Summary:
    """What ``build`` wrote, for the command line to print."""

    html: Path
    csv: Path
    cells: int
    statuses: dict[str, int]
    variants: int                          # cell x variant rows in results.csv
    findings_answered: int
    findings_total: int
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

    def line(self) -> str:
        counts = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items()))
        text = (f"report: {self.html} ({self.cells} cells: {counts}; {self.variants} results; "
                f"{self.claims_answered} of {self.claims_total} claims and "
                f"{self.findings_answered} of {self.findings_total} findings answered)")
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


def previous_run(cells: list[CellResult], previous_dir: Path) -> list[CellResult]:
    """The previous complete run of the same cells (``reports/previous/``) with the same request, if any.

    Only cells measured with the same request (preset, benchmarks, suite,
    rounds) count: a run of other benchmarks says nothing about this one's noise.
    """
    if not previous_dir.is_dir() or not any(previous_dir.glob("*.json")):
        return []
    try:
        earlier = load_dir(previous_dir).cells
    except UserError:
        return []
    now = {c.name: c for c in cells if c.has_records}
    return [c for c in earlier if c.name in now and c.has_records
            and c.doc.request == now[c.name].doc.request]


def run_to_run(cells: list[CellResult], earlier: list[CellResult]) -> list[str]:
    """Agreement with the previous run, as summary lines (none without a previous run)."""
    if not earlier:
        return []
    from ..analysis.compare import compare_cells

    now = {c.name: c for c in cells}
    result = compare_cells(earlier, [now[c.name] for c in earlier], "previous run", "this run")
    when = sorted(c.finished for c in earlier if c.finished)
    head = (f"compared with the previous run of {len(earlier)} cell(s) ({when[0] if when else 'date not recorded'}); "
            "each comparison below shows its ratio in that run beside it")
    return [head] + result.summary_lines()[1:]


def build(cells_dir: Path, out_dir: Path, baseline: str | None = None, *, baseline_source: str = "baseline",
          baseline_fallback: bool = False, generated: str | None = None, previous: Path | None = None,
          upgrade: tuple[str, str] | None = None, upgrade_source: str = "[report] compare") -> Summary:
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
    default now. ``previous`` (default ``<cells_dir>/../previous``) holds
    the last complete run before this one: the summary states how well the
    two agree. ``upgrade`` (baseline, candidate) adds the upgrade view for that pair of cells to the page
    and writes ``upgrade.csv``; ``upgrade_source`` names where the pair came from in error messages.
    """
    cells_dir, out_dir = Path(cells_dir), Path(out_dir)
    loaded = load_dir(cells_dir)
    cells = loaded.cells
    baselines = resolve_baselines(cells, baseline, baseline_source, baseline_fallback)
    if upgrade is not None:
        check_pair(cells, *upgrade, upgrade_source)
    earlier = previous_run(cells, previous if previous is not None else cells_dir.parent / PREVIOUS_DIR)
    df = build_frame(cells)
    tables = build_tables(df, cells, baselines)
    # the comparisons see the previous run's samples too (its ratios count as noise); results.csv does not
    compared = attach_previous(df, build_frame(earlier)) if earlier else df
    kept = noise_model.history_at(out_dir / noise_model.FILE)
    this_run = noise_model.run_of(cells)
    compared = noise_model.annotate(compared, kept.pooled(without=[this_run]))     # earlier runs' noise, never its own
    results = compute_all(compared, cells, FINDINGS)
    agreement = run_to_run(cells, earlier)
    claims = compute_claims(compared, cells, CLAIMS, alpha=run_alpha(cells))
    attach_stops(claims, cells)
    view = upgrade_view(df, *upgrade) if upgrade is not None else None
    hw_pairs = hardware_view.hardware_pairs(df, cells)
    dev_pairs = devices_view.device_pairs(df, cells)
    bisections, unreadable = load_bisections(out_dir)
    timelines, unreadable_timelines = load_timelines(out_dir)
    profiles = why_view.load_profile_dir(out_dir)
    whys = why_view.why_views(claims, profiles)
    page = render(cells, df, tables, results, baselines, generated, claims, agreement, refused=loaded.refused,
                  upgrade=page_view(view) if view is not None else None,
                  hardware=hardware_view.page_view(hw_pairs, cells, sum(p.gpu_cpu for p in dev_pairs)),
                  devices=devices_view.page_view(dev_pairs), bisections=bisections,
                  timelines=timelines, whys=whys)
    html_path, csv_path = out_dir / "index.html", out_dir / "results.csv"
    claims_csv, claims_json = out_dir / "claims.csv", out_dir / "claims.json"
    hardware_csv = out_dir / "hardware.csv"
    claim_rows = claims_view.rows(claims)
    write_text_atomic(csv_path, results_csv(df))
    write_text_atomic(claims_csv, claims_view.claims_csv(claim_rows))
    write_text_atomic(claims_json, claims_view.claims_json(claim_rows))
    write_text_atomic(hardware_csv, hardware_view.hardware_csv(hw_pairs))
    write_text_atomic(html_path, page)
    if view is not None:
        write_text_atomic(out_dir / "upgrade.csv", upgrade_csv(view))
    for name, text in why_view.speedscope_files(profiles).items():
        write_text_atomic(out_dir / why_view.PROFILES / name, text)
    model = noise_model.from_frame(df, str(cells_dir))
    if model is not None:       # a replicated run: kept, with the runs before it, for later runs and comparisons
        history = kept.with_run(this_run, model)
        write_text_atomic(out_dir / noise_model.FILE, json.dumps(history.to_json(), indent=1) + "\n")
    return Summary(
        html=html_path, csv=csv_path, cells=len(cells), statuses=dict(Counter(c.status for c in cells)),
        variants=len(df), findings_answered=sum(1 for r in results if r.comparisons), findings_total=len(results),
        baseline=baselines.describe(), baseline_note=baselines.note,
        warnings=[w.text for w in warnings_for(cells) if w.level == "loud"]
        + [f"a bisect answer could not be read: {why}" for why in unreadable]
        + [f"a timeline could not be read: {why}" for why in unreadable_timelines]
        + [f"a profile could not be read: {why}" for why in profiles.unreadable], refused=loaded.refused,
        claims_csv=claims_csv, claims_json=claims_json,
        claims_answered=sum(1 for r in claims if any(c.lines for c in r.cells)), claims_total=len(claims),
        upgrade=view.line() if view is not None else None,
        hardware_csv=hardware_csv, hardware_pairs=len(hw_pairs), device_pairs=len(dev_pairs),
    )
