"""Cell names as people type them: ``tf2.0-gpu`` for ``tf2.0-keras2.3.1-gpu``.

The README and the issues this project grew from say "run ``tf2.0-gpu``"; the
default matrix names that cell ``tf2.0-keras2.3.1-gpu`` because it pins a
standalone Keras. A short form (the TF part and some of the others, in order;
or the last parts of a name, ``jax-cpu`` for ``keras3-jax-cpu``) resolves when
exactly one cell matches it; when several do, the message lists them; when
none does, it suggests the closest name. Pure functions over cell names: the
CLI turns the answer into a cell.
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass


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
