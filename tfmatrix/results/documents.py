"""The two documents results live in, as typed records with one load and one dump each.

``CellDoc`` is ``reports/cells/<cell>.json`` (schema ``tfmatrix.cell``): what
the host knows about one run of a cell, wrapped around ``SuiteResults``, the
suite's own document (schema ``tfmatrix.results``, written inside the cell; the
suite builds it as a dict and ``suite/schema.py`` holds its contract). Each
format has a version and a table of upgrades, and every field's type is
checked on load (``formats.py``), so a bad file is one line naming the file
and the key (exit code 2 at the command line), never a traceback.

Dumping a loaded document gives the JSON it came from: the same keys in the
same order, keys this version does not declare carried in ``extra``; a null
in a field with an empty default (object, list, string) is the one thing
normalised.
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from suite import schema as suite_schema

from ..errors import UserError
from .foreign import CELL_FILE_CAP, Refused, read_file
from .formats import Format, check, default_of, dump, field_values, shape_of, shaped, upgrade
from .shapes import BOOL, HOST_FACTS, NUM, OUTSIDE, RECORD, STR, TF_FACTS, Leaf, ListOf, Obj

# Empty while only v1 exists. The day a v2 appears: bump ``version`` and add ``{1: _v1_to_v2}``; the v1
# fixture in tests/fixtures then loads through it (tests/test_documents.py).
CELL_FORMAT = Format("tfmatrix.cell", 1, {}, "cell file")
RESULTS_FORMAT = Format(suite_schema.SCHEMA_NAME, suite_schema.SCHEMA_VERSION, {}, "suite results")
CELL_STATUSES = ("ok", "failed", "timeout", "skipped")     # in the order summaries count them
CELL_FAILURES = ("failed", "timeout")                    # the cell ran and did not finish: the run fails


# -- the host's speed over a run -------------------------------------------------------------

@dataclass(frozen=True)
class HostSpeedPoint:
    """One timing of the host's reference workload before a turn (``suite.reference``): ``[turn, time, s]``.

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

    suite_version: str = shaped(STR, "")
    status: str = shaped(STR, "")                   # ok | error
    error: str | None = shaped(STR)
    preset: str = shaped(STR, "")
    config: dict[str, Any] = shaped(Obj({"only": ListOf(STR), "unstable_cv": NUM, "rounds": NUM,
                                         suite_schema.OUTSIDE_KEY: OUTSIDE}), factory=dict)
    cell: dict[str, Any] = shaped(Obj({"name": STR, "target": STR, "runner": STR, "image": STR}), factory=dict)
    environment: dict[str, Any] = shaped(Obj({"tf": TF_FACTS, "host": HOST_FACTS}), factory=dict)
    gpu: dict[str, Any] = shaped(Obj({"requested": BOOL, "visible": ListOf(), "ok": BOOL}), factory=dict)
    warnings: list[str] = shaped(ListOf(STR), factory=list)
    started: str = shaped(STR, "")
    finished: str = shaped(STR, "")
    wall_s: float = shaped(NUM, 0.0)
    records: list[dict[str, Any]] = shaped(ListOf(RECORD), factory=list)
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
        check(doc, shape_of(cls), path, where)
        return cls(**field_values(cls, doc))

    def to_json(self) -> dict[str, Any]:
        """The one dump: the document as the suite wrote it (after any upgrade)."""
        return dump(self, RESULTS_FORMAT)

    @property
    def tf_facts(self) -> dict[str, Any]:
        return dict(self.environment.get("tf") or {})

    @property
    def host_facts(self) -> dict[str, Any]:
        return dict(self.environment.get("host") or {})

    @property
    def outside(self) -> list[tuple[str, dict[str, Any]]]:
        """The variants of frameworks the cell does not have, each with why (``suite.schema.OUTSIDE_KEY``): not
        records, not n/a; a document from before them has none."""
        return [(group["reason"], entry) for group in self.config.get(suite_schema.OUTSIDE_KEY) or []
                for entry in group["variants"]]

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

    preset: str = shaped(STR, "")
    only: tuple[str, ...] = shaped(ListOf(STR), ())
    repeats: int | None = shaped(None)
    suite: str = shaped(STR, "")          # hash of the suite's source
    rounds: int = shaped(None, 1)
    schedule: str = shaped(None, "")
    bench: str | None = shaped(None)      # hash of the user's benchmark files: absent without them (OPTIONAL)
    processes: int | None = shaped(None)  # fresh processes per variant: absent unless asked for (OPTIONAL)
    sequential: bool | None = shaped(None)   # rounds = "auto": ``rounds`` is the cap (OPTIONAL)
    claims: tuple[str, ...] | None = shaped(ListOf(STR))   # the claim families asked beyond the seeds' (OPTIONAL)

    # Keys stored only when set, so results from before they existed stay comparable (reusable).
    OPTIONAL: ClassVar[tuple[str, ...]] = ("bench", "processes", "sequential", "claims")

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
        values = {f.name: default_of(f) if doc.get(f.name) is None else doc[f.name] for f in fields(cls)}
        values["only"] = tuple(values["only"])
        values["claims"] = tuple(values["claims"]) if values["claims"] is not None else None
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

    name: str = shaped(STR, "")
    status: str = shaped(Leaf((str,), "a cell status", CELL_STATUSES), "failed")
    reason: str | None = shaped(STR)
    cell: dict[str, Any] = shaped(Obj({
        "name": STR, "tf": STR, "tf_release": STR, "python": STR, "target": STR, "preset": STR,
        "image": STR, "keras": Obj({"flavour": STR, "version": STR}), "base": Obj({"ref": STR}),
    }), factory=dict)                                           # the matrix's cell (``Cell.to_dict``)
    request: dict[str, Any] = shaped(shape_of(CellRequest), factory=dict)     # ``CellRequest.to_json``, as stored
    runner: dict[str, Any] = shaped(Obj({"name": STR, "image": STR, "image_id": STR, "base": STR,
                                          "interpreter": STR}), factory=dict)
    timings: dict[str, float] = shaped(Obj(rest=NUM), factory=dict)
    host: dict[str, Any] = shaped(Obj(), factory=dict)
    finished: str = shaped(STR, "")
    log_tail: str = shaped(STR, "")
    results: SuiteResults | None = shaped(None)                # checked by SuiteResults.from_json
    last_attempt: Attempt | None = shaped(Attempt.SHAPE)
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
        check(doc, shape_of(cls, results=None), path)
        values = field_values(cls, doc)
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
        return dump(self, CELL_FORMAT)

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
        doc = json.loads(read_file(path, CELL_FILE_CAP, follow=True).decode("utf-8"))
    except Refused as e:
        raise UserError(f"{path}: cannot read: {e}")
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or e}")
    except ValueError as e:
        raise UserError(f"{path}: not valid JSON ({str(e).splitlines()[0]}); delete it or re-run the cell")
    return CellDoc.from_json(doc, path, bare_results)
