"""Every run kept: ``<reports>/runs/``, each complete cell file of every run, and one index of what they hold.

A pair of runs resolves little on a shared machine; a series of them shows a
step that persists apart from a stray process (``analysis.series``). So the
report keeps every complete cell file it is built from, as it was written
(gzipped: a cell file is mostly repeated keys), once however often the report
is rebuilt (its name carries its digest), and writes beside them one index
(``runs/index.json``) with what a series reads of each: its cell, run, date,
testbed, host reference, request digest, each variant's run mean and each
claim line's verdict. Reading a series then reads one small file, not every
cell file again (asv's ``results/<machine>/`` plus its benchmarks index, in
one directory per reports directory).

The archive has a size budget (``BUDGET_MB``, ``TFMATRIX_ARCHIVE_MB``): past
it, the oldest kept files go first, never a cell's newest. What the numbers
mean is ``analysis.series``'s; this module is the files: their layout, their
one record (``KeptRun``), reading and writing them atomically.
"""
from __future__ import annotations

import datetime
import gzip
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import UserError
from .foreign import CELL_FILE_CAP, INDEX_CAP, Refused, gunzip, read_file, read_under, unlink_under
from .formats import Format, upgrade
from .store import write_bytes_atomic, write_text_atomic

ARCHIVE_DIR = "runs"            # <reports>/runs/
INDEX_FILE = "index.json"       # <reports>/runs/index.json
BUDGET_MB = 500                 # the archive's default size budget (ten default runs take a few MB)
ARCHIVE_FORMAT = Format("tfmatrix.run-archive", 1, {}, "run archive index")


@dataclass(frozen=True)
class Testbed:
    """What makes two machines' numbers comparable (Bencher's testbed): CPU model and count, memory, GPUs, OS.

    Numbers are compared only within one testbed; ``key`` names it in files and the published site.
    """

    cpu: str = "?"
    cpus: str = "?"
    memory_gib: str = "?"
    gpus: tuple[str, ...] = ()
    os: str = "?"

    @property
    def key(self) -> str:
        text = json.dumps([self.cpu, self.cpus, self.memory_gib, list(self.gpus), self.os])
        return "tb-" + hashlib.sha256(text.encode()).hexdigest()[:10]

    def text(self) -> str:
        gpus = ", ".join(self.gpus) if self.gpus else "no GPU"
        return f"{self.cpu}, {self.cpus} CPUs, {self.memory_gib} GiB, {gpus}, {self.os}"

    def to_json(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "cpus": self.cpus, "memory_gib": self.memory_gib, "gpus": list(self.gpus),
                "os": self.os}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Testbed:
        return cls(str(doc["cpu"]), str(doc["cpus"]), str(doc["memory_gib"]), tuple(str(g) for g in doc["gpus"]),
                   str(doc["os"]))


