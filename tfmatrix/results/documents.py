"""The two documents results live in, as typed records with one load and one dump each.

``CellDoc`` is ``reports/cells/<cell>.json`` (schema ``tfmatrix.cell``): what
the host knows about one run of a cell, wrapped around ``SuiteResults``, the
suite's own document (schema ``tfmatrix.results``, written inside the cell; the
suite builds it as a dict and ``suite/schema.py`` holds its contract). As in
pyperf's ``Run``/``Benchmark`` and asv's ``Results``, each format has a version
and a table of upgrades: a document of an older version is upgraded one step
at a time (``Format.upgrades``, like asv's ``update_to_2``), a newer one is
refused. Every field's type is checked on load (its shape sits beside the
dataclass field, nested shapes in ``tfmatrix.results.shapes``), so a bad file is one
line naming the file and the key (exit code 2 at the command line), never a
traceback.

Dumping a loaded document gives the JSON it came from: the same keys in the
same order, keys this version does not declare carried in ``extra``; a null
in a field with an empty default (object, list, string) is the one thing
normalised.
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from suite import schema as suite_schema

from ..errors import UserError
from .shapes import BOOL, HOST_FACTS, NUM, RECORD, STR, TF_FACTS, Leaf, ListOf, Obj, Shape, problem

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Format:
    """A document format: its schema name, the version this tfmatrix writes, how older versions are upgraded."""

    schema: str
    version: int
    upgrades: Mapping[int, Upgrade]    # version -> the function that turns a document of it into the next version
    what: str                          # how messages name it


# Empty while only v1 exists. The day a v2 appears: bump ``version`` and add ``{1: _v1_to_v2}``; the v1
# fixture in tests/fixtures then loads through it (tests/test_documents.py).
CELL_FORMAT = Format("tfmatrix.cell", 1, {}, "cell file")
RESULTS_FORMAT = Format(suite_schema.SCHEMA_NAME, suite_schema.SCHEMA_VERSION, {}, "suite results")
CELL_STATUSES = ("ok", "failed", "timeout", "skipped")     # in the order summaries count them
CELL_FAILURES = ("failed", "timeout")                    # the cell ran and did not finish: the run fails


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

def _shaped(shape: Shape, default: Any = None, factory: Callable[[], Any] | None = None) -> Any:
    """A dataclass field whose JSON value has ``shape``; a missing or null value becomes the default."""
    if factory is not None:
        return field(default_factory=factory, metadata={"shape": shape})
    return field(default=default, metadata={"shape": shape})


def _declared(cls: type) -> list[Any]:
    return [f for f in fields(cls) if "shape" in f.metadata]


def _default(f: Any) -> Any:
    return f.default_factory() if f.default_factory is not MISSING else f.default


def shape_of(cls: type, **override: Shape) -> Obj:
    """The shape a document of ``cls`` has on disk, from its fields."""
    return Obj({f.name: override.get(f.name, f.metadata["shape"]) for f in _declared(cls)})


def _check(doc: dict[str, Any], shape: Shape, path: Path, where: str = "") -> None:
    found = problem(doc, shape, where)
    if found:
        raise UserError(f"{path}: {found}; re-run the cell or delete the file")


def _values(cls: type, doc: dict[str, Any]) -> dict[str, Any]:
    """The declared fields of ``cls`` from ``doc`` (missing or null: the default), and the rest as ``extra``."""
    declared = _declared(cls)
    names = {f.name for f in declared}
    values = {f.name: _default(f) if doc.get(f.name) is None else doc[f.name] for f in declared}
    values["extra"] = {k: v for k, v in doc.items() if k not in names and k not in ("schema", "schema_version")}
    values["present"] = frozenset(k for k in doc if k in names)
    return values


def _dump(obj: Any, fmt: Format) -> dict[str, Any]:
    """``obj`` as JSON: schema, version, then the fields it was read with (or that hold a value), then ``extra``."""
    out: dict[str, Any] = {"schema": fmt.schema, "schema_version": fmt.version}
    for f in _declared(type(obj)):
        value = getattr(obj, f.name)
        if f.name in obj.ALWAYS or f.name in obj.present or value != _default(f):
            out[f.name] = value.to_json() if hasattr(value, "to_json") else value
    out.update(obj.extra)
    return out


# -- the host's speed over a run -------------------------------------------------------------

@dataclass(frozen=True)
class HostSpeedPoint:
    """One timing of the host's reference workload before a turn (``execution.hostspeed``): ``[turn, time, s]``.

    The interleaved run keeps them in its journal's head and writes them into
    every cell's ``results.config.host_speed``; the estimates, ``compare``'s
    host normalisation and the report's chart of the run read them back here.
    """

    turn: int
    at: float                      # Unix time, to the millisecond
    seconds: float                 # the reference workload's time

    def to_json(self) -> list[Any]:
        return [self.turn, self.at, self.seconds]

    @classmethod
    def from_json(cls, row: Any) -> HostSpeedPoint | None:
        """A stored point, or None for anything that is not ``[turn, time, seconds]`` (left out, never fatal)."""
        if not isinstance(row, list) or len(row) != 3 or not all(isinstance(x, (int, float)) for x in row):
            return None
        return cls(int(row[0]), float(row[1]), float(row[2]))


def host_speed_points(rows: Any) -> list[HostSpeedPoint]:
    """Every readable point of a stored series (the one parser of the triple)."""
    points = [HostSpeedPoint.from_json(row) for row in rows or []] if isinstance(rows, list) else []
    return [p for p in points if p is not None]


# -- the suite's document ------------------------------------------------------------------

@dataclass
class SuiteResults:
    """The suite's results document (``tfmatrix.results.store``) as the host reads it.

    ``records`` stay dicts, one per variant, their shape checked
    (``shape.RECORD``): the suite writes them, ``suite.schema`` validates
    them and the run loop merges rounds of them; the report reads each once
    into a read-only ``analysis.variant.Variant``, then into its pandas frame.
    """

    suite_version: str = _shaped(STR, "")
    status: str = _shaped(STR, "")                   # ok | error
    error: str | None = _shaped(STR)
    preset: str = _shaped(STR, "")
    config: dict[str, Any] = _shaped(Obj({"only": ListOf(STR), "unstable_cv": NUM, "rounds": NUM}), factory=dict)
    cell: dict[str, Any] = _shaped(Obj({"name": STR, "target": STR, "runner": STR, "image": STR}), factory=dict)
    environment: dict[str, Any] = _shaped(Obj({"tf": TF_FACTS, "host": HOST_FACTS}), factory=dict)
    gpu: dict[str, Any] = _shaped(Obj({"requested": BOOL, "visible": ListOf(), "ok": BOOL}), factory=dict)
    warnings: list[str] = _shaped(ListOf(STR), factory=list)
    started: str = _shaped(STR, "")
    finished: str = _shaped(STR, "")
    wall_s: float = _shaped(NUM, 0.0)
    records: list[dict[str, Any]] = _shaped(ListOf(RECORD), factory=list)
    extra: dict[str, Any] = field(default_factory=dict)      # keys this version does not declare, kept as they were
    present: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    ALWAYS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_json(cls, doc: Any, path: Path, where: str = "") -> SuiteResults:
        """The one load: upgraded to the current version and every field's type checked."""
        if not isinstance(doc, dict) or doc.get("schema") != RESULTS_FORMAT.schema:
            raise UserError(f"{path}: '{where or 'results'}' is not a {RESULTS_FORMAT.schema} document; "
                            "re-run the cell or delete the file")
        doc = upgrade(doc, RESULTS_FORMAT, path)
        _check(doc, shape_of(cls), path, where)
        return cls(**_values(cls, doc))

    def to_json(self) -> dict[str, Any]:
        """The one dump: the document as the suite wrote it (after any upgrade)."""
        return _dump(self, RESULTS_FORMAT)

    @property
    def tf_facts(self) -> dict[str, Any]:
        return dict(self.environment.get("tf") or {})

    @property
    def host_facts(self) -> dict[str, Any]:
        return dict(self.environment.get("host") or {})

    @property
    def host_speed(self) -> list[HostSpeedPoint]:
        """The host's speed over the run that wrote this document, turn by turn (empty: none recorded)."""
        return host_speed_points(self.config.get("host_speed"))

    @property
    def host_reference_s(self) -> float | None:
        """The host reference workload's median time over that run (None: none recorded)."""
        seconds = [p.seconds for p in self.host_speed]
        return statistics.median(seconds) if seconds else None

    def strict_problems(self) -> list[str]:
        """How the document breaks ``suite.schema`` (every key there, required): an ``ok`` cell must pass."""
        return suite_schema.validate(self.to_json())


