"""The noise history kept beside a report: ``reports/noise-model.json``, its records, its one reader and writer.

A replicated run measures each variant's noise; ``report`` keeps that
(a ``NoiseModel``) with the runs kept before it, each variant's last
``KEEP_RUNS`` runs that measured it, each run once however often its report
is rebuilt: a ``NoiseHistory``. What the
numbers mean and how runs are pooled is ``analysis.runs.noise_model``'s; this
module is the file: its format (version 2 keeps the runs one by one; a
version 1 file, one run's model, is upgraded to a history of that run),
where it lives, and reading it back for ``compare``, the report and a
sequential run's first look. Version 3 keeps beside each variance the run's
mean log time and that mean's variance within the run, so that ``compare``
can see how far a variant's runs wander beyond their rounds
(``analysis.runs.kept.run_spread``); a version 2 file reads without them.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from .foreign import RESULTS_CAP, read_file
from .formats import Format, upgrade
from .store import write_text_atomic

NOISE_FILE = "noise-model.json"      # <reports>/noise-model.json
KEEP_RUNS = 5           # the runs a history keeps of each variant: the host's noise drifts by days, so old runs leave


def _v1_to_v2(doc: dict[str, Any]) -> dict[str, Any]:
    """One run's variances (version 1) as a history of that one run."""
    source = str(doc.get("source") or "")
    return {"schema": doc["schema"], "schema_version": 1,
            "runs": [{"run": source, "source": source, "variances": doc.get("variances")}]}


def _v2_to_v3(doc: dict[str, Any]) -> dict[str, Any]:
    """Version 2's rows lack the run means: read as they are (``run_spread`` skips a run without them)."""
    return doc


NOISE_FORMAT = Format("tfmatrix.noise-model", 3, {1: _v1_to_v2, 2: _v2_to_v3}, "noise model")


