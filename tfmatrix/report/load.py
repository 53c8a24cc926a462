"""Read ``reports/cells/*.json``: check schema versions, derive each cell's metadata, order the cells.

A cell file is ``tfmatrix.cell`` (``tfmatrix.results``'s suite document
wrapped with what the host knows). A bare suite results file (``python -m
suite run --out reports/cells/x.json``) is read too, as an ``ok`` cell that
knows only what the suite recorded. Versions this module knows are read
(older ones through ``_UPGRADES``); anything else is refused with one line
naming the file.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.schema import SCHEMA_NAME as RESULTS_SCHEMA
from suite.schema import SCHEMA_VERSION as RESULTS_VERSION
from suite.schema import validate as validate_results

from ..errors import UserError
from ..results import CELL_SCHEMA, CELL_SCHEMA_VERSION, read_tail
from ..versions import VersionKey, major, minor_series, version_key
from .shape import CELL, RESULTS, problem

# Older schema versions this reader can still use: version -> function that
# upgrades a document of that version to the next one. Empty while only v1 exists.
_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
_RESULTS_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

CPU_FLAGS_SHOWN = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile")


@dataclass
class CellResult:
    """One cell's file, with the metadata the report shows, derived once.

    Named apart from ``tfmatrix.matrix.Cell`` (what a cell *is*, before it runs):
    this is what a cell *produced*, read back from ``reports/cells/<cell>.json``.
    """

    path: Path
    name: str
    status: str                       # ok | failed | timeout | skipped
    reason: str | None
    doc: dict[str, Any]               # the whole cell document
    results: dict[str, Any] | None    # the suite's results document, if any
    tf: str                           # the matrix's TF version (ordering), else what was installed
    tf_installed: str | None
    tf_git: str | None
    keras_flavour: str
    keras_version: str
    python: str
    target: str                       # cpu | gpu
    runner: str
    preset: str
    suite_version: str
    suite_hash: str
    finished: str
    gpus_visible: list[str] = field(default_factory=list)
    gpu_problem: str | None = None    # a GPU cell whose results show no GPU
    log_tail: str = ""
    order: int = 0                    # position in the report's cell order
    last_attempt: dict[str, Any] | None = None   # a later run that failed; these are the results it kept

    @property
    def attempt_note(self) -> str | None:
        """ "last attempt failed (interrupted) on <date>, showing the results of <date>", or None."""
        a = self.last_attempt
        if not a:
            return None
        return (f"last attempt {a.get('status') or 'failed'} ({a.get('reason') or 'no reason recorded'}) on "
                f"{a.get('finished') or '?'}, showing the results of {self.finished or '?'}")

    @property
    def records(self) -> list[dict[str, Any]]:
        return list((self.results or {}).get("records") or [])

    @property
    def has_records(self) -> bool:
        return bool(self.records)

    @property
    def tf_major(self) -> int | None:
        return major(self.tf)

    @property
    def backend(self) -> str | None:
        """Keras 3's backend ("tensorflow", "jax", "torch"); None for a cell without Keras 3."""
        named = self.cell_spec.get("backend") or (self.tf_facts.get("backend") or {}).get("name")
        if named:
            return str(named)
        return "tensorflow" if self.keras_flavour == "keras3" or self.keras_version.startswith("3.") else None

    @property
    def label(self) -> str:
        """"TF 2.0 · keras 2.3.1 · py3.7 · cpu": what the cell is, in a column header."""
        parts = [f"TF {self.tf_installed or self.tf}" if self.backend in (None, "tensorflow")
                 else f"no TF, Keras 3 on {self.backend}"]
        if self.keras_version:
            parts.append(f"keras {self.keras_version}")
        if self.python:
            parts.append(f"py{self.python}")
        parts.append(self.target)
        return " · ".join(parts)

    def sort_key(self) -> tuple[VersionKey, int, VersionKey, VersionKey, VersionKey, str]:
        """TF version (the matrix's), CPU before GPU, then installed TF, Keras and Python versions, then name."""
        return (version_key(self.tf), 0 if self.target == "cpu" else 1, version_key(self.tf_installed or self.tf),
                version_key(self.keras_version), version_key(self.python), self.name)

    @property
    def environment(self) -> dict[str, Any]:
        return dict((self.results or {}).get("environment") or {})

    @property
    def tf_facts(self) -> dict[str, Any]:
        return dict(self.environment.get("tf") or {})

    @property
    def host_facts(self) -> dict[str, Any]:
        return dict(self.environment.get("host") or {})

    @property
    def cell_spec(self) -> dict[str, Any]:
        return dict(self.doc.get("cell") or {})

    @property
    def runner_info(self) -> dict[str, Any]:
        return dict(self.doc.get("runner") or {})

    def cpu_flags(self) -> list[str]:
        flags = ((self.host_facts.get("cpu") or {}).get("flags")) or {}
        return [f for f in CPU_FLAGS_SHOWN if flags.get(f)] + sorted(
            f for f, on in flags.items() if on and f not in CPU_FLAGS_SHOWN)

    def unstable_count(self) -> int:
        return sum(1 for r in self.records if r.get("status") == "ok" and r.get("unstable"))


