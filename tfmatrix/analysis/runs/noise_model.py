"""Noise models: what replicated runs measured about each variant's noise, kept and pooled over runs.

A comparison of one process a side measures no noise of its own ("not
enough replication"). A replicated run of the same cells did: per variant,
the variance of one round's log time (process effects out, moderated per
benchmark). The run archive (``results.archive``, ``reports/runs/``) keeps it
with each run's cell (``KeptRun.variances``): the one memory of earlier runs.
Here it is made (``from_frame``), read back as the history of the last runs of
each variant (``history_of``, ``history_at``) and pooled (``pooled``). What it
knows serves three readers: ``compare`` for variants with one process a side
on both (the archive beside either side); the report's Claims (and questions),
whose lines borrow it where this run has few rounds (``annotate``); and a
sequential run's first look, which can decide a large effect after one round
on a warm machine (``analysis.stopping``). A run never borrows its own
variances from the history (``pooled(history, without=...)``): a prior must be
independent of the data it judges.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import UserError
from ...results.archive import INDEX_FILE, KeptRun, archive_dir, read_archive
from ..cells import CellResult
from ..frame import row_side
from ..statistics.inference import Contrast, Side
from ..statistics.moderation import Prior, moderate, remove_process_effects
from .control import reference_side

CONTROL = "~control"    # the variant id a cell's containers' reference workload goes by beside its variants

MAX_D = 12.0            # the most degrees of freedom pooled runs lend a variance: a history is a prior, not a
#                         known value (a noisier day than the kept runs must still widen the interval)


KEEP_RUNS = 5           # the runs a history keeps of each variant: the host's noise drifts by days, so old runs leave


@dataclass(frozen=True)
class NoiseModel:
    """What a replicated run measured about each variant's unit variance, for a later run of one unit a side.

    ``variances``: key (cell, variant id) -> (s2 of one unit's log time, its
    degrees of freedom: moderated). Made from the sides of a replicated run
    (``noise_model_of``, ``from_frame``) or read back from the archive (``history_of``).
    """

    variances: Mapping[tuple[str, str], tuple[float, float]]
    source: str = ""
    # key -> (the run's mean log time, that mean's variance within the run): what run_spread reads
    means: Mapping[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    # key -> (s2, d) lent where neither the run judged nor ``variances`` knows the variant: the prior shipped with
    # tfmatrix (``analysis.runs.prior``), said as ``lent_source``; in memory only, never kept
    lent: Mapping[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    lent_source: str = ""

    def only(self, keys: Mapping[tuple[str, str], Any]) -> NoiseModel:
        """This model narrowed to ``keys``."""
        return NoiseModel({k: v for k, v in self.variances.items() if k in keys}, self.source,
                          {k: v for k, v in self.means.items() if k in keys})

    def of_cell(self, cell: str) -> dict[str, tuple[float, float]]:
        """One cell's variances by variant id: what its ``KeptRun`` keeps."""
        return {vid: v for (c, vid), v in self.variances.items() if c == cell}


@dataclass(frozen=True)
class NoiseHistory:
    """The noise models of the replicated runs on this machine, newest last: of each variant, the last
    ``KEEP_RUNS`` runs that measured its noise (``history_of`` reads it from the archive)."""

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


def history_of(runs: Sequence[KeptRun]) -> NoiseHistory:
    """The noise history the archive's kept runs make (oldest first, as the archive orders them): each run's cells'
    variances as one model, its variants' run means beside them (those of two rounds or more), and of each variant
    its newest ``KEEP_RUNS`` runs."""
    by_run: dict[str, list[KeptRun]] = {}
    for kept in runs:
        by_run.setdefault(kept.run, []).append(kept)
    history = NoiseHistory()
    for run, cells in by_run.items():
        variances = {(k.cell, vid): v for k in cells for vid, v in k.variances.items()}
        if variances:
            means = {(k.cell, vid): m for k in cells for vid, m in k.means.items() if k.rounds.get(vid, 0) >= 2}
            history = history.with_run(run, NoiseModel(variances, run, means))
    return history


