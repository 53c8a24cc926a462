"""The report's "When did it change" section: the answers ``tfmatrix bisect`` wrote beside the cells.

``tfmatrix bisect`` writes one JSON file per search into ``<reports>/bisect/``
(``results.history_docs.BisectDoc``, the one definition of its shape, read
by ``history_in``: a file that cannot be read is listed, never fatal); the
report shows each: the answer, every probe with its value and interval, and
the packages that differ at the boundary and, where both were profiled,
where it changed (``history.why``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..results.history_docs import FoundBisect, ProbeDoc


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


def bisect_view(found: FoundBisect) -> BisectView:
    """One answer as the page shows it: its probes with their values in words, the axis named."""
    doc = found.doc
    probes = [dict(asdict(p), shown=_value(p)) for p in doc.probes]
    axis = "TensorFlow" if doc.axis == "tf" else f"Keras on TF {doc.tf}"
    return BisectView(doc.target, doc.label, axis, doc.good, doc.bad, bool(doc.found), doc.answer, probes,
                      doc.packages, doc.notes, found.file, doc.why)