# The old name, kept while tfmatrix/compare.py and report/__init__.py (being changed


# -- reading -------------------------------------------------------------------

@dataclass(frozen=True)
class Refused:
    """A file in the cells directory the report could not use, and why (one line naming the file)."""

    path: Path
    reason: str


@dataclass
class Loaded:
    """Every readable cell, in the report's order, and every refused file."""

    cells: list[CellResult]
    refused: list[Refused]


def cells_dir_problem(cells_dir: Path) -> str | None:
    """Why ``cells_dir`` cannot be a cells directory, or None."""
    if cells_dir.is_file():
        return (f"{cells_dir}: is a file, not a directory; pass --cells DIR, the directory that holds the "
                "<cell>.json files (default: reports/cells)")
    if not cells_dir.is_dir():
        return (f"{cells_dir}: no such directory; run cells first (`python -m tfmatrix matrix`, or "
                "`nox -s matrix`) or pass --cells DIR")
    return None


def load_dir(cells_dir: Path) -> Loaded:
    """Every cell file in ``cells_dir`` that can be read, in the report's order; the others as ``Refused``.

    One broken file (truncated by a crash, edited by hand) never costs the
    other cells their report: it is listed with its reason instead. Only a
    directory with no readable cell at all is an error.
    """
    why = cells_dir_problem(cells_dir)
    if why:
        raise UserError(why)
    paths = sorted(p for p in cells_dir.glob("*.json") if not p.name.startswith("."))
    if not paths:
        raise UserError(f"{cells_dir}: no cell results (*.json) to report on; run cells first "
                        "(`python -m tfmatrix matrix`, or `nox -s matrix`)")
    cells: list[CellResult] = []
    refused: list[Refused] = []
    seen: dict[str, Path] = {}
    for p in paths:
        try:
            c = load_file(p)
        except UserError as e:
            refused.append(Refused(p, str(e)))
            continue
        if c.name in seen:
            refused.append(Refused(p, f"{p}: cell {c.name!r} is also in {seen[c.name]}; keep one file per cell"))
            continue
        seen[c.name] = c.path
        cells.append(c)
    if not cells:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise UserError(f"{cells_dir}: none of its {len(paths)} cell files can be read: {refused[0].reason}{more}")
    return Loaded(order_cells(cells), refused)


def order_cells(cells: list[CellResult]) -> list[CellResult]:
    out = sorted(cells, key=CellResult.sort_key)
    for i, c in enumerate(out):
        c.order = i
    return out


