"""Noise models: what a replicated run measured about each variant's noise, kept for runs of one process.

A comparison of one process a side measures no noise of its own ("not
enough replication"). A replicated run of the same cells did: per variant,
the variance of one round's log time (process effects out, moderated per
benchmark). ``report`` keeps it beside the report (``reports/noise-model.json``)
whenever a run has rounds; ``compare`` uses it for variants with one process
a side on both (``--noise-model``, or the file beside either side's cells).
"""
from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import UserError
from .frame import row_side
from .inference import Contrast, Side
from .moderation import Prior, moderate, remove_process_effects

FILE = "noise-model.json"
FORMAT = "tfmatrix.noise-model"
VERSION = 1


@dataclass(frozen=True)
class NoiseModel:
    """What a replicated run measured about each variant's unit variance, for a later run of one unit a side.

    ``variances``: key (cell, variant id) -> (s2 of one unit's log time, its
    degrees of freedom: moderated). Made from the sides of a replicated run
    (``noise_model_of``, ``from_frame``); ``to_json``/``from_json`` are its file.
    """

    variances: Mapping[tuple[str, str], tuple[float, float]]
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"schema": FORMAT, "schema_version": VERSION, "source": self.source,
                "variances": [[cell, vid, s2, d] for (cell, vid), (s2, d) in sorted(self.variances.items())]}

    @classmethod
    def from_json(cls, doc: Any, where: str) -> NoiseModel:
        if not isinstance(doc, dict) or doc.get("schema") != FORMAT or doc.get("schema_version") != VERSION:
            raise UserError(f"{where}: not a tfmatrix noise model (schema {FORMAT} v{VERSION}); write one with "
                            "`python -m tfmatrix report` on a run with --rounds 2 or more")
        try:
            rows = {(str(c), str(v)): (float(s2), float(d)) for c, v, s2, d in doc["variances"]}
        except (KeyError, TypeError, ValueError):
            raise UserError(f"{where}: variances: expected [cell, variant id, variance, degrees of freedom] rows; "
                            "write the file again with `python -m tfmatrix report`")
        return cls(rows, str(doc.get("source") or where))

    def prior(self, key: tuple[str, str]) -> Prior | None:
        found = self.variances.get(key)
        return Prior(found[0], found[1], f"noise model {self.source}".strip()) if found else None


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
                      source)

def from_frame(df: pd.DataFrame, source: str = "") -> NoiseModel | None:
    """The noise model of a report's frame: every ok variant measured in two rounds or more (None: none was)."""
    if not len(df):
        return None
    sides: dict[tuple[str, str], Side] = {}
    groups: dict[tuple[str, str], Hashable] = {}
    for _, row in df[df["status"] == "ok"].iterrows():
        side = row_side(row, str(row["cell"]))
        if side.n >= 2:
            sides[(str(row["cell"]), str(row["id"]))] = side
            groups[(str(row["cell"]), str(row["id"]))] = (str(row["cell"]), str(row["benchmark"]))
    return noise_model_of(sides, groups, source) if sides else None


def load(path: Path) -> NoiseModel:
    """A noise model file (``UserError`` with the fix when it cannot be read)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: cannot read the noise model ({e}); give a file `python -m tfmatrix report` wrote")
    return NoiseModel.from_json(doc, str(path))


def beside(*paths: Path) -> NoiseModel | None:
    """The noise model kept beside a result set (``<dir>/../noise-model.json``), the first found."""
    for path in paths:
        where = (path if path.is_dir() else path.parent).parent / FILE
        if where.is_file():
            return load(where)
    return None


def annotate(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each ok row's moderated unit variance beside it (``unit_s2``, ``unit_d``; None: one round).

    What the findings and the Claims borrow for window-mates (``pairing``):
    a line of three rounds then rests on what its benchmark's variants
    measured in this run, not on two degrees of freedom of its own.
    """
    if not len(df) or "unit_s2" in df.columns:
        return df
    model = from_frame(df)
    found = model.variances if model is not None else {}
    out = df.copy()
    pairs = [found.get((str(c), str(i))) for c, i in zip(df["cell"], df["id"], strict=True)]
    out["unit_s2"] = [p[0] if p else None for p in pairs]
    out["unit_d"] = [p[1] if p else None for p in pairs]
    return out
