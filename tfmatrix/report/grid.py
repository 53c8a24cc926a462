"""The verdict grid that opens the report: claims down, cells across, one coloured square each.

"Does the seed's claim hold, and where?" in one glance: a row per claim (its
words shortened), a column per cell that ran, the columns grouped by family
(TF 1.x, TF 2.x with Keras 2, tf_keras, Keras 3 on TF, Keras 3 on JAX or
PyTorch), each square coloured by the claim's verdict there and showing the
ratio. A square whose claim cannot exist in that cell (or was filtered out of
this run) is blank, with the reason on hover. Pure functions from
``ClaimResult`` records; the detail below the grid is ``claims_view``'s.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis.cells import CellResult
from ..analysis.claims.answers import HOLDS, REVERSED, ClaimCell, ClaimResult
from ..analysis.claims.files import family_labels
from ..analysis.statistics.words import THIN, UNCLEAR
from .claims_view import VERDICT_CLASS
from .tables import fmt_interval

FAMILIES: tuple[tuple[str, str], ...] = (
    ("tf1", "TF 1.x"),
    ("tf2", "TF 2.x + Keras 2"),
    ("tf_keras", "tf_keras"),
    ("keras3-tf", "Keras 3 on TF"),
    ("keras3-other", "Keras 3 on JAX / PyTorch"),
)
MIXED = "mixed"


def family(cell: CellResult) -> str:
    """The family a cell's column sits in (the keys of ``FAMILIES``)."""
    backend = cell.backend
    if backend not in (None, "tensorflow"):
        return "keras3-other"
    if backend == "tensorflow":
        return "keras3-tf"
    if cell.keras_flavour == "tf_keras":
        return "tf_keras"
    return "tf1" if cell.tf_major == 1 else "tf2"


def head(cell: CellResult) -> str:
    """A column's header, a few characters wide: the TF minor (Keras 3's minor, or its backend); the name on hover."""
    fam = family(cell)
    if fam == "keras3-other":
        text = cell.backend or "?"
    elif fam == "keras3-tf":
        text = "K" + ".".join(cell.keras_version.split(".")[:2])
    else:
        text = ".".join((cell.tf_installed or cell.tf).split(".")[:2])
    return text + (" GPU" if cell.target == "gpu" else "")


def short_claim(text: str, limit: int = 48) -> str:
    """The claim's sentence cut at a word boundary to fit one grid row (the full text is on hover)."""
    text = text.rstrip(".")
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


@dataclass(frozen=True)
class Square:
    verdict: str                    # a claim verdict, MIXED, or "" (this cell does not take part in the claim)
    text: str                       # what the square shows: "24x", "1.1–3.4x", ""
    title: str                      # the hover: every line, or why it cannot exist

    @property
    def css(self) -> str:
        return "mixed" if self.verdict == MIXED else VERDICT_CLASS.get(self.verdict, "none")


def _ratio_text(ratios: list[float]) -> str:
    low, high = min(ratios), max(ratios)
    return f"{low:.2g}×" if f"{low:.2g}" == f"{high:.2g}" else f"{low:.2g}–{high:.2g}×"


def square(claim_cell: ClaimCell | None, why_absent: str = "") -> Square:
    """One claim in one cell: the lines' verdict when they agree (else MIXED) and their ratio or range."""
    if claim_cell is None:
        return Square("", "", why_absent)
    if not claim_cell.lines:
        verdict = claim_cell.empty_verdict
        return Square(verdict, "", f"{claim_cell.name}: {verdict}: {claim_cell.reason}")
    verdicts = {line.verdict for line in claim_cell.lines}
    verdict = verdicts.pop() if len(verdicts) == 1 else MIXED
    tips = [f"{claim_cell.name}{' (the seed’s cell)' if claim_cell.seed_cell else ''}"]
    for line in claim_cell.lines:
        ci = line.comparison.ci
        where = "; ".join(p for p in (line.comparison.config, line.standin) if p)
        tips.append(f"{ci.ratio:.3g} [{fmt_interval(ci, ', ')}] {line.verdict}{': ' + where if where else ''}")
    return Square(verdict, _ratio_text([line.comparison.ci.ratio for line in claim_cell.lines]), "\n".join(tips))


def columns(cells: list[CellResult]) -> list[dict[str, Any]]:
    """The cells that ran, grouped by family in ``FAMILIES`` order, report order within a family."""
    ran = [c for c in cells if c.has_records]
    groups: list[dict[str, Any]] = []
    for key, label in FAMILIES:
        mine = [c for c in ran if family(c) == key]
        if mine:
            groups.append({"key": key, "label": label, "cells": mine})
    return groups


def family_heads(claims: list[ClaimResult]) -> dict[str, str]:
    """Claim key -> the heading of the family it opens (the seeds', today's questions, your own), when the page
    shows more than one family; none for a page of one family."""
    labels = family_labels(r.claim for r in claims)
    if len(labels) < 2:
        return {}
    out: dict[str, str] = {}
    for result in claims:
        if result.claim.family in labels:
            out[result.claim.key] = labels.pop(result.claim.family)
    return out


def grid_view(claims: list[ClaimResult], cells: list[CellResult]) -> dict[str, Any] | None:
    """The grid as the template renders it; None when no cell ran (nothing to show)."""
    groups = columns(cells)
    if not groups:
        return None
    order = [c for g in groups for c in g["cells"]]
    rows: list[dict[str, Any]] = []
    heads = family_heads(claims)
    for result in claims:
        by_cell = {cc.cell.name: cc for cc in result.cells}
        refs = {cc.ref.name for cc in result.cells if cc.ref is not None}
        squares: list[dict[str, Any]] = []
        for cell in order:
            absent = ("the reference cell: the others are compared with it" if cell.name in refs
                      else "outside this claim (another TF major version or target)")
            here = by_cell.get(cell.name)
            sq = square(here, absent)
            squares.append({"cell": cell.name, "verdict": sq.verdict, "css": sq.css, "text": sq.text,
                            "title": sq.title, "seed_cell": bool(here and here.seed_cell)})
        rows.append({"key": result.claim.key, "anchor": "claim-" + result.claim.key, "seed": result.claim.seed,
                     "short": short_claim(result.claim.claim), "claim": result.claim.claim, "squares": squares,
                     "family_head": heads.get(result.claim.key, "")})
    measured = any(sq["verdict"] in (HOLDS, REVERSED, UNCLEAR, THIN, MIXED) for r in rows for sq in r["squares"])
    return {"groups": [{"label": g["label"], "span": len(g["cells"])} for g in groups],
            "cells": [{"name": c.name, "label": c.label, "head": head(c)} for c in order],
            "rows": rows, "measured": measured}
