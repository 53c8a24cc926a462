"""What a side of a question is: benchmark globs and parameter values (``Compare``, ``ParamSpec``, ``matches``).

The language the claims and questions (``records.py``, written as TOML:
``files.py``, the built-in ones in ``tfmatrix/data/``) and the charts
(``chart_data.py``) are written in. Everything in the report that depends on
benchmark or parameter names is in those tables: the claims and questions
files, and ``CHARTS`` beside its ``Chart`` model. When the catalogue
changes (``python -m suite list`` shows the parameter names in each variant
id), adjust them there and nowhere else; ``tests/test_contracts.py`` checks
every name against the catalogue. How a side is paired with the other
(ratios, intervals) is in ``pairing.py``.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from suite.schema import param_text

ParamSpec = Mapping[str, "str | tuple[str, ...]"]


class OnBackend(Protocol):
    """A cell as ``Compare.applies`` sees it: its Keras 3 backend (None: a cell without Keras 3, TensorFlow's)."""

    @property
    def backend(self) -> str | None: ...


def param_spec(**params: str | tuple[str, ...]) -> ParamSpec:
    return MappingProxyType(dict(params))


@dataclass(frozen=True)
class Compare:
    """Where a claim looks: benchmarks (globs) and the parameter values that make each side."""

    benchmarks: tuple[str, ...]
    a: ParamSpec
    b: ParamSpec
    backends: tuple[str, ...] = ()      # only cells on these frameworks ("tensorflow", "jax", "torch"); () every cell

    def applies(self, cell: OnBackend) -> bool:
        return not self.backends or (cell.backend or "tensorflow") in self.backends


def matches(params: Mapping[str, Any], spec: ParamSpec) -> bool:
    """A record's parameters have the values ``spec`` asks for (tuples: any of them)."""
    for name, want in spec.items():
        if name not in params:
            return False
        allowed = want if isinstance(want, tuple) else (want,)
        if param_text(params[name]) not in allowed:
            return False
    return True


def in_benchmarks(benchmark: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(benchmark, g) for g in globs)


def spec_text(spec: ParamSpec) -> str:
    return ", ".join(f"{k}={'|'.join(v) if isinstance(v, tuple) else v}" for k, v in spec.items())
