"""The ``[suite]`` and ``[report]`` tables: a user's own benchmarks, their requirements, the upgrade view's pair.

::

    [suite]
    paths = ["benchmarks/"]                  # directories or .py files, relative to the matrix file
    requirements = ["keras-hub==0.17.0"]     # installed into every cell (image hash includes them)
    claims = ["claims.toml"]                 # the user's claims files (analysis.claims.files reads them)

    [report]
    compare = ["tf2.15-cpu", "tf2.21-keras3-cpu"]   # baseline, candidate: the report's upgrade view

Every error is one line naming file, table and key, with the fix. ``compare``
names cells, so it is checked against them after the cells are resolved
(``check_compare``).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from .checks import Where, check_keys, checked
from .records import REPORT_KEYS, SUITE_KEYS, Cell, Settings
from .user_benchmarks import check_path


def _table(file: str, doc: Mapping[str, Any], name: str, keys: Sequence[str]) -> tuple[Where, dict[str, Any]]:
    where = Where(file, f"[{name}]")
    table = doc.get(name, {})
    if not isinstance(table, dict):
        raise where.error(None, f"[{name}] must be a table", f"write it as a [{name}] section")
    check_keys(where, table, keys, f"[{name}]")
    return where, table


def _strings(where: Where, table: Mapping[str, Any], key: str, example: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.error(key, "expected an array of strings", f"write {key} = [{example}]")
    return value


def parse_suite(file: str, doc: Mapping[str, Any], base: Path
                ) -> tuple[tuple[Path, ...], tuple[str, ...], tuple[Path, ...]]:
    """``[suite]`` -> (benchmark paths, resolved against ``base``; extra requirement lines; claims files)."""
    where, table = _table(file, doc, "suite", SUITE_KEYS)
    paths = []
    for value in _strings(where, table, "paths", '"benchmarks/"'):
        path = check_path(value, base, f"{file}: [suite]: key 'paths'", "the matrix file's directory")
        if path in paths:
            raise where.error("paths", f"{value!r} is listed twice", "list each path once")
        paths.append(path)
    requirements = []
    for line in _strings(where, table, "requirements", '"keras-hub==0.17.0"'):
        requirements.append(checked(where, "requirements", line, "requirement",
                                    "a requirement with a version specifier",
                                    'write name==version, like "keras-hub==0.17.0"'))
    claims: list[Path] = []
    for value in _strings(where, table, "claims", '"claims.toml"'):
        path = (base / value).resolve()
        if not path.is_file() or path.suffix != ".toml":
            raise where.error("claims", f"{value} is not a .toml file (looked at {path})",
                              "name claims files relative to the matrix file's directory")
        if path in claims:
            raise where.error("claims", f"{value!r} is listed twice", "list each file once")
        claims.append(path)
    return tuple(paths), tuple(requirements), tuple(claims)


def parse_report(file: str, doc: Mapping[str, Any]) -> tuple[str, str] | None:
    """``[report] compare`` -> (baseline, candidate) cell names, not yet checked against the cells."""
    where, table = _table(file, doc, "report", REPORT_KEYS)
    if "compare" not in table:
        return None
    names = _strings(where, table, "compare", '"tf2.15-cpu", "tf2.21-keras3-cpu"')
    if len(names) != 2 or names[0] == names[1]:
        raise where.error("compare", f"expected two different cell names, got {len(names)}",
                          'write compare = ["<baseline cell>", "<candidate cell>"]')
    return names[0], names[1]


def check_compare(file: str, pair: tuple[str, str] | None, names: Sequence[str]) -> tuple[str, str] | None:
    """``[report] compare`` with each name resolved to its cell (short forms like ``tf2.21-cpu`` allowed)."""
    if pair is None:
        return None
    from .names import resolve

    full = []
    for typed in pair:
        found = resolve(typed, names)
        if found.name is None:
            raise UserError(f"{file}: [report]: key 'compare': {found.problem}")
        full.append(found.name)
    if full[0] == full[1]:
        raise UserError(f"{file}: [report]: key 'compare': both names mean {full[0]}; name two different cells")
    return full[0], full[1]


def with_requirements(cell: Cell, requirements: tuple[str, ...]) -> Cell:
    """``cell`` installing ``requirements`` too, after its own (so the image tag changes with them); an existing
    environment installs nothing (its benchmarks find what it has)."""
    if not requirements or cell.existing:
        return cell
    return dataclasses.replace(cell, requirements=cell.requirements + requirements, user_requirements=requirements)


# What a path outside the matrix file's folder is used for: each warning says it.
OUTSIDE_USE = {"paths": "every cell mounts it read-only", "claims": "the report reads and shows its claims"}


def outside_notes(file: str, base: Path, settings: Settings) -> tuple[str, ...]:
    """A warning line per ``[suite] paths`` entry or claims file that resolves outside the matrix file's folder.

    Not an error: a shared benchmark folder may well live elsewhere. But a
    matrix file is easy to pass around, and ``paths = ["/etc"]`` (or
    ``"../../.ssh"``) mounts that folder into every cell while nothing on
    the screen says so; the warning names the file, the key and the path, so
    whoever runs it sees what leaves the folder.
    """
    folder = base.resolve()
    chosen = {"paths": settings.bench_paths, "claims": settings.claim_files}
    return tuple(f"{file}: [suite]: key '{key}': {str(path)!r} is outside the matrix file's folder ({folder}); "
                 f"{OUTSIDE_USE[key]}: move it beside the matrix file unless you mean it"
                 for key, paths in chosen.items() for path in paths if not path.is_relative_to(folder))


def suite_settings(file: str, doc: Mapping[str, Any], base: Path, settings: Settings) -> Settings:
    """``settings`` with ``[suite]`` and ``[report]`` applied."""
    paths, requirements, claims = parse_suite(file, doc, base)
    return dataclasses.replace(settings, bench_paths=paths, requirements=requirements, claim_files=claims,
                               compare=parse_report(file, doc))
