"""The report's "When did it change" section: the answers ``tfmatrix bisect`` wrote beside the cells.

``tfmatrix bisect`` writes one JSON file per search into ``<reports>/bisect/``
(``results.history_docs.BisectDoc``, the one definition of its shape); the
report shows each: the answer, every probe with its value and interval, and
the packages that differ at the boundary and, where both were profiled,
where it changed (``history.why``). A file that cannot be read is
listed, never fatal.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..results.history_docs import BISECT_DIR, BisectDoc, ProbeDoc


@dataclass
class BisectView:
    key: str
    label: str
    axis: str
    good: str
    bad: str
    found: bool
    answer: str
    probes: list[dict[str, Any]] = field(default_factory=list)
    packages: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    file: str = ""
    why: list[str] = field(default_factory=list)


def _value(p: ProbeDoc) -> str:
    if p.value is None or p.low is None or p.high is None:      # a probe that measured nothing
        return ""
    if p.unit == "s":
        return "%.4g s [%.4g, %.4g]" % (p.value, p.low, p.high)
    return "%.3gx [%.3g, %.3g]" % (p.value, p.low, p.high)


def load_bisections(out_dir: Path) -> tuple[list[BisectView], list[str]]:
    """Every answer in ``out_dir/bisect/*.json`` (newest first), and the files that could not be read."""
    views, bad = [], []
    files = sorted((out_dir / BISECT_DIR).glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in files:
        try:
            doc = BisectDoc.from_json(json.loads(path.read_text(encoding="utf-8")), path)
            probes = [dict(asdict(p), shown=_value(p)) for p in doc.probes]
            axis = "TensorFlow" if doc.axis == "tf" else f"Keras on TF {doc.tf}"
            views.append(BisectView(doc.target, doc.label, axis, doc.good, doc.bad, bool(doc.found), doc.answer,
                                    probes, doc.packages, doc.notes, f"{BISECT_DIR}/{path.name}", doc.why))
        except (OSError, ValueError, UserError) as exc:
            bad.append(f"{BISECT_DIR}/{path.name}: {type(exc).__name__}: {exc}")
    return views, bad