@dataclass(frozen=True)
class KeptRun:
    """One kept cell file: one run of one cell, and what a series reads of it.

    ``means``: per variant id, the run mean of its per-round log times and
    that mean's variance within the run (NaN: one round); ``rounds``: per
    variant id, the processes its mean rests on (absent: a file kept before
    they were); ``lines``: per claim
    line (its key), the verdict the report gave it in this run; ``values``:
    per claim line, its ratio, its interval as the report gave it (95%, or
    98.75% in sequential rounds) and its log ratio's variance (NaN: not
    replicated; absent: a file kept before values were); ``variances``: per
    variant id measured in two rounds or more, one round's variance of its log
    time as the run's noise model measured it (its processes' shared effects
    out, moderated across its benchmark) and that variance's degrees of
    freedom: what a later run's looks, its report and ``compare`` borrow
    (``analysis.runs.noise_model.history_of``; absent: a file kept before
    they were).
    """

    cell: str
    run: str
    finished: str
    digest: str                     # the cell file's sha256, short: one entry per file however often kept
    testbed: Testbed
    request: str                    # the cell's request, hashed: the same benchmarks, preset, rounds, user files
    host_reference_s: float | None
    means: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    lines: Mapping[str, str] = field(default_factory=dict)
    file: str = ""                  # under runs/; "" until written
    bytes: int = 0
    code: str = ""                  # the measured code, hashed (the suite's source, the user's benchmark files)
    values: Mapping[str, tuple[float, float, float, float]] = field(default_factory=dict)
    rounds: Mapping[str, int] = field(default_factory=dict)
    variances: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"cell": self.cell, "run": self.run, "finished": self.finished, "digest": self.digest,
                "testbed": self.testbed.to_json(), "request": self.request,
                "host_reference_s": self.host_reference_s,
                "means": {k: [_num(m), _num(v)] for k, (m, v) in sorted(self.means.items())},
                "lines": dict(sorted(self.lines.items())), "file": self.file, "bytes": self.bytes,
                "code": self.code,
                "values": {k: [_num(x) for x in v] for k, v in sorted(self.values.items())},
                "rounds": dict(sorted(self.rounds.items())),
                "variances": {k: [s2, d] for k, (s2, d) in sorted(self.variances.items())}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> KeptRun:
        ref = doc.get("host_reference_s")
        return cls(str(doc["cell"]), str(doc["run"]), str(doc["finished"]), str(doc["digest"]),
                   Testbed.from_json(doc["testbed"]), str(doc["request"]), None if ref is None else float(ref),
                   {str(k): (_float(m), _float(v)) for k, (m, v) in doc["means"].items()},
                   {str(k): str(v) for k, v in doc["lines"].items()}, str(doc["file"]), int(doc["bytes"]),
                   str(doc.get("code") or ""),
                   {str(k): (_float(r), _float(lo), _float(hi), _float(var))
                    for k, (r, lo, hi, var) in (doc.get("values") or {}).items()},
                   {str(k): int(n) for k, n in (doc.get("rounds") or {}).items()},
                   {str(k): (float(s2), float(d)) for k, (s2, d) in (doc.get("variances") or {}).items()})


def _num(x: float) -> float | None:
    return None if x != x else x        # NaN as null: JSON has no NaN


def _float(x: Any) -> float:
    return float("nan") if x is None else float(x)


@dataclass(frozen=True)
class Archive:
    """The kept runs of one reports directory (oldest first), and those this report adds (``pending``: each with the
    cell file it copies), written by ``save``; ``skipped``: one line for each index entry or file left out (an
    entry that names a file outside ``runs/``, a file that is a link or does not match its digest ...)."""

    runs: tuple[KeptRun, ...] = ()
    pending: tuple[tuple[KeptRun, Path], ...] = ()
    skipped: tuple[str, ...] = ()

    def has(self, digest: str) -> bool:
        return any(r.digest == digest for r in self.runs)

    def adding(self, found: Sequence[tuple[KeptRun, Path]]) -> Archive:
        """This archive with the cell files not kept yet (by digest) added, in memory: ``save`` writes them."""
        new = [(r, p) for r, p in found if not self.has(r.digest)]
        return Archive(tuple(sorted((*self.runs, *(r for r, _ in new)), key=_order)), (*self.pending, *new),
                       self.skipped)

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.runs)


def _order(run: KeptRun) -> tuple[str, str]:
    return (run.finished, run.cell)


def digest_of(path: Path) -> str:
    return _digest(path.read_bytes())


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def archive_dir(reports_dir: Path) -> Path:
    return Path(reports_dir) / ARCHIVE_DIR


# -- the names of kept files: made here from checked parts, and checked again where an index names them ---------

DIGEST = re.compile(r"[0-9a-f]{16}")
# what ``kept_name`` makes: <cell>/<date>-<digest>.json.gz
KEPT_NAME = re.compile(r"(?P<cell>[A-Za-z0-9_-][A-Za-z0-9._-]{0,127})/(?P<stamp>[0-9A-Za-z-]{0,17})-"
                       r"(?P<digest>[0-9a-f]{16})\.json\.gz")


def cell_dir(cell: str) -> str:
    """The folder a cell's kept files go in: its name with anything but letters, digits and ``._-`` as ``_``, never
    starting with a dot (a cell file names its cell as it likes: ``..`` is not a folder to write in)."""
    safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_" for ch in cell)[:128]
    return ("_" + safe[1:] if safe.startswith(".") else safe) or "cell"