def load_file(path: Path) -> CellResult:
    """One cell file, upgraded to the current schema, or a UserError naming the file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or e}")
    except ValueError as e:
        raise UserError(f"{path}: not valid JSON ({str(e).splitlines()[0]}); delete it or re-run the cell")
    if not isinstance(doc, dict):
        raise UserError(f"{path}: not a tfmatrix cell file (a JSON {type(doc).__name__}, not an object)")
    schema = doc.get("schema")
    if schema == RESULTS_SCHEMA:
        _check_shape(doc, RESULTS, path, "")
        doc = wrap_results(doc, path)
    elif schema != CELL_SCHEMA:
        raise UserError(f"{path}: not a tfmatrix cell file (schema {schema!r}, expected {CELL_SCHEMA!r}); "
                        f"move it out of {path.parent}")
    doc = _upgrade(doc, path, "cell file", CELL_SCHEMA_VERSION, _UPGRADES)
    results = doc.get("results")
    if results is not None:
        if not isinstance(results, dict) or results.get("schema") != RESULTS_SCHEMA:
            raise UserError(f"{path}: 'results' is not a {RESULTS_SCHEMA} document; re-run the cell or delete the file")
        results = _upgrade(results, path, "suite results", RESULTS_VERSION, _RESULTS_UPGRADES)
        doc["results"] = results
    _check_shape(doc, CELL, path, "")
    if results is not None and doc.get("status") == "ok":
        problems = validate_results(results)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise UserError(f"{path}: suite results do not match schema {RESULTS_SCHEMA} v{RESULTS_VERSION}: "
                            f"{problems[0]}{more}; re-run the cell")
    return describe(doc, path)


def _check_shape(doc: dict[str, Any], shape: Any, path: Path, where: str) -> None:
    found = problem(doc, shape, where)
    if found:
        raise UserError(f"{path}: {found}; re-run the cell or delete the file")


def _upgrade(doc: dict[str, Any], path: Path, what: str, current: int,
             upgrades: dict[int, Callable[[dict[str, Any]], dict[str, Any]]]) -> dict[str, Any]:
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise UserError(f"{path}: {what} has no integer schema_version (got {version!r}); re-run the cell")
    if version > current:
        raise UserError(f"{path}: {what} schema_version {version} is newer than this tfmatrix reads ({current}); "
                        "update tfmatrix or build the report with the tfmatrix that wrote it")
    while version < current:
        step = upgrades.get(version)
        if step is None:
            oldest = min(upgrades, default=current)
            raise UserError(f"{path}: {what} schema_version {version} is older than this tfmatrix reads "
                            f"({oldest}..{current}); re-run the cell")
        doc = step(doc)
        version += 1
        doc["schema_version"] = version
    return doc


def wrap_results(results: dict[str, Any], path: Path) -> dict[str, Any]:
    """A bare suite results file as a cell document: what the suite knew about its cell."""
    cell = dict(results.get("cell") or {})
    name = cell.get("name") or path.stem
    if name == "local":          # the suite's default --cell: the file name says more
        name = path.stem
    cell["name"] = name
    ok = results.get("status") == "ok"
    return {
        "schema": CELL_SCHEMA,
        "schema_version": CELL_SCHEMA_VERSION,
        "name": name,
        "status": "ok" if ok else "failed",
        "reason": None if ok else results.get("error") or "the suite reported an error",
        "cell": cell,
        "request": {"preset": results.get("preset"), "only": (results.get("config") or {}).get("only") or []},
        "runner": {"name": cell.get("runner") or "suite"},
        "timings": {},
        "host": {},
        "finished": results.get("finished"),
        "log_tail": "",
        "results": results,
    }


# -- metadata --------------------------------------------------------------------

def _text(*values: Any) -> str:
    for v in values:
        if v not in (None, "", [], {}):
            return str(v)
    return ""


def describe(doc: dict[str, Any], path: Path) -> CellResult:
    """Derive a cell's metadata from its document: the matrix's spec first, then what the suite saw."""
    spec = dict(doc.get("cell") or {})
    results = doc.get("results") if isinstance(doc.get("results"), dict) else None
    res = results or {}
    env = dict(res.get("environment") or {})
    tf_facts = dict(env.get("tf") or {})
    host = dict(env.get("host") or {})
    tf_installed = (tf_facts.get("tensorflow") or {}).get("version")
    keras_spec: dict[str, Any] = spec["keras"] if isinstance(spec.get("keras"), dict) else {}
    tfk = (tf_facts.get("keras") or {}).get("tf.keras") or {}
    standalone = (tf_facts.get("keras") or {}).get("keras") or {}
    if standalone.get("version"):
        seen_flavour, seen_version = standalone.get("flavour"), standalone.get("version")
    else:
        seen_flavour, seen_version = tfk.get("flavour"), tfk.get("version")
    py = spec.get("python") or (host.get("python") or {}).get("version") or ""
    py = minor_series(str(py)) if py else ""
    rcell = dict(res.get("cell") or {})
    gpu = dict(res.get("gpu") or {})
    target = _text(spec.get("target"), rcell.get("target"), "gpu" if gpu.get("requested") else "", "cpu")
    request = dict(doc.get("request") or {})
    runner = dict(doc.get("runner") or {})
    name = _text(doc.get("name"), spec.get("name"), path.stem)
    status = _text(doc.get("status"), "failed")
    gpus = [str(g) for g in (gpu.get("visible") or tf_facts.get("gpus_visible") or [])]
    problem = None
    if target == "gpu" and results is not None and tf_facts and (gpu.get("ok") is False or not gpus):
        detail = f" ({tf_facts['gpu_error']})" if tf_facts.get("gpu_error") else ""
        problem = f"GPU cell {name} ran WITHOUT a GPU: TensorFlow saw none{detail}"
    log_tail = doc.get("log_tail") or ""
    if not log_tail and status != "ok":
        log_tail = read_tail(path.with_suffix(".log"))
    return CellResult(
        path=path,
        name=name,
        status=status,
        reason=doc.get("reason"),
        doc=doc,
        results=results,
        tf=_text(spec.get("tf"), spec.get("tf_release"), tf_installed, "?"),
        tf_installed=tf_installed or spec.get("tf_release"),
        tf_git=(tf_facts.get("tensorflow") or {}).get("git_version"),
        keras_flavour=_text(keras_spec.get("flavour"), seen_flavour),
        keras_version=_text(keras_spec.get("version"), seen_version),
        python=py,
        target=target,
        runner=_text(runner.get("name"), rcell.get("runner"), "?"),
        preset=_text(request.get("preset"), res.get("preset"), spec.get("preset"), "?"),
        suite_version=_text(res.get("suite_version"), "?"),
        suite_hash=_text(request.get("suite")),
        finished=_text(doc.get("finished"), res.get("finished")),
        gpus_visible=gpus,
        gpu_problem=problem,
        log_tail=log_tail,
        last_attempt=doc.get("last_attempt") or None,
    )
