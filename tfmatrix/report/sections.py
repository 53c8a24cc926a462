"""The report's sections as a table: one row per section (asv's ``OutputPublisher``: a page is one plugin).

Why a table: a section used to be threaded by hand through the analysis
record, ``render``'s keyword parameters, its context, a nav link and a block
of one long template (the Devices section touched ten files). Now a section
is a ``Section`` row: its key (its partial ``sections/<key>.html`` and its
anchor ``#key``), its nav label and place, the view that turns the ``Page``
into its partial's context, and the files it writes beside the page. A new
section is an analysis module, a view, a partial and one row here (and its
test); ``html.render`` renders the rows in order and builds the nav from
them.

The page's bytes are what the one template made (the golden report is
byte-identical): the nav keeps its fixed links on lines of their own and its
optional ones inline (``nav_text``), and the claims' three sections move to
the end, after a note, when no claim line was measured (``body_order``).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from ..analysis.cells import CellResult, Refused
from ..analysis.chart_data import CHARTS, chart_data
from ..analysis.claims.answers import ClaimResult
from ..analysis.claims.records import SEEDS
from ..analysis.compare.upgrade import UpgradeView
from ..analysis.series.answers import CellSeries
from ..results.archive import Archive
from ..results.documents import CELL_FAILURES
from ..results.history_docs import HistoryFound
from ..results.profile_docs import PROFILES_DIR, ProfilesFound
from . import claims_view, devices_view, hardware_view, series_view, upgrade_view, why_view
from .bisect_view import bisect_view
from .charts import chart_html
from .claims_view import claim_view, sequential_note
from .devices_view import DevicePair
from .environment_view import env_row, schedule_view
from .grid import family_heads, grid_view
from .hardware_view import HardwarePair
from .summary_view import summary_view, variant_errors
from .tables import Baselines, BenchTable, results_csv
from .timeline_view import timeline_view
from .warnings import Warning_


@dataclass(frozen=True)
class Analysed:
    """Everything the page and the files show, computed once from what ``build.load`` read (``build.analyse``). A
    section whose
    answer is computed once per page adds its field here, and its line in ``analyse``: the page has it by keyword."""

    cells: list[CellResult]
    df: pd.DataFrame
    tables: list[BenchTable]
    baselines: Baselines
    questions: list[ClaimResult]       # the seeds' questions, every configuration (shown after the claims)
    agreement: list[str]
    claims: list[ClaimResult]
    upgrade: UpgradeView | None
    hardware: list[HardwarePair]
    devices: list[DevicePair]
    warnings: Sequence[Warning_]       # about the cells (the page adds the refused files)
    archive: Archive = Archive()   # the kept runs with this report's cell files added (``save`` writes them)
    series: Sequence[CellSeries] = ()         # every (testbed, cell) series of the kept runs


@dataclass(frozen=True, kw_only=True)
class Page(Analysed):
    """What every section may read: the answers ``build.analyse`` computed once (``Analysed``, all of it), what
    lies beside the report, and when the page was generated. A section whose question is its own computes it in
    its view from these."""

    generated: str
    refused: Sequence[Refused] = ()
    history: HistoryFound = field(default_factory=HistoryFound)
    profiles: ProfilesFound = field(default_factory=ProfilesFound)
    progress: str | None = None               # a run still measuring: where it is (the page reloads itself)

    @cached_property
    def summary(self) -> dict[str, Any]:
        """The Summary's facts, made once (the header and the tables read them too)."""
        return {**summary_view(self.cells, self.df, self.baselines, self.generated), "agreement": self.agreement}

    @cached_property
    def whys(self) -> list[dict[str, Any]]:
        """The Why panels, made once (the Claims link to them)."""
        return why_view.why_views(self.claims, self.profiles)


View = Callable[[Page], dict[str, Any]]


@dataclass(frozen=True)
class Section:
    """One section of the page."""

    key: str                                    # its partial (sections/<key>.html) and its anchor (#key)
    view: View                                  # the partial's context
    label: str = ""                             # its nav link ("": none)
    nav: int = 0                                # the link's place in the nav (sections are rendered in table order)
    shown: str | None = None                    # the context key whose truth puts the link in the nav (None: always)
    count: Callable[[dict[str, Any]], int] | None = None     # a number the label shows: "Warnings (3)"
    files: Callable[[Page], dict[str, str]] | None = None    # the files it writes beside the page, by name
    claims: bool = False                        # a claims section: moved to the end when no claim was measured
    where: Path | None = None                   # the folder holding sections/<key>.html (None: this package's)

    def link(self, context: Mapping[str, Any]) -> str:
        """Its nav link's text, as the one template wrote it: a fixed link on a line of its own, an optional one
        inline where shown ("" where not)."""
        label = self.label + (f" ({self.count(dict(context))})" if self.count else "")
        if self.shown is None:
            return f'    <a href="#{self.key}">{label}</a>\n'
        return f'<a href="#{self.key}">{label}</a>' if context.get(self.shown) else ""


def _grid(page: Page) -> dict[str, Any]:
    return {"grid": grid_view(page.claims, page.cells), "only_seeds": _only_seeds(page)}


