"""A cell's profiles file: ``reports/profiles/<cell>.json``, as one record with its readers and its writer.

``explain`` (and a bisect's "where it changed") profiles variants in a run
of their own (``execution.profiling``); the suite writes the file
(``suite.profiling``, schema ``suite.schema.PROFILES_SCHEMA_NAME``) and the
host keeps one per cell, merged run after run. ``ProfilesDoc`` is that file:
the cell's name, the suite's header (preset, config, cell, status ...) and
one record per profiled variant. As with ``documents.SuiteResults``, the
records stay dicts of the suite's shape, checked on load
(``suite.schema.validate_profiles``); ``analysis.explain.profiles`` reads each into a
``Profile``. Nothing reads a profile as a time.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.schema import PROFILES_SCHEMA_NAME, PROFILES_SCHEMA_VERSION, validate_profiles

from ..errors import UserError
from .foreign import RESULTS_CAP, read_file
from .formats import Format
from .store import write_text_atomic

PROFILES_DIR = "profiles"         # <reports>/profiles/<cell>.json, its .log and .speedscope.json
PROFILES_FORMAT = Format(PROFILES_SCHEMA_NAME, PROFILES_SCHEMA_VERSION, {}, "profiles file")
SPEEDSCOPE = ".speedscope.json"   # the report's drawing of a cell's profiles, beside its file

Records = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class ProfilesDoc:
    """One cell's profiles: its name, the suite's header, and its records by variant id."""

    cell: str
    records: Records
    header: dict[str, Any] = field(default_factory=dict)     # every key of the file but ``records``, in order

    @classmethod
    def of(cls, doc: dict[str, Any], path: Path) -> ProfilesDoc:
        """A profiles document as it stands (unchecked), named by its file (``profiles/<cell>.json``, a name the
        host chose): never by the header's ``cell.name``, which the code inside a container writes, and which the
        report would otherwise put in a path (``<cell>.speedscope.json``)."""
        return cls(path.stem, {str(r.get("id")): r for r in doc.get("records") or []},
                   {k: v for k, v in doc.items() if k != "records"})

    def to_json(self) -> dict[str, Any]:
        return dict(self.header, records=list(self.records.values()))

    @property
    def ok(self) -> bool:
        """The profiled run finished (its records may still hold a variant's error)."""
        return self.header.get("status") == "ok"

    @property
    def error(self) -> str | None:
        return self.header.get("error")

    @property
    def preset(self) -> str | None:
        return self.header.get("preset")

    @property
    def image(self) -> str | None:
        """The image (or environment) the variants were profiled in."""
        return (self.header.get("cell") or {}).get("image")

    @property
    def calls(self) -> int | None:
        """Samples' worth of calls profiled per variant."""
        return (self.header.get("config") or {}).get("profile_calls")


def read_profiles(path: Path) -> ProfilesDoc:
    """A profiles file, its shape checked; a file that is not one is one clear line (``UserError``)."""
    try:
        doc = json.loads(read_file(path, RESULTS_CAP))
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: not a readable profiles file ({e})") from None
    if not isinstance(doc, dict) or doc.get("schema") != PROFILES_FORMAT.schema:
        raise UserError(f"{path}: not a profiles file (schema {PROFILES_FORMAT.schema!r})")
    problems = validate_profiles(doc)
    if problems:
        raise UserError(f"{path}: {problems[0]}")
    return ProfilesDoc.of(doc, path)


def peek_profiles(path: Path) -> ProfilesDoc | None:
    """The profiles file at ``path`` as it stands, unchecked: what a new profiled run merges into (None: there is
    none, or it is not a profiles file)."""
    try:
        doc = json.loads(read_file(path, RESULTS_CAP))
    except (OSError, ValueError):
        return None
    return ProfilesDoc.of(doc, path) if isinstance(doc, dict) and doc.get("schema") == PROFILES_FORMAT.schema \
        else None


def write_profiles(path: Path, doc: ProfilesDoc) -> None:
    write_text_atomic(path, json.dumps(doc.to_json()) + "\n")


@dataclass(frozen=True)
class ProfilesFound:
    """Every readable ``profiles/<cell>.json`` beside a report, by cell name, and why each unreadable one was left
    out."""

    by_cell: dict[str, ProfilesDoc] = field(default_factory=dict)
    unreadable: tuple[str, ...] = ()


def profiles_in(reports: Path) -> ProfilesFound:
    """The cells' profiles files in ``reports/profiles/`` (the report's own speedscope drawings left aside)."""
    where = reports / PROFILES_DIR
    by_cell: dict[str, ProfilesDoc] = {}
    bad = []
    for path in sorted(where.glob("*.json")) if where.is_dir() else []:
        if path.name.endswith(SPEEDSCOPE):
            continue
        try:
            doc = read_profiles(path)
        except UserError as e:
            bad.append(str(e))
            continue
        by_cell[doc.cell] = doc
    return ProfilesFound(by_cell, tuple(bad))