def history_at(reports: Path) -> NoiseHistory:
    """The noise history of the archive in ``reports`` (empty where there is none, or its index cannot be read: the
    report that reads it next says why)."""
    try:
        return history_of(read_archive(reports).runs)
    except UserError:
        return NoiseHistory()


def history_beside(*paths: Path) -> tuple[NoiseHistory, Path] | None:
    """The noise history of the archive kept beside a result set (``<dir>/../runs``), the first found, and where
    (None: none beside any; ``UserError`` with the fix where its index cannot be read)."""
    for path in paths:
        reports = (path if path.is_dir() else path.parent).parent
        if (archive_dir(reports) / INDEX_FILE).is_file():
            return history_of(read_archive(reports).runs), archive_dir(reports)
    return None


def prior(model: NoiseModel, key: tuple[str, str]) -> Prior | None:
    """What ``model`` knows of one variant's unit variance, as a prior for its comparison (None: nothing)."""
    found = model.variances.get(key)
    return Prior(found[0], found[1], f"noise model {model.source}".strip()) if found else None


def pool(models: Iterable[NoiseModel], source: str = "", max_d: float = MAX_D) -> NoiseModel:
    """One model from several runs': per variant, the variances weighted by their degrees of freedom, those summed
    (at most ``max_d``)."""
    ss: dict[tuple[str, str], float] = {}
    dd: dict[tuple[str, str], float] = {}
    for m in models:
        for key, (s2, d) in m.variances.items():
            if d > 0 and math.isfinite(s2):
                ss[key] = ss.get(key, 0.0) + d * s2
                dd[key] = dd.get(key, 0.0) + d
    return NoiseModel({k: (ss[k] / dd[k], min(dd[k], max_d)) for k in ss}, source)


def pooled(history: NoiseHistory, without: Iterable[str] = ()) -> NoiseModel | None:
    """Every kept run's variances pooled, but those of the runs ``without`` (None: nothing left)."""
    skip = set(without)
    models = [m for r, m in history.runs if r not in skip]
    if not models:
        return None
    return pool(models, f"({len(models)} earlier run{'s' * (len(models) != 1)})")


def unit_variance(sides: Iterable[Side]) -> tuple[float, float]:
    """The pooled variance of one unit's log time over ``sides`` of one variant, and its degrees of freedom."""
    ss, d = 0.0, 0
    for s in sides:
        if s.n >= 2:
            ss += float(np.sum((np.asarray(s.logs) - s.mean) ** 2))
            d += s.n - 1
    return (ss / d if d else math.nan), float(d)


def noise_model_of(sides: Mapping[tuple[str, str], Side], groups: Mapping[tuple[str, str], Hashable],
                   source: str = "") -> NoiseModel:
    """Per variant, its moderated unit variance, its processes' shared effects taken out.

    A comparison of one process a side has those effects in it; they are
    shared by the variants of its processes, so normalising per family
    (``judge`` with ``families``) takes them out there too.
    """
    keys = [k for k, s in sides.items() if s.n >= 2]
    cleaned = remove_process_effects([sides[k] for k in keys])
    raw = [unit_variance([s]) for s in cleaned]
    cs: list[Contrast | None] = [Contrast(0.0, s2, d, 1.0, 0, 0, False) for s2, d in raw]
    shrunk = moderate(cs, [groups[k] for k in keys])
    return NoiseModel({k: (c.s2, c.d) for k, c in zip(keys, shrunk, strict=True) if c is not None and c.replicated},
                      source, {k: run_mean(sides[k]) for k in keys})


def run_mean(side: Side) -> tuple[float, float]:
    """A side's mean log time over its rounds, and that mean's variance as its rounds estimate it (NaN with one):
    one run's point for ``kept.run_spread``."""
    return side.mean, (float(np.var(side.logs, ddof=1)) / side.n if side.n >= 2 else math.nan)

