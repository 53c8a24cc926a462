"""Each claim answered in every cell that can hold it: the report's Claims section.

A claim names the configuration its source measured (``tf.keras``, eager,
the tiny model, ...) and, for seed 000's TF1 vs TF2, the exact pair of cells
the seed compared (TF 2.0 + Keras 2.3.1 against TF 1.14 + Keras 2.2.5); its
first configuration that can answer in a cell does. A question (the seeds'
fourteen, ``Claim.is_question``) instead answers at every configuration that
differs only in what it asks about, from every compare that applies. A claim
never aggregates: each configuration is one line, with its own ratio and
interval (a median over configurations can hide a 30x effect behind eleven
unchanged ones).

What a claim is, is ``records.py``; the claims themselves are data
(``files.py``: the built-in families' TOML files, and a user's own).
Pairing, ratios and intervals are ``pairing.pair_rows``,
``moderation.judge`` and ``RatioCI.verdict``. A claim's verdict per line:

* ``holds``: the 95% interval excludes 1 on the side the claim says is
  faster (for a claim that A does *not* help: the whole interval lies above
  1/(1 + its margin), by default ``MARGIN``: A is not faster by more than 10%,
  an equivalence-style margin, so an unclear result is not read as "does not
  help");
* ``reversed``: the same on the other side (A faster by more than the margin);
* ``no clear difference``: the interval includes 1 (or, for "does not help",
  reaches past the margin);
* ``not enough replication``: one process a side, so no interval: the ratio
  is shown, but it decides nothing (not even "the same");
* ``cannot exist here``: the cell lacks a side (an n/a variant, a variant that
  failed), with the reason;
* ``not measured in this run``: a side's variants are not in the cell's
  results at all (a ``--bench`` filter or a user's own selection left them
  out): nothing says the claim cannot exist there.

A question's line says ``A faster`` or ``B faster`` where a claim's says
holds or reversed; the rest reads the same.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from suite.schema import FRAMEWORKS, param_text

from ..cells import CellResult
from ..devices import seed_gpu_note
from ..hardware import same_hardware
from ..runs.noise_model import annotate
from ..statistics.inference import ALPHA, RatioCI
from ..statistics.words import CLEAR, THIN, UNCLEAR, A
from .files import builtin
from .pairing import Comparison, pair_rows, sides_missing
from .records import MARGIN, NOT_A, QUESTION, Claim
from .specs import Compare, in_benchmarks, matches, param_spec

HOLDS, REVERSED, CANNOT = "holds", "reversed", "cannot exist here"     # and UNCLEAR, THIN: ``statistics.words``
A_FASTER, B_FASTER = "A faster", "B faster"                              # a question's clear lines
NOT_MEASURED = "not measured in this run"
VERDICTS = (HOLDS, REVERSED, A_FASTER, B_FASTER, UNCLEAR, THIN, CANNOT, NOT_MEASURED)


@dataclass
class ClaimLine:
    """One configuration of a claim in one cell (pair): the ratio, its interval, the verdict."""

    comparison: Comparison
    verdict: str
    size: str                       # the measured size, from side a's parameters
    standin: str = ""               # why a stand-in configuration answers here
    stopped: str = ""               # a sequential run: why its rounds stopped (``stopping.attach_stops``)

    @property
    def label(self) -> str:
        """What distinguishes this line from the cell's others (the free parameters, a side's own value)."""
        c = self.comparison
        parts = [p for p in (c.a_detail, c.b_detail) if p] + [p for p in [self.size] if p]
        return "; ".join(parts)


@dataclass
class ClaimCell:
    """A claim's answer in one cell (or, for cross-cell claims, one cell against the reference cell)."""

    cell: CellResult
    ref: CellResult | None                # side b's cell when it is another cell
    seed_cell: bool                 # the seed's own cell (pair): the headline
    lines: list[ClaimLine] = field(default_factory=list)
    reason: str = ""                # why the claim cannot exist here (no lines)
    not_measured: bool = False      # no lines because a side's variants are absent from the results (filtered out)
    unpaired: str = ""              # a question's configurations that found no partner here, counted by why

    @property
    def name(self) -> str:
        return self.cell.name if self.ref is None else f"{self.cell.name} vs {self.ref.name}"

    @property
    def empty_verdict(self) -> str:
        """The verdict of a cell without lines: filtered out of this run, or impossible here."""
        return NOT_MEASURED if self.not_measured else CANNOT

    @property
    def target(self) -> str:
        return self.cell.target


