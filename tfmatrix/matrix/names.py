"""Cell names: the name the matrix gives a cell, and the short forms people type for it.

Short forms: ``tf2.0-gpu`` for ``tf2.0-keras2.3.1-gpu``. The README and the issues this project grew
from say "run ``tf2.0-gpu``"; the
default matrix names that cell ``tf2.0-keras2.3.1-gpu`` because it pins a
standalone Keras. A short form (the TF part and some of the others, in order;
or the last parts of a name, ``jax-cpu`` for ``keras3-jax-cpu``) resolves when
exactly one cell matches it; when several do, the message lists them; when
none does, it suggests the closest name. Pure functions over cell names: the
CLI turns the answer into a cell.

The given name: the default (``tf{tf}[-{keras}]-{target}``), a ``name`` template, and the pool axis suffix.

Names are the cells' identity everywhere after the matrix: file names in
``reports/cells``, image repositories, ``--only`` globs, the report's
columns. Two cells that differ only in their hardware pool are two cells, so
when ``pool`` is an axis (an array in a ``[[product]]``) the default name ends
in ``-<pool>`` (lowercased: names are Docker repository names), e.g.
``tf2.16-keras3-gpu-h100``. A scalar ``pool`` (or ``[cluster] pool``) leaves
the name alone: there the pool is where the cell runs, not what it compares.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .cell_table import CellTable
from .records import PATTERNS

NAME_FIELDS = ("tf", "release", "keras", "python", "target", "cuda", "cudnn", "backend", "backend_release", "pool",
               "default")
_NAME_FIX = "use 1-63 lowercase letters, digits and . _ - (starting and ending with a letter or digit)"


def resolve_name(t: CellTable, fields: Mapping[str, str], pool_axis: bool = False) -> str:
    """The cell's name from ``name`` (placeholders filled from ``fields``), else the default.

    ``t.limits.pool`` is the cell's resolved pool; with ``pool_axis`` (the pool came from
    an array) the default name gets ``-<pool>``, so each pool's cell has its own.
    """
    where, given, pool = t.where, t.name, t.limits.pool
    fields = {**fields, "pool": (pool or "").lower()}
    if given is None:
        suffixed = pool_axis and pool is not None
        name = fields["default"] + (f"-{fields['pool']}" if suffixed else "")
        if suffixed and not PATTERNS["name"].fullmatch(name):
            raise where.error("pool", f"pool {pool!r} cannot end a cell name ({name!r}), where the pool axis puts it",
                              "rename the pool (letters and digits, single - or _ between them) or give the cells "
                              'a name = "..." template')
    else:
        def sub(m: re.Match[str]) -> str:
            if m.group(1) not in fields:
                raise where.error("name", f"unknown placeholder {{{m.group(1)}}}",
                                  "use " + " ".join(f"{{{f}}}" for f in NAME_FIELDS))
            return fields[m.group(1)]

        name = re.sub(r"\{([^{}]*)\}", sub, given)
    if not PATTERNS["name"].fullmatch(name):
        raise where.error("name", f"{name!r} is not a valid cell name", _NAME_FIX)
    return name


def _parts(name: str) -> list[str]:
    """``2.0-gpu`` -> ["tf2.0", "gpu"]: a leading bare version means the TF release."""
    parts = [p for p in name.strip().lower().split("-") if p]
    if parts and parts[0][:1].isdigit():
        parts[0] = "tf" + parts[0]
    return parts


def matches(short: str, name: str) -> bool:
    """True when ``short`` names ``name``: same TF part first, and every other part of it in ``name``, in order."""
    want, have = _parts(short), _parts(name)
    if not want or not have or want[0] != have[0]:
        return False
    rest = iter(have[1:])
    return all(any(part == h for h in rest) for part in want[1:])


def ends(short: str, name: str) -> bool:
    """True when ``short`` is the trailing parts of ``name``: ``jax-cpu`` for ``keras3-jax-cpu``."""
    want = [p for p in short.strip().lower().split("-") if p]
    have = [p for p in name.strip().lower().split("-") if p]
    return bool(want) and len(want) < len(have) and have[-len(want):] == want


@dataclass(frozen=True)
class Resolution:
    """The cell a typed name means (``name``), or why not (``problem``, one line ending in the fix)."""

    name: str | None
    problem: str | None = None


def resolve(typed: str, names: Sequence[str]) -> Resolution:
    """The one cell name ``typed`` means: itself, or the only cell its short form matches.

    A short form starting with the TF part is matched that way first; only when
    no cell matches so does the short form count as a name's trailing parts.
    """
    if typed in names:
        return Resolution(typed)
    found = [n for n in names if matches(typed, n)] or [n for n in names if ends(typed, n)]
    if len(found) == 1:
        return Resolution(found[0])
    if found:
        return Resolution(None, f"{typed!r} matches {len(found)} cells: {', '.join(found)}; name one of them")
    close = difflib.get_close_matches(typed, list(names), n=1, cutoff=0.5)
    fix = f"did you mean {close[0]!r}?" if close else "cells are: " + ", ".join(names)
    return Resolution(None, f"no cell named {typed!r}; {fix} (`python -m tfmatrix list` shows them all)")