def stamp(finished: str) -> str:
    """The date in a kept file's name, parsed from the cell file's ``finished`` ("2026-11-28T160603"); "undated"
    where it is not a date."""
    try:
        return datetime.datetime.fromisoformat(finished).strftime("%Y-%m-%dT%H%M%S")
    except (ValueError, TypeError):
        return "undated"


def kept_name(run: KeptRun) -> str:
    """Where ``save`` writes a run under ``runs/``: made only of checked parts."""
    if not DIGEST.fullmatch(run.digest):
        raise Refused(f"digest {run.digest!r} is not 16 hex digits")
    return f"{cell_dir(run.cell)}/{stamp(run.finished)}-{run.digest}.json.gz"


def entry_problem(run: KeptRun) -> str | None:
    """Why an index entry cannot be used (None: it can): its file must be a name ``save`` itself writes, in its
    cell's folder, carrying its digest; so it resolves inside ``runs/`` whatever the entry says."""
    if not DIGEST.fullmatch(run.digest):
        return f"its digest {run.digest!r} is not 16 hex digits"
    m = KEPT_NAME.fullmatch(run.file)
    if m is None:
        return f"its file {run.file!r} is not a name the archive writes (<cell>/<date>-<digest>.json.gz)"
    if m["cell"] != cell_dir(run.cell) or m["digest"] != run.digest:
        return f"its file {run.file!r} does not carry its cell {run.cell!r} and digest {run.digest}"
    return None


def read_archive(reports_dir: Path) -> Archive:
    """The archive beside a report (empty where there is none yet); a broken index is one line with the fix; an
    entry that cannot be used is left out, with one line in ``skipped`` naming the folder, the entry and why."""
    path = archive_dir(reports_dir) / INDEX_FILE
    if not path.exists() and not path.is_symlink():
        return Archive()
    try:
        doc = json.loads(read_file(path, INDEX_CAP))
        if not isinstance(doc, dict) or doc.get("schema") != ARCHIVE_FORMAT.schema:
            raise ValueError(f"schema {doc.get('schema') if isinstance(doc, dict) else None!r}")
        doc = upgrade(doc, ARCHIVE_FORMAT, path)
        entries = doc["runs"]
        if not isinstance(entries, list):
            raise ValueError("its runs are not a list")
    except UserError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise UserError(f"{path}: cannot read the run archive's index ({e}); move {path.parent} away to start a "
                        "new archive (its cell files stay readable as cell files)") from None
    runs, skipped = [], []
    for n, entry in enumerate(entries):
        try:
            run = KeptRun.from_json(entry)
            why = entry_problem(run)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            why, run = f"not a kept run ({type(e).__name__}: {e})", None
        if why is None and run is not None:
            runs.append(run)
        else:
            skipped.append(f"{path.parent}: index entry {n + 1}{_named(entry)}: {why}; skipped")
    return Archive(tuple(sorted(runs, key=_order)), skipped=tuple(skipped))


def _named(entry: Any) -> str:
    """An index entry's cell and date as its warning names them (its own text, shortened and made printable)."""
    if not isinstance(entry, dict):
        return ""
    said = " ".join(str(entry.get(k, ""))[:40] for k in ("cell", "finished")).strip()
    return f" ({said.encode('unicode_escape').decode('ascii')})" if said else ""


def budget_bytes() -> int:
    """The archive's size budget: ``TFMATRIX_ARCHIVE_MB`` (a positive number), else ``BUDGET_MB``."""
    text = os.environ.get("TFMATRIX_ARCHIVE_MB")
    if text is None:
        return BUDGET_MB * 10**6
    try:
        mb = float(text)
        if not mb > 0:
            raise ValueError
    except ValueError:
        raise UserError(f"TFMATRIX_ARCHIVE_MB={text!r}: expected a positive number of megabytes, e.g. 500") from None
    return int(mb * 10**6)