def _only_seeds(page: Page) -> bool:
    return all(r.claim.family == SEEDS for r in page.claims)


def _claims(page: Page) -> dict[str, Any]:
    shown = [*page.claims, *page.questions]
    heads = family_heads(shown)
    anchors = {w["anchor"] for w in page.whys}
    return {"claims": [claim_view(r, anchors, heads.get(r.claim.key, "")) for r in shown],
            "claims_level": sequential_note(page.claims), "only_seeds": _only_seeds(page)}


def _claims_files(page: Page) -> dict[str, str]:
    rows = claims_view.rows([*page.claims, *page.questions])
    return {"claims.csv": claims_view.claims_csv(rows), "claims.json": claims_view.claims_json(rows)}


def _why_files(page: Page) -> dict[str, str]:
    return {f"{PROFILES_DIR}/{name}": text for name, text in why_view.speedscope_files(page.profiles).items()}


def _upgrade(page: Page) -> dict[str, Any]:
    return {"upgrade": upgrade_view.page_view(page.upgrade) if page.upgrade is not None else None}


def _upgrade_files(page: Page) -> dict[str, str]:
    return {"upgrade.csv": upgrade_view.upgrade_csv(page.upgrade)} if page.upgrade is not None else {}


def _hardware(page: Page) -> dict[str, Any]:
    return {"hardware": hardware_view.page_view(page.hardware, page.cells, sum(p.gpu_cpu for p in page.devices))}


def _charts(page: Page) -> dict[str, Any]:
    charts = []
    for chart in CHARTS:
        data = chart_data(chart, page.df, page.cells)
        if data is not None:
            charts.append({"key": chart.key, "title": chart.title, "benchmarks": " ".join(data.benchmarks),
                           "svg": Markup(chart_html(data))})
    return {"charts": charts}


def _failures(page: Page) -> dict[str, Any]:
    return {"failed": [c for c in page.cells if c.status in CELL_FAILURES],
            "skipped": [c for c in page.cells if c.status == "skipped"],
            "variant_errors": variant_errors(page.cells), "refused": list(page.refused)}


SECTIONS: tuple[Section, ...] = (
    Section("grid", _grid, "Verdicts", 1, claims=True),
    Section("claims", _claims, "Claims", 2, claims=True, files=_claims_files),
    Section("why", lambda p: {"whys": p.whys}, claims=True, files=_why_files),
    Section("upgrade", _upgrade, "Upgrade", 4, shown="upgrade", files=_upgrade_files),
    Section("summary", lambda p: {"summary": p.summary}, "Summary", 3,
            files=lambda p: {"results.csv": results_csv(p.df)}),
    Section("timeline", lambda p: {"timelines": [timeline_view(t) for t in p.history.timelines]}, "Timeline", 7,
            shown="timelines"),
    Section("bisect", lambda p: {"bisections": [bisect_view(b) for b in p.history.bisections]},
            "When did it change", 8, shown="bisections"),
    Section("series", lambda p: {"series": series_view.page_view(p.series)}, "Over time", 8, shown="series",
            files=lambda p: ({"series.csv": series_view.series_csv(p.series),
                              "series-values.csv": series_view.values_csv(p.series)}
                             if series_view.shown(p.series) else {})),
    Section("hardware", _hardware, "Hardware", 5, shown="hardware",
            files=lambda p: {"hardware.csv": hardware_view.hardware_csv(p.hardware)}),
    Section("devices", lambda p: {"devices": devices_view.page_view(p.devices)}, "Devices", 6, shown="devices"),
    Section("warnings", lambda p: {"warnings": list(p.warnings)}, "Warnings", 9,
            count=lambda ctx: len(ctx["warnings"])),
    Section("charts", _charts, "Charts", 11),
    Section("tables", lambda p: {"tables": p.tables, "summary": p.summary}, "Tables", 12),
    Section("environment", lambda p: {"env_rows": [env_row(c) for c in p.cells], "schedule": schedule_view(p.cells)},
            "Environment", 13),
    Section("failures", _failures, "Failures", 14,
            count=lambda ctx: len(ctx["failed"]) + len(ctx["variant_errors"]) + len(ctx["refused"])),
)


def body_order(sections: Sequence[Section], contexts: Mapping[str, Mapping[str, Any]]) -> tuple[list[Section], bool]:
    """The sections in the order the page shows them, and whether the claims' moved to the end (a grid with no
    measured claim line: the page says so first, in the ``no_claims`` note)."""
    grid = next((contexts[s.key].get("grid") for s in sections if s.key == "grid"), None)
    if grid and not grid.get("measured"):
        return [s for s in sections if not s.claims] + [s for s in sections if s.claims], True
    return list(sections), False


def nav_text(sections: Sequence[Section], contexts: Mapping[str, Mapping[str, Any]]) -> str:
    """The nav's links, in their own order."""
    return "".join(s.link(contexts[s.key]) for s in sorted((s for s in sections if s.label), key=lambda s: s.nav))


def files_of(sections: Sequence[Section], page: Page) -> dict[str, str]:
    """Every file the sections write beside the page, by name."""
    out: dict[str, str] = {}
    for s in sections:
        if s.files is not None:
            out.update(s.files(page))
    return out