@dataclass(frozen=True)
class NoiseModel:
    """What a replicated run measured about each variant's unit variance, for a later run of one unit a side.

    ``variances``: key (cell, variant id) -> (s2 of one unit's log time, its
    degrees of freedom: moderated). Made from the sides of a replicated run
    (``analysis.runs.noise_model.noise_model_of``, ``from_frame``).
    """

    variances: Mapping[tuple[str, str], tuple[float, float]]
    source: str = ""
    # key -> (the run's mean log time, that mean's variance within the run): what run_spread reads
    means: Mapping[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    # key -> (s2, d) lent where neither the run judged nor ``variances`` knows the variant: the prior shipped with
    # tfmatrix (``analysis.runs.prior``), said as ``lent_source``; in memory only, never written to the file
    lent: Mapping[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    lent_source: str = ""

    def rows(self) -> list[list[Any]]:
        return [[cell, vid, s2, d, *self.means.get((cell, vid), ())]
                for (cell, vid), (s2, d) in sorted(self.variances.items())]

    def only(self, keys: Mapping[tuple[str, str], Any]) -> NoiseModel:
        """This model narrowed to ``keys``."""
        return NoiseModel({k: v for k, v in self.variances.items() if k in keys}, self.source,
                          {k: v for k, v in self.means.items() if k in keys})

    @classmethod
    def from_rows(cls, rows: Any, source: str, where: str) -> NoiseModel:
        """Rows [cell, variant id, variance, d] (version 2), or with [mean, its variance] after them (3)."""
        found, means = {}, {}
        try:
            for row in rows:
                key = (str(row[0]), str(row[1]))
                found[key] = (float(row[2]), float(row[3]))
                if len(row) == 6:
                    means[key] = (float(row[4]), float(row[5]))
                elif len(row) != 4:
                    raise ValueError(len(row))
        except (KeyError, IndexError, TypeError, ValueError):
            raise UserError(f"{where}: variances: expected [cell, variant id, variance, degrees of freedom(, mean, "
                            "its variance)] rows; write the file again with `python -m tfmatrix report`")
        return cls(found, source, means)


@dataclass(frozen=True)
class NoiseHistory:
    """The noise models of the replicated runs on this machine, newest last (the file): of each variant, the last
    ``KEEP_RUNS`` runs that measured its noise."""

    runs: tuple[tuple[str, NoiseModel], ...] = ()

    def with_run(self, run: str, model: NoiseModel) -> NoiseHistory:
        """This history with ``run``'s model (replacing an earlier one of the same run); of each variant only its
        newest ``KEEP_RUNS`` entries stay, and a run left with none goes.

        Per variant, not the last runs as a whole: a variant whose claim line a sequential run decides at round 1
        ran once there and has no variance in that run's model, so "the last five runs" forgot it once five such
        runs had passed, and the next run waited for round 2 on its lines (measured: 93 lines decided at round 1,
        then 20 in the run after the whole-catalogue run left the history).
        """
        newest_first = [(run, model), *((r, m) for r, m in reversed(self.runs) if r != run)]
        seen: dict[tuple[str, str], int] = {}
        kept: list[tuple[str, NoiseModel]] = []
        for r, m in newest_first:
            fresh = {k: v for k, v in m.variances.items() if seen.get(k, 0) < KEEP_RUNS}
            for k in fresh:
                seen[k] = seen.get(k, 0) + 1
            if fresh:
                kept.append((r, m.only(fresh)))
        return NoiseHistory(tuple(reversed(kept)))

    def to_json(self) -> dict[str, Any]:
        return {"schema": NOISE_FORMAT.schema, "schema_version": NOISE_FORMAT.version,
                "runs": [{"run": r, "source": m.source, "variances": m.rows()} for r, m in self.runs]}

    @classmethod
    def from_json(cls, doc: Any, where: str) -> NoiseHistory:
        """A history file, upgraded to this version (a version 1 file reads as a history of its one run)."""
        if not isinstance(doc, dict) or doc.get("schema") != NOISE_FORMAT.schema \
                or doc.get("schema_version") not in range(1, NOISE_FORMAT.version + 1):
            raise UserError(f"{where}: not a tfmatrix noise model (schema {NOISE_FORMAT.schema} "
                            f"v{NOISE_FORMAT.version}); write one with `python -m tfmatrix report` on a run with "
                            "--rounds 2 or more")
        runs = upgrade(doc, NOISE_FORMAT, Path(where)).get("runs")
        if not isinstance(runs, list) or not all(isinstance(r, dict) and "run" in r for r in runs):
            raise UserError(f"{where}: runs: expected a list of {{run, source, variances}}; write the file again "
                            "with `python -m tfmatrix report`")
        return cls(tuple((str(r["run"]), NoiseModel.from_rows(r.get("variances"), str(r.get("source") or ""),
                                                              where)) for r in runs))


def read_noise_history(path: Path) -> NoiseHistory:
    """A noise model file as its history (``UserError`` with the fix when it cannot be read)."""
    try:
        doc = json.loads(read_file(path, RESULTS_CAP, follow=True))
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: cannot read the noise model ({e}); give a file `python -m tfmatrix report` wrote")
    return NoiseHistory.from_json(doc, str(path))


def noise_history_at(reports: Path) -> NoiseHistory:
    """The history kept in ``reports`` (an empty one where none is, or where it cannot be read: it is started anew)."""
    path = reports / NOISE_FILE
    if not path.is_file():
        return NoiseHistory()
    try:
        return read_noise_history(path)
    except UserError:
        return NoiseHistory()


def noise_file_beside(*paths: Path) -> Path | None:
    """The noise model kept beside a result set (``<dir>/../noise-model.json``), the first found."""
    for path in paths:
        where = (path if path.is_dir() else path.parent).parent / NOISE_FILE
        if where.is_file():
            return where
    return None


def write_noise_history(reports: Path, history: NoiseHistory) -> None:
    write_text_atomic(reports / NOISE_FILE, json.dumps(history.to_json(), indent=1) + "\n")
