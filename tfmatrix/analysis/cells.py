"""The report's cells: ``reports/cells/*.json`` read (``documents.read_cell``), each cell's metadata derived, ordered.

Reading, versions and type checks belong to ``tfmatrix.results.documents``; this
module derives what the report shows of a cell (TF, Keras and Python
versions, target, runner, GPU problems) once, from the matrix's spec first
and what the suite saw second, and keeps one broken file from costing the
other cells their report. The cell's facts (what the suite saw of TF, Keras
and the host, the matrix's spec, the runner's notes, the host summary) are
read once into ``facts.CellFacts`` (``CellResult.facts``), and each of its
records (one per benchmark variant) once into a read-only ``Variant``
(``variant.py``): analysis and views read their fields, never the
dictionaries they came from.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.schema import FRAMEWORKS

from ..errors import UserError
from ..results.archive import Archive, archive_dir, digest_of, open_cell_file
from ..results.documents import Attempt, CellDoc, SuiteResults, read_cell
from ..results.foreign import Refused as NotKept
from ..results.store import read_tail
from ..versions import VersionKey, major, minor_series, version_key
from .facts import CellFacts
from .variant import Variant

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
    doc: CellDoc                      # the whole cell document
    results: SuiteResults | None      # the suite's results document, if any
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
    last_attempt: Attempt | None = None   # a later run that failed; these are the results it kept
    image: str = ""                       # the image it ran in ("": none, an existing environment)
    facts: CellFacts = CellFacts()        # the cell's facts, read once: TF, host, spec, runner
    variants: tuple[Variant, ...] = ()    # the suite's records, one per variant, read once

    @property
    def attempt_note(self) -> str | None:
        """ "last attempt failed (interrupted) on <date>, showing the results of <date>", or None."""
        a = self.last_attempt
        if not a:
            return None
        return (f"last attempt {a.status or 'failed'} ({a.reason or 'no reason recorded'}) on "
                f"{a.finished or '?'}, showing the results of {self.finished or '?'}")

    @property
    def has_records(self) -> bool:
        return bool(self.variants)

    def variant(self, vid: str) -> Variant | None:
        """The variant ``vid`` of this cell, or None (not measured here)."""
        return next((v for v in self.variants if v.id == vid), None)

    @property
    def tf_major(self) -> int | None:
        return major(self.tf)

    @property
    def backend(self) -> str | None:
        """Keras 3's backend ("tensorflow", "jax", "torch"); None for a cell without Keras 3."""
        named = self.facts.spec.backend or self.facts.tf.backend
        if named:
            return str(named)
        return "tensorflow" if self.keras_flavour == "keras3" or self.keras_version.startswith("3.") else None

    @property
    def backend_version(self) -> str | None:
        """A jax/torch cell's backend release as installed (its fingerprint's packages), else as the matrix asked."""
        backend = self.backend
        if backend in (None, "tensorflow"):
            return None
        return self.facts.tf.packages.get(str(backend)) or self.facts.spec.backend_version

    @property
    def has_tf(self) -> bool:
        """False for a cell without TensorFlow: Keras 3 on jax/torch, or an existing environment whose fingerprint
        found none (its TF column shows "-", not an unknown "?")."""
        if self.backend not in (None, "tensorflow"):
            return False
        return not (self.facts.tf.reported and not self.facts.tf.version and not self.facts.spec.tf)

    @property
    def label(self) -> str:
        """"TF 2.0 · keras 2.3.1 · py3.7 · cpu": what the cell is, in a column header."""
        parts = [f"TF {self.tf_installed or self.tf}" if self.has_tf
                 else f"no TF, Keras 3 on {self.backend}" if self.backend else "no TF"]
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

    def cpu_flags(self) -> list[str]:
        flags = self.facts.host.cpu.flags
        return [f for f in CPU_FLAGS_SHOWN if flags.get(f)] + sorted(
            f for f, on in flags.items() if on and f not in CPU_FLAGS_SHOWN)

    def unstable_count(self) -> int:
        return sum(1 for v in self.variants if v.ok and v.unstable)

    def ok_count(self) -> int:
        return sum(1 for v in self.variants if v.ok)


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
    return describe(read_cell(path), path)


