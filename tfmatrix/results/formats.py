"""What every document format shares: its schema, version and upgrades (``Format``, ``versioned``), and typed
fields with one load and one dump (``shaped`` fields, ``field_values``, ``dump``).

As in pyperf's ``Run``/``Benchmark`` and asv's ``Results``, each format has a
version and a table of upgrades: a document of an older version is upgraded
one step at a time (``Format.upgrades``, like asv's ``update_to_2``), a newer
one is refused. A field's shape sits beside the dataclass field
(``shapes.py`` holds the shapes), so a bad file is one line naming the file
and the key, never a traceback.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..errors import UserError
from .shapes import Obj, Shape, problem

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Format:
    """A document format: its schema name, the version this tfmatrix writes, how older versions are upgraded."""

    schema: str
    version: int
    upgrades: Mapping[int, Upgrade]    # version -> the function that turns a document of it into the next version
    what: str                          # how messages name it


def upgrade(doc: dict[str, Any], fmt: Format, path: Path) -> dict[str, Any]:
    """``doc`` brought to ``fmt.version`` through its upgrades, or a UserError naming ``path``."""
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise UserError(f"{path}: {fmt.what} has no integer schema_version (got {version!r}); re-run the cell")
    if version > fmt.version:
        raise UserError(f"{path}: {fmt.what} schema_version {version} is newer than this tfmatrix reads "
                        f"({fmt.version}); update tfmatrix or build the report with the tfmatrix that wrote it")
    while version < fmt.version:
        step = fmt.upgrades.get(version)
        if step is None:
            oldest = min(fmt.upgrades, default=fmt.version)
            raise UserError(f"{path}: {fmt.what} schema_version {version} is older than this tfmatrix reads "
                            f"({oldest}..{fmt.version}); re-run the cell")
        doc = step(dict(doc))
        version += 1
        doc["schema_version"] = version
    return doc


def versioned(doc: Any, fmt: Format, path: Path) -> dict[str, Any]:
    """``doc`` at ``fmt``'s version: a file from before versions (no ``schema`` key) is version 1; another schema,
    or a JSON value that is not an object, is refused with one line naming ``path``."""
    if not isinstance(doc, dict):
        raise UserError(f"{path}: not a {fmt.what} (a JSON {type(doc).__name__}, not an object)")
    if "schema" not in doc:
        doc = {**doc, "schema": fmt.schema, "schema_version": 1}
    if doc["schema"] != fmt.schema:
        raise UserError(f"{path}: schema {doc['schema']!r} is not a {fmt.what} ({fmt.schema})")
    return upgrade(doc, fmt, path)


# -- the generic part: fields with shapes, one load and one dump -------------------------

def shaped(shape: Shape, default: Any = None, factory: Callable[[], Any] | None = None) -> Any:
    """A dataclass field whose JSON value has ``shape``; a missing or null value becomes the default."""
    if factory is not None:
        return field(default_factory=factory, metadata={"shape": shape})
    return field(default=default, metadata={"shape": shape})


def declared(cls: type) -> list[Any]:
    return [f for f in fields(cls) if "shape" in f.metadata]


def default_of(f: Any) -> Any:
    return f.default_factory() if f.default_factory is not MISSING else f.default


def shape_of(cls: type, **override: Shape) -> Obj:
    """The shape a document of ``cls`` has on disk, from its fields."""
    return Obj({f.name: override.get(f.name, f.metadata["shape"]) for f in declared(cls)})


def check(doc: dict[str, Any], shape: Shape, path: Path, where: str = "") -> None:
    found = problem(doc, shape, where)
    if found:
        raise UserError(f"{path}: {found}; re-run the cell or delete the file")


def field_values(cls: type, doc: dict[str, Any]) -> dict[str, Any]:
    """The declared fields of ``cls`` from ``doc`` (missing or null: the default), and the rest as ``extra``."""
    ours = declared(cls)
    names = {f.name for f in ours}
    values = {f.name: default_of(f) if doc.get(f.name) is None else doc[f.name] for f in ours}
    values["extra"] = {k: v for k, v in doc.items() if k not in names and k not in ("schema", "schema_version")}
    values["present"] = frozenset(k for k in doc if k in names)
    return values


def dump(obj: Any, fmt: Format) -> dict[str, Any]:
    """``obj`` as JSON: schema, version, then the fields it was read with (or that hold a value), then ``extra``."""
    out: dict[str, Any] = {"schema": fmt.schema, "schema_version": fmt.version}
    for f in declared(type(obj)):
        value = getattr(obj, f.name)
        if f.name in obj.ALWAYS or f.name in obj.present or value != default_of(f):
            out[f.name] = value.to_json() if hasattr(value, "to_json") else value
    out.update(obj.extra)
    return out
