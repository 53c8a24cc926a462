"""What in a variant's parameters is its size, and what its code path (shared by the catalogue tests)."""
from __future__ import annotations

from typing import Any

from suite.definitions import Variant

# Parameters that scale work; every other parameter (with mode and api) names a code path.
SIZE_PARAMS = {"batch_shape", "width", "input_shape", "n", "a_shape", "b_shape", "batches"}


def code_path(v: Variant) -> tuple[Any, ...]:
    return (v.benchmark,) + tuple((k, val) for k, val in v.params if k not in SIZE_PARAMS)


def volume(value: Any) -> float:
    """A size as one number: a shape's element count, a scalar as is."""
    if isinstance(value, (tuple, list)):
        out = 1.0
        for x in value:
            out *= x
        return out
    return float(value)