def previous_kept(reports: Path, archive: Archive, cells: list[CellResult]) -> list[CellResult]:
    """Of each of ``cells``, its run before this one as the run archive in ``reports`` kept it: the newest kept file
    of that cell finished no later than it and not the same file (none where the archive has none, or its file
    cannot be read). The one memory of earlier runs: what ``reports/previous/`` held, read from the archive."""
    out: list[CellResult] = []
    for cell in cells:
        if not cell.has_records:
            continue
        try:
            digest = digest_of(cell.path)
        except OSError:
            continue
        earlier = [r for r in archive.runs if r.cell == cell.name and r.digest != digest
                   and r.finished <= cell.finished]
        if not earlier:
            continue
        run = earlier[-1]           # the archive is oldest first
        try:
            data = open_cell_file(reports, run)
            doc = CellDoc.from_json(json.loads(data.decode("utf-8")), archive_dir(reports) / run.file)
        except (OSError, NotKept, UserError, ValueError):
            continue
        out.append(describe(doc, archive_dir(reports) / run.file))
    return out


# -- metadata --------------------------------------------------------------------

def _text(*values: Any) -> str:
    for v in values:
        if v not in (None, "", [], {}):
            return str(v)
    return ""


def describe(doc: CellDoc, path: Path) -> CellResult:
    """Derive a cell's metadata from its document: the matrix's spec first, then what the suite saw."""
    facts = CellFacts.of(doc)
    spec, tf, host = facts.spec, facts.tf, facts.host
    results = doc.results
    rcell = results.cell if results else {}
    gpu = results.gpu if results else {}
    tf_installed = tf.version
    seen = tf.keras_seen
    py = spec.python or host.python or ""
    py = minor_series(str(py)) if py else ""
    target = _text(spec.target, rcell.get("target"), "gpu" if gpu.get("requested") else "", "cpu")
    name = _text(doc.name, spec.name, path.stem)
    status = _text(doc.status, "failed")
    gpus = [str(g) for g in (gpu.get("visible") or tf.gpus_visible)]
    problem = None
    if target == "gpu" and results is not None and tf.reported and (gpu.get("ok") is False or not gpus):
        detail = f" ({tf.gpu_error})" if tf.gpu_error else ""
        # the framework that looks for the GPU in the cell, by Keras 3 backend (any other: TensorFlow)
        framework = FRAMEWORKS.get(str(spec.backend or tf.backend), FRAMEWORKS["tensorflow"])
        problem = f"GPU cell {name} ran WITHOUT a GPU: {framework} saw none{detail}"
    log_tail = doc.log_tail
    if not log_tail and status != "ok":
        log_tail = read_tail(path.with_suffix(".log"))
    return CellResult(
        path=path,
        name=name,
        status=status,
        reason=doc.reason,
        doc=doc,
        results=results,
        tf=_text(spec.tf, spec.tf_release, tf_installed, "?"),
        tf_installed=tf_installed or spec.tf_release,
        tf_git=tf.git_version,
        keras_flavour=_text(spec.keras.flavour, seen.flavour),
        keras_version=_text(spec.keras.version, seen.version),
        python=py,
        target=target,
        runner=_text(facts.runner.name, rcell.get("runner"), "?"),
        preset=_text(doc.cell_request.preset, results.preset if results else None, spec.preset, "?"),
        suite_version=_text(results.suite_version if results else None, "?"),
        suite_hash=_text(doc.cell_request.suite),
        finished=_text(doc.finished, results.finished if results else None),
        gpus_visible=gpus,
        gpu_problem=problem,
        log_tail=log_tail,
        last_attempt=doc.last_attempt,
        image=_text(facts.runner.image, spec.image, rcell.get("image")),
        facts=facts,
        variants=tuple(Variant.of(r) for r in (results.records if results else []))
        + tuple(Variant.set_aside(why, entry) for why, entry in (results.outside if results else [])),
    )