# -- the cell file -------------------------------------------------------------------------

@dataclass(frozen=True)
class CellRequest:
    """What one run asked of one cell: the cell file's ``request``, the one definition of its keys.

    Made once per cell (``execution.request.RunRequest.job``) and handed
    down to the suite's arguments, the journal's identity, the reuse rule
    (``results.store.reusable``: an earlier file's request must equal
    ``to_json()``, so the dict is byte-for-byte what earlier versions stored)
    and the cell file. The fields' shapes are what ``CellDoc.request`` checks
    on load; a ``None`` shape is a key that is stored but was never checked.
    """

    preset: str = _shaped(STR, "")
    only: tuple[str, ...] = _shaped(ListOf(STR), ())
    repeats: int | None = _shaped(None)
    suite: str = _shaped(STR, "")          # hash of the suite's source
    rounds: int = _shaped(None, 1)
    schedule: str = _shaped(None, "")
    bench: str | None = _shaped(None)      # hash of the user's benchmark files: absent without them (OPTIONAL)
    processes: int | None = _shaped(None)  # fresh processes per variant: absent unless asked for (OPTIONAL)
    sequential: bool | None = _shaped(None)   # rounds = "auto": ``rounds`` is the cap (OPTIONAL)

    # Keys stored only when set, so results from before they existed stay comparable (reusable).
    OPTIONAL: ClassVar[tuple[str, ...]] = ("bench", "processes", "sequential")

    def to_json(self) -> dict[str, Any]:
        """The request as the cell file stores it: every key in field order, the optional ones only when set."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name in self.OPTIONAL:
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CellRequest:
        """A stored request (shape-checked on load) to read: a missing or null key at its default."""
        values = {f.name: _default(f) if doc.get(f.name) is None else doc[f.name] for f in fields(cls)}
        values["only"] = tuple(values["only"])
        return cls(**values)


def request_json(request: CellRequest | Mapping[str, Any]) -> dict[str, Any]:
    """A request as a cell file stores it: a ``CellRequest``'s JSON, or a stored one (an older file's) as it is."""
    return request.to_json() if isinstance(request, CellRequest) else dict(request)


@dataclass(frozen=True)
class Attempt:
    """A later run that failed: the complete results beside it were kept (``results.with_attempt``)."""

    status: str | None = None
    reason: str | None = None
    finished: str | None = None
    log: str | None = None          # the attempt's log, a file next to the cell file

    SHAPE: ClassVar[Obj] = Obj({"status": STR, "reason": STR, "finished": STR, "log": STR})

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "finished": self.finished, "log": self.log}


@dataclass
class CellDoc:
    """One cell's file: what ran (``cell``, ``request``, ``runner``), how it went, the suite's results."""

    name: str = _shaped(STR, "")
    status: str = _shaped(Leaf((str,), "a cell status", CELL_STATUSES), "failed")
    reason: str | None = _shaped(STR)
    cell: dict[str, Any] = _shaped(Obj({
        "name": STR, "tf": STR, "tf_release": STR, "python": STR, "target": STR, "preset": STR,
        "image": STR, "keras": Obj({"flavour": STR, "version": STR}), "base": Obj({"ref": STR}),
    }), factory=dict)                                           # the matrix's cell (``Cell.to_dict``)
    request: dict[str, Any] = _shaped(shape_of(CellRequest), factory=dict)     # ``CellRequest.to_json``, as stored
    runner: dict[str, Any] = _shaped(Obj({"name": STR, "image": STR, "image_id": STR, "base": STR,
                                          "interpreter": STR}), factory=dict)
    timings: dict[str, float] = _shaped(Obj(rest=NUM), factory=dict)
    host: dict[str, Any] = _shaped(Obj(), factory=dict)
    finished: str = _shaped(STR, "")
    log_tail: str = _shaped(STR, "")
    results: SuiteResults | None = _shaped(None)                # checked by SuiteResults.from_json
    last_attempt: Attempt | None = _shaped(Attempt.SHAPE)
    extra: dict[str, Any] = field(default_factory=dict)
    present: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    ALWAYS: ClassVar[tuple[str, ...]] = ("name", "status", "reason", "cell", "request", "runner", "timings", "host",
                                         "finished", "log_tail", "results")

    @classmethod
    def from_json(cls, doc: Any, path: Path, bare_results: bool = True) -> CellDoc:
        """The one load: a cell document (or a bare suite results file), upgraded, every field's type checked.

        ``bare_results``: read a suite results file (``python -m suite run --out
        reports/cells/x.json``) as an ``ok`` cell that knows only what the suite
        recorded; the run loop never takes one for a cell file of its own.
        """
        if not isinstance(doc, dict):
            raise UserError(f"{path}: not a tfmatrix cell file (a JSON {type(doc).__name__}, not an object)")
        schema = doc.get("schema")
        if schema == RESULTS_FORMAT.schema and bare_results:
            out = cls.wrapping(SuiteResults.from_json(doc, path), path)
        elif schema != CELL_FORMAT.schema:
            raise UserError(f"{path}: not a tfmatrix cell file (schema {schema!r}, expected {CELL_FORMAT.schema!r}); "
                            f"move it out of {path.parent}")
        else:
            out = cls._from_cell_json(upgrade(doc, CELL_FORMAT, path), path)
        if out.results is not None and out.status == "ok":
            problems = out.results.strict_problems()
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                raise UserError(f"{path}: suite results do not match schema {RESULTS_FORMAT.schema} "
                                f"v{RESULTS_FORMAT.version}: {problems[0]}{more}; re-run the cell")
        return out

    @classmethod
    def _from_cell_json(cls, doc: dict[str, Any], path: Path) -> CellDoc:
        results = None if doc.get("results") is None else SuiteResults.from_json(doc["results"], path, "results")
        _check(doc, shape_of(cls, results=None), path)
        values = _values(cls, doc)
        values["results"] = results
        attempt = doc.get("last_attempt") or {}
        values["last_attempt"] = Attempt(*(attempt.get(k) for k in ("status", "reason", "finished", "log"))) \
            if attempt else None
        return cls(**values)

    @classmethod
    def wrapping(cls, results: SuiteResults, path: Path) -> CellDoc:
        """A bare suite results file as a cell document: what the suite knew about its cell."""
        cell = dict(results.cell)
        name = cell.get("name") or path.stem
        if name == "local":          # the suite's default --cell: the file name says more
            name = path.stem
        cell["name"] = name
        ok = results.status == "ok"
        return cls(name=name, status="ok" if ok else "failed",
                   reason=None if ok else results.error or "the suite reported an error", cell=cell,
                   request={"preset": results.preset or None, "only": results.config.get("only") or []},
                   runner={"name": cell.get("runner") or "suite"}, finished=results.finished, results=results)

    def to_json(self) -> dict[str, Any]:
        """The one dump: the file's JSON (``results.write_cell`` writes it atomically)."""
        return _dump(self, CELL_FORMAT)

    @property
    def complete(self) -> bool:
        """A whole successful run: what a failed re-run must never replace."""
        return self.status == "ok" and self.results is not None

    @property
    def cell_request(self) -> CellRequest:
        """``request`` to read: typed, a key the file lacks at its default."""
        return CellRequest.from_json(self.request)

    @property
    def rounds(self) -> int:
        """How many rounds the results pool (1 for a document written before rounds existed)."""
        rounds = self.results.config.get("rounds") if self.results else None
        return rounds if isinstance(rounds, int) and not isinstance(rounds, bool) and rounds > 0 else 1


def read_cell(path: Path, bare_results: bool = True) -> CellDoc:
    """``path`` as a ``CellDoc``, or a UserError naming the file: the one way a cell file is read."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or e}")
    except ValueError as e:
        raise UserError(f"{path}: not valid JSON ({str(e).splitlines()[0]}); delete it or re-run the cell")
    return CellDoc.from_json(doc, path, bare_results)
