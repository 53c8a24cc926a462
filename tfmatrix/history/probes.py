"""A release's cell, and the earlier cell files that already measured it (the matrix's, a bisect's, a timeline's).

A probe is an ordinary CPU cell, resolved from the axis's spec through the
matrix's own checks (``matrix.resolve.resolve_cell``: what cannot exist here
is a one-line reason, never a traceback), with the user's matrix settings
(preset, timeout, base registry). Its results live in
``<reports>/releases/cells/``; the main matrix's ``<reports>/cells/`` are
read, never written.
"""
from __future__ import annotations

from pathlib import Path

from ..analysis.cells import CellResult, load_dir, load_file
from ..errors import UserError
from ..matrix import Cell, Settings
from ..matrix.releases import load_table
from ..matrix.resolve import resolve_cell
from .axis import Axis

PROBES_DIR = "releases"          # <reports>/releases/cells/: every probe's and timeline cell's file


def probe_cell(axis: Axis, release: str, settings: Settings) -> Cell | str:
    """The release's cell, or why it cannot exist here."""
    try:
        return resolve_cell("tfmatrix", f"{axis.name} {release}", axis.spec(release), settings, load_table())
    except UserError as exc:
        return f"cannot exist here: {exc}"


def same_stack(result: CellResult, cell: Cell) -> bool:
    """A cell file measured the TF, Keras and backend release that ``cell`` asks for (its name and Python aside)."""
    if not cell.has_tf:         # a local label is the same release (PyPI's torch 2.13.0+cpu for torch==2.13.0)
        return (result.backend == cell.backend and result.keras_version == cell.keras.version
                and (result.backend_version or "").split("+")[0] == cell.backend_version)
    return (result.tf_installed == cell.tf and result.keras_flavour == cell.keras.flavour
            and cell.keras.version in (None, result.keras_version))


class EarlierFiles:
    """Cell files of this suite that measured a release: the probe's own first, then the main matrix's."""

    def __init__(self, reports: Path, suite: str) -> None:
        self.reports = reports
        self.suite = suite
        self._main: list[CellResult] | None = None

    def of(self, cell: Cell) -> list[CellResult]:
        own = self.reports / PROBES_DIR / "cells" / f"{cell.name}.json"
        found = [load_file(own)] if own.exists() else []
        if self._main is None:
            main = self.reports / "cells"
            self._main = load_dir(main).cells if main.is_dir() else []
        found += [c for c in self._main if c.target == "cpu" and same_stack(c, cell)]
        return [c for c in found if c.status == "ok" and c.suite_hash == self.suite and c.results is not None]


def covers(result: CellResult, variant_ids: tuple[str, ...]) -> bool:
    """Every one of ``variant_ids`` has a record in the file (measured, or n/a with its reason)."""
    have = {v.id for v in result.variants}
    return all(v in have for v in variant_ids)