@dataclass
class ClaimResult:
    claim: Claim
    cells: list[ClaimCell]
    notes: list[str]

    def headline(self) -> list[ClaimCell]:
        """The seed's own cells first, then the others in report order."""
        return sorted(self.cells, key=lambda c: not c.seed_cell)

    @property
    def measured_targets(self) -> list[str]:
        return sorted({c.target for c in self.cells if c.lines})


def verdict(ci: RatioCI, expect: str, margin: float = MARGIN) -> str:
    """A claim's verdict from a line's interval and the side the claim expects (``NOT_A``: against ``margin``;
    ``QUESTION``: the side that is faster)."""
    word = ci.verdict
    if expect == QUESTION:
        return word if word not in CLEAR else A_FASTER if word == A else B_FASTER
    if expect == NOT_A and word != THIN:    # "not faster by more than margin": the interval against 1 / (1 + margin)
        edge = 1.0 / (1.0 + margin)
        return HOLDS if ci.low > edge else REVERSED if ci.high < edge else UNCLEAR
    return word if word not in CLEAR else HOLDS if word == expect else REVERSED


def size_text(params: Mapping[str, Any], names: tuple[str, ...]) -> str:
    return ", ".join(f"{n}={param_text(params[n])}" for n in names if n in params)


def _where(rows: pd.DataFrame, mask: list[bool]) -> pd.DataFrame:
    """Rows where ``mask`` holds (a plain list of no booleans would select columns instead)."""
    return rows[pd.Series(mask, index=rows.index, dtype=bool)]


def _side_rows(rows: pd.DataFrame, cell: CellResult, spec: Mapping[str, Any]) -> pd.DataFrame:
    mine = _where(rows, [c == cell.name for c in rows["cell"]])
    return _where(mine, [matches(p, spec) for p in mine["params"]])


def _api_of(cell: CellResult) -> str:
    """How a cell runs a Keras 3 model: ``tf.keras`` with TensorFlow, ``keras`` without it."""
    return "tf.keras" if cell.backend == "tensorflow" else "keras"


def _across(cmp: Compare, cell: CellResult, ref: CellResult) -> Compare:
    """A configuration between cells of two backends: each side at its own cell's Keras API, the API left out of the
    pairing key (a TF cell has no ``api=keras`` Keras 3 model, JAX and PyTorch no ``tf.keras``)."""
    return Compare(cmp.benchmarks, param_spec(**cmp.a, api=_api_of(cell)), param_spec(**cmp.b, api=_api_of(ref)))


def answer_cell(claim: Claim, rows: pd.DataFrame, cell: CellResult, ref: CellResult | None,
                seed_cell: bool, alpha: float = ALPHA, paired: bool = True) -> ClaimCell:
    """The claim in one cell (against ``ref`` for cross-cell claims): its seed setup, else a stand-in; a question:
    every setup that applies."""
    out = ClaimCell(cell, ref, seed_cell)
    reasons: list[str] = []
    absent = True                   # every setup lacks a side's rows entirely: filtered out, not impossible
    own_reason = ""                 # why the cell's own framework's setup (JAX, PyTorch) found nothing
    for setup in claim.setups:
        if not setup.applies(cell):
            continue
        cmp = _across(setup.compare, cell, ref) if claim.across and ref is not None else setup.compare
        here = _where(rows, [in_benchmarks(b, cmp.benchmarks) for b in rows["benchmark"]])
        a_rows = _side_rows(here, cell, cmp.a)
        b_rows = _side_rows(here, ref or cell, cmp.b)
        why = sides_missing((claim.a, claim.b), cmp, a_rows, b_rows)
        absent = absent and (not len(a_rows) or not len(b_rows))
        found: list[Comparison] = []
        if not why:
            found, missing = pair_rows((claim.a, claim.b), cmp, a_rows, b_rows, cell, ref or cell, paired)
            why = [f"{r} ({n})" for r, n in missing.most_common(2)] if not found else []
            if found and missing and claim.is_question:
                total = sum(missing.values())
                out.unpaired = "; ".join(p for p in (out.unpaired, f"{total} configuration{'s' * (total != 1)} not "
                                                     f"compared: " + "; ".join(f"{r} ({n})" for r, n in
                                                                                missing.most_common(3))) if p)
            by_id = {str(r["id"]): r["params"] for _, r in a_rows.iterrows()}
            for c in found:
                if alpha != ALPHA:      # a sequential run's looks: the interval its verdict was made on
                    c = dataclasses.replace(c, ci=c.ci.at(1 - alpha))
                out.lines.append(ClaimLine(c, verdict(c.ci, claim.expected(cell.target), claim.margin),
                                           size_text(by_id.get(c.a_id, {}), claim.size), setup.standin))
        if out.lines and not claim.is_question:
            if reasons:
                for line in out.lines:
                    line.standin = f"{line.standin} (the seed's configuration: {reasons[0]})"
            return out
        if not found:
            reasons.append("; ".join(why) or "nothing to pair")
            own_reason = reasons[-1] if cmp.backends else own_reason
    if not out.lines:
        out.reason = own_reason or (reasons[0] if reasons else "no configuration of it applies here")
        out.not_measured = absent
    return out


