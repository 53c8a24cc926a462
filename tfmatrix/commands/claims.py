"""The claims a command runs and judges: the built-in families it asks (``--claims``, ``[matrix] claims``) and the
user's own (the matrix file's ``[[claim]]`` tables, the ``[suite] claims`` files), read once and checked against
the suite's catalogue and the matrix's cells before anything is built.

The user's own are gathered (read and checked) by ``analysis.claims.sources``, where the report gathers them too.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ..analysis.claims.files import builtin as builtin_claims
from ..analysis.claims.records import Claim
from ..analysis.claims.sources import own_claims
from ..matrix import Matrix
from ..matrix.checks import Where, families
from ..matrix.records import ALL_FAMILIES, CLAIM_FAMILIES


def add_claims(p: argparse.ArgumentParser) -> None:
    """``--claims FAMILY[,FAMILY]``: the built-in claim families a run asks (your own claims always run)."""
    p.add_argument("--claims", metavar="FAMILY", default=None,
                   help=f"the built-in claim families to measure and judge: {', '.join(CLAIM_FAMILIES)} or "
                        f"{ALL_FAMILIES}, comma-separated (default: matrix.toml's [matrix] claims, else seeds; "
                        "today: the questions users ask in 2025-26, docs/claims.md); your own [[claim]]s always run")


def asked_families(given: str | None, matrix: Matrix) -> tuple[str, ...]:
    """``--claims`` as given, else matrix.toml's ``[matrix] claims``."""
    if given is None:
        return matrix.settings.claims
    return families(Where("--claims", "value"), "claims", given)


def own_of(claims: Sequence[Claim]) -> tuple[Claim, ...]:
    """The user's claims among ``claims`` (those of no built-in family)."""
    return tuple(c for c in claims if c.family not in CLAIM_FAMILIES)


def claims_of(matrix: Matrix, asked: Sequence[str], bench_paths: Sequence[Path] = ()) -> tuple[Claim, ...]:
    """Every claim a run judges: the built-in families ``asked``, then the user's own."""
    return builtin_claims(asked) + own_claims(matrix, bench_paths)
