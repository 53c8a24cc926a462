"""A cell's name: the default (``tf{tf}[-{keras}]-{target}``), a ``name`` template, and the pool axis suffix.

Names are the cells' identity everywhere after the matrix: file names in
``reports/cells``, image repositories, ``--only`` globs, the report's
columns. Two cells that differ only in their hardware pool are two cells, so
when ``pool`` is an axis (an array in a ``[[product]]``) the default name ends
in ``-<pool>`` (lowercased: names are Docker repository names), e.g.
``tf2.16-keras3-gpu-h100``. A scalar ``pool`` (or ``[cluster] pool``) leaves
the name alone: there the pool is where the cell runs, not what it compares.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .checks import _get_str, _Where
from .records import PATTERNS

NAME_FIELDS = ("tf", "release", "keras", "python", "target", "cuda", "cudnn", "backend", "pool", "default")
_NAME_FIX = "use 1-63 lowercase letters, digits and . _ - (starting and ending with a letter or digit)"


def resolve_name(where: _Where, values: Mapping[str, Any], fields: Mapping[str, str], pool: str | None,
                 pool_axis: bool = False) -> str:
    """The cell's name from ``name`` (placeholders filled from ``fields``), else the default.

    ``pool`` is the cell's resolved pool; with ``pool_axis`` (the pool came from
    an array) the default name gets ``-<pool>``, so each pool's cell has its own.
    """
    fields = {**fields, "pool": (pool or "").lower()}
    given = _get_str(where, values, "name", fields["default"])
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