def from_frame(df: pd.DataFrame, source: str = "", cells: Iterable[CellResult] = ()) -> NoiseModel | None:
    """The noise model of a report's frame: every ok variant measured in two rounds or more (None: none was).

    ``cells``: the frame's cells; each one's containers' reference workload
    (two rounds or more) joins as the variant ``CONTROL``, so that a later
    ``compare --normalise control`` sees how far a cell's move strays from it
    (``kept.run_spread``).
    """
    if not len(df):
        return None
    sides: dict[tuple[str, str], Side] = {}
    groups: dict[tuple[str, str], Hashable] = {}
    for _, row in df[df["status"] == "ok"].iterrows():
        side = row_side(row, str(row["cell"]))
        if side.n >= 2:
            sides[(str(row["cell"]), str(row["id"]))] = side
            groups[(str(row["cell"]), str(row["id"]))] = (str(row["cell"]), str(row["benchmark"]))
    if not sides:
        return None
    for cell in cells:
        control = reference_side(cell, cell.name)
        if control is not None and control.n >= 2:
            sides[(cell.name, CONTROL)] = control
            groups[(cell.name, CONTROL)] = (cell.name, CONTROL)
    return noise_model_of(sides, groups, source)


def run_ids(cells: Iterable[CellResult]) -> list[str]:
    """The runs a report's cells came from, as the archive names them: the interleaved runs' ids (a sequential
    schedule's cells: their finish times), so a rebuilt report adds its run once."""
    ids = set()
    for c in cells:
        if c.results is None:       # a skipped cell's file is written anew each run: it names no run
            continue
        schedule = c.results.config.get("schedule")
        run = schedule.get("run") if isinstance(schedule, dict) else None
        ids.add(str(run or c.finished or c.name))
    return sorted(i for i in ids if i)


def run_of(cells: Iterable[CellResult]) -> str:
    """The run a report's cells came from, as one name (``run_ids`` joined; a single cell's: its ``KeptRun.run``)."""
    return "+".join(run_ids(cells)) or "unnamed run"


def annotate(df: pd.DataFrame, history: NoiseModel | None = None) -> pd.DataFrame:
    """``df`` with each ok row's unit variance beside it (``unit_s2``, ``unit_d``, ``unit_src``; None: unknown).

    What the Claims borrow for window-mates (``pairing``):
    a line of three rounds then rests on what its benchmark's variants
    measured in this run (moderated), pooled with what earlier runs on this
    machine measured of the same variant (``history``: a ``NoiseHistory``
    pooled without this run), not on two degrees of freedom of its own; a
    line of one round, on the history alone.
    """
    if not len(df) or "unit_s2" in df.columns:
        return df
    model = from_frame(df)
    found = model.variances if model is not None else {}
    earlier = history.variances if history is not None else {}
    lent = history.lent if history is not None else {}
    out = df.copy()
    s2s: list[float | None] = []
    ds: list[float | None] = []
    srcs: list[str | None] = []
    for c, i in zip(df["cell"], df["id"], strict=True):
        key = (str(c), str(i))
        now, then = found.get(key), earlier.get(key)
        parts = [p for p in (now, then) if p is not None]
        if not parts and key in lent:       # the last resort: the shipped prior (``prior``), wider than measured
            s2s.append(lent[key][0])
            ds.append(lent[key][1])
            srcs.append(history.lent_source if history is not None else None)
            continue
        if not parts:
            s2s.append(None)
            ds.append(None)
            srcs.append(None)
            continue
        d = sum(p[1] for p in parts)
        s2s.append(sum(p[0] * p[1] for p in parts) / d)
        ds.append(d)
        where = history.source if history is not None else ""
        srcs.append("its benchmark in this run" if then is None else f"noise model {where}".strip() if now is None
                    else f"this run and the noise model {where}".strip())
    out["unit_s2"] = s2s
    out["unit_d"] = ds
    out["unit_src"] = srcs
    return out
