"""A user's claims checked before anything is built: against the suite's catalogue, then the matrix's cells.

``check_names``: every benchmark glob, parameter and value a claim's sides
name is one the catalogue has (the variant ids' spelling). ``check_runnable``:
some cell of the matrix can run both sides of one of its configurations (the
framework decides that: tf.keras needs TensorFlow, ``api=backend`` is JAX's
or PyTorch's). Each problem is one line naming the file, the claim and the
key, with the fix (``UserError``: exit code 2). The catalogue and which
framework has which variant come from the suite (``commands.claims``
gathers them); here they are plain records and a function.
"""
from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from suite.schema import FRAMEWORKS, param_text

from .files import Where, suggest
from .records import CellLike, Claim
from .specs import ParamSpec, in_benchmarks, matches


@dataclass(frozen=True)
class Entry:
    """One variant of the suite's catalogue, as a claim's sides name it."""

    benchmark: str
    id: str
    params: Mapping[str, Any]       # every parameter, api and mode included


def _names_problem(benchmarks: tuple[str, ...], spec: ParamSpec, side: str, entries: Sequence[Entry]) -> str:
    """Why ``spec`` names nothing in ``entries`` (the benchmarks' variants): the first unknown name or value."""
    for name, want in spec.items():
        values = {param_text(e.params[name]) for e in entries if name in e.params}
        if not values:
            known = sorted({k for e in entries for k in e.params})
            return (f"side {side}: {', '.join(benchmarks)} has no parameter {name!r}; "
                    + suggest(name, known).replace("known keys", "its parameters are"))
        for value in (want if isinstance(want, tuple) else (want,)):
            if value not in values:
                return (f"side {side}: no variant of {', '.join(benchmarks)} has {name}={value}; its values: "
                        + ", ".join(sorted(values)))
    if not any(matches(e.params, spec) for e in entries):
        return f"side {side}: no variant of {', '.join(benchmarks)} has all of these values together"
    return ""


def check_names(claim: Claim, entries: Sequence[Entry], file: str) -> None:
    """Every benchmark glob, parameter name and value of ``claim`` is one the catalogue has (``UserError``)."""
    where = Where(file, f"claim {claim.key!r}")
    for i, setup in enumerate(claim.setups):
        cmp = setup.compare
        mine = [e for e in entries if in_benchmarks(e.benchmark, cmp.benchmarks)]
        if not mine:
            names = sorted({e.benchmark for e in entries})
            close = difflib.get_close_matches(cmp.benchmarks[0], names, n=1, cutoff=0.5)
            raise where.error("compare", f"compare[{i}]: no benchmark is named {', '.join(cmp.benchmarks)}",
                              f"did you mean {close[0]}?" if close else "list them: python -m suite list")
        for side, spec in (("a", cmp.a), ("b", cmp.b)):
            problem = _names_problem(cmp.benchmarks, spec, side, mine)
            if problem:
                raise where.error("compare", f"compare[{i}]: {problem}",
                                  "write the values as `python -m suite list` shows them in variant ids")
        known = {k for e in mine for k in e.params}
        for name in claim.size:
            if name not in known:
                raise where.error("size_params", f"{name!r} is not a parameter of {', '.join(cmp.benchmarks)}",
                                  "name parameters that state the measured size, or leave size_params out")


Outside = Callable[[CellLike, Entry], "str | None"]
"""Why a cell's framework has no such variant (``suite.frameworks.outside``: tf.keras on JAX, api=backend on TF),
or None."""


def check_runnable(claim: Claim, entries: Sequence[Entry], cells: Sequence[CellLike], outside: Outside,
                   file: str) -> None:
    """Some cell of the matrix can run both sides of one of ``claim``'s configurations (``UserError`` else).

    Only the framework decides here (what a cell of TF, of Keras 3 on JAX or
    PyTorch has); whether a variant is n/a in one release is the run's to
    find, and the report says it per cell.
    """
    where = Where(file, f"claim {claim.key!r}")
    a_cells = [c for c in cells if claim.about(c)]
    if not a_cells:
        about = claim.cells.text() if claim.cells is not None else "any cell"
        raise where.error("cells", f"no cell of the matrix is one it is about ({about})",
                          "add such a cell, or widen cells")
    reasons: list[str] = []

    def runs(mine: Sequence[Entry], spec: ParamSpec, cell: CellLike) -> str | None:
        """None when some variant of ``spec`` among ``mine`` runs in ``cell``, else why not."""
        why = [outside(cell, e) for e in mine if matches(e.params, spec)]
        return None if any(w is None for w in why) else (why[0] if why else "no such variant")

    for setup in claim.setups:
        cmp = setup.compare
        mine = [e for e in entries if in_benchmarks(e.benchmark, cmp.benchmarks)]
        here = [c for c in a_cells if setup.applies(c)]
        refs = [c for c in cells if claim.ref_cell is not None and claim.ref_cell.matches(c) and setup.applies(c)]
        for cell in here:
            why_a = runs(mine, cmp.a, cell)
            if claim.ref_cell is not None:
                ok_b = [r for r in refs if r.name != cell.name and runs(mine, cmp.b, r) is None]
                why_b = None if ok_b else (f"no {claim.ref_cell.text()} cell runs it" if not refs
                                           else runs(mine, cmp.b, refs[0]) or "its only cell is side a's")
            else:
                why_b = runs(mine, cmp.b, cell)
            if why_a is None and why_b is None:
                return
            reasons.append(f"{cell.name}: side {'a' if why_a else 'b'}: {why_a or why_b}")
        if not here:
            reasons.append("no cell on " + " or ".join(FRAMEWORKS.get(b, b) for b in cmp.backends))
    raise where.error("compare", "no cell of the matrix can run both sides of any configuration ("
                      + "; ".join(dict.fromkeys(reasons)) + ")", "compare variants these cells have, or add a cell")
