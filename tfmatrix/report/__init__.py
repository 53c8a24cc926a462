"""The cross-version report: ``reports/cells/*.json`` -> ``reports/index.html`` + ``reports/results.csv``.

``build(cells_dir, out_dir, baseline=None)`` reads every cell file (see
``load``), makes the tidy frame (``frame``), the cross-version tables
(``tables``), the seeds' findings with bootstrap CIs (``findings``), inline
SVG charts (``charts``) and renders one self-contained page (``html``).
Nothing runs: the report can be rebuilt at any time from the cell files.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..results import write_text_atomic
from .findings import FINDINGS, compute_all
from .frame import build_frame, to_csv
from .html import render, warnings_for
from .load import Refused, load_dir
from .tables import build_tables, resolve_baselines

__all__ = ["Refused", "Summary", "build"]


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
    warnings: list[str] = field(default_factory=list)     # the loud ones
    refused: list[Refused] = field(default_factory=list)  # files in the cells directory that could not be read

    def line(self) -> str:
        counts = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items()))
        text = (f"report: {self.html} ({self.cells} cells: {counts}; {self.variants} results; "
                f"{self.findings_answered} of {self.findings_total} findings answered)")
        if self.warnings:
            n = len(self.warnings)
            text += f"; {n} warning{'s' * (n != 1)}: " + " | ".join(self.warnings)
        if self.refused:
            n = len(self.refused)
            text += f"; {n} cell file{'s' * (n != 1)} refused (listed under Failures)"
        return text


def build(cells_dir: Path, out_dir: Path, baseline: str | None = None, *, baseline_source: str = "baseline",
          generated: str | None = None) -> Summary:
    """Read ``cells_dir/*.json`` and write ``out_dir/index.html`` and ``out_dir/results.csv``.

    ``baseline`` names the cell every table colours against (default: the
    oldest cell of each target); ``baseline_source`` says where that name
    came from in error messages (e.g. "matrix.toml: baseline"). A cell file
    that cannot be read is left out and listed (``Summary.refused``, and the
    page's Failures section): one bad file never blocks the others' report.
    Raises ``UserError`` when no cell file can be read or the baseline is not
    a cell with results. ``generated`` fixes the
    timestamp shown (tests); default now.
    """
    cells_dir, out_dir = Path(cells_dir), Path(out_dir)
    loaded = load_dir(cells_dir)
    cells = loaded.cells
    baselines = resolve_baselines(cells, baseline, baseline_source)
    df = build_frame(cells)
    tables = build_tables(df, cells, baselines)
    results = compute_all(df, cells, FINDINGS)
    page = render(cells, df, tables, results, baselines, generated, refused=loaded.refused)
    html_path, csv_path = out_dir / "index.html", out_dir / "results.csv"
    write_text_atomic(csv_path, to_csv(df))
    write_text_atomic(html_path, page)
    return Summary(
        html=html_path, csv=csv_path, cells=len(cells), statuses=dict(Counter(c.status for c in cells)),
        variants=len(df), findings_answered=sum(1 for r in results if r.comparisons), findings_total=len(results),
        baseline=baselines.describe(),
        warnings=[w.text for w in warnings_for(cells) if w.level == "loud"], refused=loaded.refused,
    )