def _across_pairs(claim: Claim, ran: list[CellResult]) -> tuple[list[tuple[CellResult, CellResult]], list[str]]:
    """``across = "backend"``: each pair of Keras 3 cells of one target and Keras version on two backends, the later
    backend (``FRAMEWORKS`` order) as side a; and a note for each such group that has one backend only."""
    groups: dict[tuple[str, str], list[CellResult]] = {}
    for c in ran:
        if c.backend in FRAMEWORKS and claim.about(c):
            groups.setdefault((c.target, c.keras_version), []).append(c)
    pairs, notes = [], []
    for (target, keras), group in sorted(groups.items(), key=lambda kv: (kv[0][0] != "cpu", kv[0])):
        by_backend = {str(c.backend): c for c in sorted(group, key=lambda c: c.name)}
        if len(by_backend) < 2:
            notes.append(f"{target.upper()}, Keras {keras}: only {', '.join(sorted(by_backend))} ran it; nothing to "
                         "compare.")
            continue
        ordered = [by_backend[b] for b in FRAMEWORKS if b in by_backend]
        pairs += [(a, b) for i, b in enumerate(ordered) for a in ordered[i + 1:]]
    return pairs, notes


def compute_claim(claim: Claim, df: pd.DataFrame, cells: list[CellResult], alpha: float = ALPHA,
                  paired: bool = True) -> ClaimResult:
    """The claim in every cell that can answer it; ``alpha``: each line's test (a sequential run's per look);
    ``paired``: see ``pairing.comparison_cis``."""
    result = ClaimResult(claim, [], [])
    df = annotate(df)
    globs = tuple(g for s in claim.setups for g in s.compare.benchmarks)
    rows = _where(df, [in_benchmarks(b, globs) for b in df["benchmark"]])
    ran = [c for c in cells if c.has_records]
    if claim.across:
        pairs, result.notes = _across_pairs(claim, ran)
        result.cells = [answer_cell(claim, rows, a, b, False, alpha, paired) for a, b in pairs]
        return result
    for target in sorted({c.target for c in ran}, key=lambda t: (t != "cpu", t)):
        here = [c for c in ran if c.target == target and claim.about(c)]
        refs: list[CellResult] = []
        if claim.ref_cell is not None:
            refs = [c for c in ran if c.target == target and claim.ref_cell.matches(c)][::-1]     # the newest first
            if not refs:
                result.notes.append(f"{target.upper()}: no {claim.ref_cell.text()} cell ran, so {claim.a} cannot be "
                                    f"compared with {claim.b} (cells: {', '.join(c.name for c in here)}).")
                continue
        for cell in here:
            ref = same_hardware(cell, refs)          # the reference on this cell's hardware, when it ran there
            if cell is ref:
                continue
            seed = claim.seed_cell is not None and claim.seed_cell.matches(cell)
            result.cells.append(answer_cell(claim, rows, cell, ref, seed, alpha, paired))
        if claim.seed_cell is not None and not any(c.seed_cell for c in result.cells if c.target == target):
            result.notes.append(f"{target.upper()}: no {claim.seed_cell.text()} cell ran (the seed's own); "
                                "the other cells answer below.")
    if "gpu" in claim.seed_device and "gpu" not in result.measured_targets:
        result.notes.append(seed_gpu_note(ran, [c for c in result.cells if c.target == "gpu"]))
    return result


def compute_claims(df: pd.DataFrame, cells: list[CellResult], claims: tuple[Claim, ...] | None = None,
                   alpha: float = ALPHA, paired: bool = True) -> list[ClaimResult]:
    """Every claim of ``claims`` (default: the seeds') answered in ``cells``."""
    df = annotate(df)        # every variant's unit variance, once for all claims
    return [compute_claim(c, df, cells, alpha, paired) for c in (builtin() if claims is None else claims)]
