"""``[[product]]`` tables -> raw cell values, GitHub Actions style (axes, exclude, include).

Pure and table-free: what comes out is still unvalidated cell values with their origin;
``resolve.resolve_cell`` checks them against the release table. Sizes are counted
before this runs (``tfmatrix.matrix.size``), so a huge product is refused first.
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from .checks import Where, check_keys
from .records import CELL_KEYS, PRODUCT_KEYS
from .size import is_axis as _is_axis


def _fmt_value(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def expand_product(file: str, index: int, table: Mapping[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """One ``[[product]]`` -> [(cell values, origin)], with GitHub Actions include/exclude semantics."""
    where = Where(file, f"product[{index}]")
    check_keys(where, table, PRODUCT_KEYS, "product")
    axes: dict[str, list[Any]] = {}
    scalars: dict[str, Any] = {}
    for key, value in table.items():
        if key in ("include", "exclude"):
            continue
        if _is_axis(key, value):
            if not value:
                raise where.error(key, "an axis needs at least one value", f"give {key} one or more values")
            axes[key] = list(value)
        else:
            scalars[key] = value

    def entries(kind: str) -> list[dict[str, Any]]:
        value = table.get(kind, [])
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
            raise where.error(kind, f"{kind} must be an array of tables", f"write {kind} = [ {{ tf = \"2.9\" }} ]")
        for j, entry in enumerate(value):
            w = Where(file, f"product[{index}] {kind}[{j}]")
            check_keys(w, entry, CELL_KEYS, "cell")
            if not entry:
                raise w.error(None, f"an empty {kind} entry matches everything", "give it at least one key")
            if kind == "exclude":
                for key in entry:
                    if key not in axes:
                        axis_list = ", ".join(axes) or "none"
                        raise w.error(key, f"'{key}' is not an axis of this product (axes: {axis_list})",
                                      "exclude can only match axis values")
        return value

    excludes, includes = entries("exclude"), entries("include")
    combos = [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]
    combos = [c for c in combos if not any(all(c.get(k) == v for k, v in ex.items()) for ex in excludes)]
    extras: list[dict[str, Any]] = [{} for _ in combos]
    added: list[tuple[dict[str, Any], str]] = []
    for j, inc in enumerate(includes):
        matched = False
        for combo, extra in zip(combos, extras, strict=True):
            if all(k not in combo or combo[k] == v for k, v in inc.items()):
                extra.update({k: v for k, v in inc.items() if k not in combo})
                matched = True
        if not matched:
            added.append(({**scalars, **inc}, f"product[{index}] include[{j}]"))
    out = []
    for combo, extra in zip(combos, extras, strict=True):
        label = ",".join(f"{k}={_fmt_value(v)}" for k, v in combo.items())
        out.append(({**scalars, **extra, **combo}, f"product[{index}] {label}".rstrip()))
    return out + added

