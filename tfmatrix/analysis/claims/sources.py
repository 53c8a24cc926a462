"""The user's own claims gathered from a matrix: read (``claims.files``) and checked against the suite's catalogue and
the matrix's cells (``checks``), before anything is built and again where a report judges them.

What the checks need from the suite (its catalogue, with the user's benchmark
files, and which framework has which variant: ``suite.frameworks.outside``)
is gathered here (``Catalogue``). A report reads the user's claims from the
matrix file it is given (``own_claims``), so that a claim added after the run
is judged on the cells that ran.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ...matrix import Cell, Matrix, display_path
from ...matrix.records import CLAIM_FAMILIES
from ...versions import major
from .checks import Entry, check_names, check_runnable
from .files import OWN, parse_document, parse_tables, questions, read_toml
from .files import builtin as builtin_claims
from .records import Claim

ClaimSource: TypeAlias = Matrix     # what the user's claims are gathered from: a loaded matrix file


@dataclass(frozen=True)
class CellView:
    """A matrix cell as a claim sees it before anything ran (``records.CellLike``): its TF, Keras, backend."""

    name: str
    tf: str
    keras_version: str
    backend: str | None
    existing: bool          # an environment as it is: what it holds is known only once it ran

    @property
    def tf_major(self) -> int | None:
        return major(self.tf) if self.tf else None


def cell_view(cell: Cell) -> CellView:
    """What ``cell`` will be: its Keras version (a bundled tf.keras is Keras 2, its TF's own), its Keras 3 backend."""
    flavour, version = cell.keras.flavour, cell.keras.version or ""
    if flavour == "keras3":
        return CellView(cell.name, cell.tf, version or "3", cell.backend, cell.existing)
    return CellView(cell.name, cell.tf, version or ("2" if cell.tf and not cell.tf.startswith("1.") else ""), None,
                    cell.existing)


class Catalogue:
    """The suite's variants at every preset, with the user's benchmark files: what a claim's sides can name."""

    def __init__(self, bench_paths: Sequence[Path] = ()) -> None:
        from suite.definitions import PRESETS
        from suite.plugins import load_plugins
        from suite.registry import load_benchmarks

        benchmarks = load_benchmarks() + (load_plugins(os.pathsep.join(map(str, bench_paths))) if bench_paths
                                          else [])
        self.broken = [b.name for b in benchmarks if b.name.endswith(".import") and b.seed == "user"]
        self._found: dict[str, tuple[Any, Any]] = {}
        for preset in PRESETS.values():
            for bench in benchmarks:
                for v in bench.variants(preset):
                    self._found.setdefault(v.id, (v, bench))
        self.entries = [Entry(v.benchmark, vid, v.as_dict() | {"api": v.api, "mode": v.mode})
                        for vid, (v, _) in self._found.items()]

    def outside(self, cell: Any, entry: Entry) -> str | None:
        """Why ``cell``'s framework has no such variant (``suite.frameworks.outside``), or None (an existing
        environment: unknown until it ran)."""
        from suite.frameworks import outside

        if getattr(cell, "existing", False):
            return None
        variant, bench = self._found[entry.id]
        facts = {"backend": {"name": cell.backend}} if cell.backend not in (None, "tensorflow") else {}
        return outside(facts, variant, bench)


def own_claims(matrix: Matrix, bench_paths: Sequence[Path] = ()) -> tuple[Claim, ...]:
    """The user's claims (the matrix file's ``[[claim]]`` tables, then each ``[suite] claims`` file's), checked.

    Their keys are unique among themselves and the built-in ones (the seeds' questions' too); each names
    benchmarks, parameters and values the catalogue has, and some cell of the
    matrix can run both sides of one of its configurations (``UserError`` else).
    """
    taken = [c.key for c in builtin_claims(CLAIM_FAMILIES) + questions()]
    file = display_path(matrix.path)
    found: list[tuple[str, Claim]] = [(file, c) for c in parse_tables(list(matrix.claim_tables), file, OWN, taken)]
    for path in matrix.settings.claim_files:
        shown = display_path(path)
        _, claims = parse_document(read_toml(path, shown), shown, taken=taken + [c.key for _, c in found])
        found += [(shown, c) for c in claims]
    if not found:
        return ()
    catalogue = Catalogue(bench_paths or matrix.settings.bench_paths)
    cells = [cell_view(c) for c in matrix.cells]
    for where, claim in found:
        try:
            check_names(claim, catalogue.entries, where)
        except Exception as exc:
            if catalogue.broken:        # a benchmark file that could not be listed here may be the one named
                raise type(exc)(f"{exc} (could not list on this host: {', '.join(catalogue.broken)})") from None
            raise
        check_runnable(claim, catalogue.entries, cells, catalogue.outside, where)
    return tuple(c for _, c in found)