def within_budget(runs: Sequence[KeptRun], budget: int) -> tuple[list[KeptRun], list[KeptRun]]:
    """(kept, dropped): the oldest files go first until the rest fit ``budget`` bytes; a cell's newest stays."""
    newest = {r.cell: r.digest for r in sorted(runs, key=_order)}
    kept, total = list(runs), sum(r.bytes for r in runs)
    dropped: list[KeptRun] = []
    for r in sorted(runs, key=_order):
        if total <= budget:
            break
        if newest[r.cell] == r.digest:
            continue
        kept.remove(r)
        dropped.append(r)
        total -= r.bytes
    return kept, dropped


def save(reports_dir: Path, archive: Archive, budget: int | None = None) -> Archive:
    """Write ``archive.pending`` (each cell file gzipped, then the index, each atomically) and prune to the budget.

    The index is written after the files it names, so an interrupted save
    leaves at worst a file the index does not name (written again next time),
    never an index naming a file that is not there. A cell file that cannot be
    kept is left out with a line in ``skipped`` (kept by a later report, once
    it can be); the others are kept all the same.
    """
    root = archive_dir(reports_dir)
    written: dict[str, KeptRun] = {}
    skipped = list(archive.skipped)
    for run, source in archive.pending:
        try:
            name = kept_name(run)
            data = gzip.compress(read_file(source, CELL_FILE_CAP), mtime=0)
            write_bytes_atomic(root / name, data)
        except (OSError, Refused) as e:
            skipped.append(f"{source}: not kept in {root} ({e})")
            continue
        written[run.digest] = replace(run, file=name, bytes=len(data))
    if not written and not archive.runs:
        return Archive(skipped=tuple(skipped))
    runs = [written.get(r.digest, r) for r in archive.runs if r.file or r.digest in written]
    kept, dropped = within_budget(runs, budget_bytes() if budget is None else budget)
    if written or dropped:
        _write_index(root, kept)
    for r in dropped:
        try:
            unlink_under(root, r.file)
        except (OSError, Refused) as e:
            skipped.append(f"{root}: {r.file}: not removed past the budget ({e})")
    return Archive(tuple(kept), skipped=tuple(skipped))


def copy_runs(found: Sequence[tuple[KeptRun, Path]], reports_dir: Path) -> Archive:
    """A new archive in ``reports_dir`` holding ``found`` (each kept run with the reports directory it is kept in):
    their files copied as they are, then the index (``publish``: one testbed's runs from many machines). A file
    that cannot be read as its entry says (a link, too large, not gzip, bytes that do not match its digest) is
    left out, with one line in ``skipped``."""
    root = archive_dir(reports_dir)
    runs, skipped = [], []
    for run, source in found:
        try:
            data = read_under(archive_dir(source), run.file, CELL_FILE_CAP)
            _check(data, run)
        except (OSError, Refused) as e:
            skipped.append(f"{archive_dir(source)}: {run.file}: {e}; skipped")
            continue
        write_bytes_atomic(root / kept_name(run), data)
        runs.append(replace(run, file=kept_name(run), bytes=len(data)))
    archive = Archive(tuple(sorted(runs, key=_order)), skipped=tuple(skipped))
    if runs:
        _write_index(root, archive.runs)
    return archive


def _write_index(root: Path, runs: Sequence[KeptRun]) -> None:
    doc = {"schema": ARCHIVE_FORMAT.schema, "schema_version": ARCHIVE_FORMAT.version,
           "runs": [r.to_json() for r in runs]}
    write_text_atomic(root / INDEX_FILE, json.dumps(doc, separators=(",", ":"), allow_nan=False) + "\n")


def open_cell_file(reports_dir: Path, run: KeptRun) -> bytes:
    """The kept cell file's bytes, as it was written: read without following links and inflated with a cap, its
    digest checked (``Refused`` otherwise)."""
    return _check(read_under(archive_dir(reports_dir), run.file, CELL_FILE_CAP), run)


def _check(data: bytes, run: KeptRun) -> bytes:
    """The cell file inside a kept file's ``data``, when it is the one its entry names (by digest)."""
    cell_file = gunzip(data, CELL_FILE_CAP)
    if _digest(cell_file) != run.digest:
        raise Refused(f"its bytes do not match the entry's digest {run.digest}")
    return cell_file
