"""How many cells a matrix file asks for, counted before anything is expanded.

A ``[[product]]`` multiplies: six axes of a few values each are 800 GPU cells,
about a day of benchmarking, and twenty values an axis would not even fit in
memory once expanded into cell records. So the size is counted from the axes
first (combinations as tuples, never as cell records), and a matrix above
``max_cells`` (``[matrix] max_cells``, default 200) is refused with the count,
the axes and how to raise the limit. Products whose ``exclude`` leaves nothing
are reported too: alone they are an error, next to other cells a warning.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_CELLS = 200
# Beyond this many raw combinations a product is refused without counting its
# excludes one by one (counting is cheap per combination, but not 10^8 of them).
HARD_COMBINATIONS = 200_000
# What one cell costs on the quick preset, for the estimate in the refusal
# (execution.ESTIMATE_RUN_S + ESTIMATE_SETUP_S: the measured default matrix).
QUICK_CELL_S = 160.0


def is_axis(key: str, value: Any) -> bool:
    """An array value is an axis; ``pins`` only when it is an array of arrays (one pin list per value)."""
    if key == "pins":
        return isinstance(value, list) and bool(value) and all(isinstance(v, list) for v in value)
    return isinstance(value, list)


@dataclass(frozen=True)
class ProductSize:
    """One product's size: the axes (name, number of values), raw combinations, and cells after exclude/include."""

    index: int
    axes: tuple[tuple[str, int], ...]
    raw: int
    cells: int | None          # None: not counted (raw above HARD_COMBINATIONS)

    def axes_text(self) -> str:
        return " x ".join(f"{name} ({n})" for name, n in self.axes) or "no axes"


def _entries(table: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    value = table.get(kind, [])
    if not isinstance(value, list):
        return []
    return [e for e in value if isinstance(e, dict)]


def product_size(index: int, table: Mapping[str, Any]) -> ProductSize:
    """Count one ``[[product]]``'s cells with its exclude/include rules, without building any cell.

    Malformed tables are counted as well as they can be; ``matrix`` refuses
    them with its own messages afterwards.
    """
    axes = {k: v for k, v in table.items() if k not in ("include", "exclude") and is_axis(k, v)}
    shape = tuple((k, len(v)) for k, v in axes.items())
    raw = math.prod(n for _, n in shape)
    if raw > HARD_COMBINATIONS:
        return ProductSize(index, shape, raw, None)
    keys = list(axes)
    excludes = [e for e in _entries(table, "exclude") if e and all(k in axes for k in e)]
    includes = _entries(table, "include")
    matched = [False] * len(includes)
    count = 0
    for values in itertools.product(*axes.values()):
        combo = dict(zip(keys, values, strict=True))
        if any(all(combo[k] == v for k, v in ex.items()) for ex in excludes):
            continue
        count += 1
        for j, inc in enumerate(includes):
            if not matched[j] and all(k not in combo or combo[k] == v for k, v in inc.items()):
                matched[j] = True
    return ProductSize(index, shape, raw, count + matched.count(False))


def fmt_hours(seconds: float) -> str:
    hours = seconds / 3600
    return f"about {hours:.0f} h" if hours >= 2 else f"about {seconds / 60:.0f} min"


def too_big(file: str, n_cells: int, sizes: Sequence[ProductSize], limit: int) -> str | None:
    """The one-line refusal for a matrix above ``limit`` cells, or None."""
    for s in sizes:
        if s.cells is None:
            return (f"{file}: product[{s.index}]: {s.raw} combinations ({s.axes_text()}) before exclude, far more "
                    f"than max_cells = {limit}; narrow the axes, or split the product into smaller ones")
    total = n_cells + sum(s.cells or 0 for s in sizes)
    if total <= limit:
        return None
    biggest = max(sizes, key=lambda s: s.cells or 0, default=None)
    where = (f"; product[{biggest.index}] alone is {biggest.cells} cells ({biggest.axes_text()})"
             if biggest is not None and biggest.cells else "")
    return (f"{file}: the matrix has {total} cells, more than max_cells = {limit} ({fmt_hours(total * QUICK_CELL_S)} "
            f"on the quick preset){where}; narrow the axes or add exclude entries, or raise the limit with "
            f"[matrix] max_cells = {total}")


def empty_products(file: str, sizes: Sequence[ProductSize]) -> list[str]:
    """A line for each product whose exclude removes every combination (and no include adds one)."""
    return [f"{file}: product[{s.index}]: its exclude removes every one of its {s.raw} combinations "
            f"({s.axes_text()}), so it adds no cells; remove or narrow an exclude entry, or delete the product"
            for s in sizes if s.cells == 0]
