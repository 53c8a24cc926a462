"""The benchmark catalogue: loads the built-in benchmarks and the plugin files, lists and selects variants.

What a benchmark, variant and preset are lives in ``suite.definitions``;
``suite.plugins`` loads user files. Imports run one way: definitions <-
plugins <- registry. Listing variants never imports TensorFlow, so
``python -m suite list`` works on any host.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import importlib
import pkgutil
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .definitions import Benchmark, Preset, Variant
from .plugins import from_environment
from .schema import setting_target


def load_benchmarks(lead: str = "") -> List[Benchmark]:
    """Every ``Benchmark`` in ``suite.benchmarks.*.BENCHMARKS``, then in plugin files.

    Plugin files and directories (``$TFMATRIX_SUITE_PLUGINS``, separated by
    ``os.pathsep``) add benchmarks without editing the suite: a user's own
    (``suite.api``, ``[suite] paths`` in matrix.toml) and the tests' faults.
    ``suite.plugins`` loads them; a file that fails to import becomes one
    variant that records the error. ``lead``: the side of an ``ab`` run whose
    file is imported first (``plugins.load_plugins``).
    """
    from . import benchmarks as pkg

    found: List[Benchmark] = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module("%s.%s" % (pkg.__name__, info.name))
        found.extend(getattr(module, "BENCHMARKS", []))
    found.extend(from_environment(lead))
    names = [b.name for b in found]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RuntimeError("duplicate benchmark names: %s" % ", ".join(dupes))
    return found


def benchmark_by_name(benchmarks: Sequence[Benchmark]) -> Dict[str, Benchmark]:
    return {b.name: b for b in benchmarks}


def matches(variant: Variant, pattern: str) -> bool:
    """A glob (``training.*``) matches the id or benchmark; plain text is a substring."""
    if any(c in pattern for c in "*?"):
        return fnmatch.fnmatchcase(variant.id, pattern) or fnmatch.fnmatchcase(variant.benchmark, pattern)
    return pattern in variant.id


def select(variants: Sequence[Variant], patterns: Sequence[str]) -> List[Variant]:
    """Variants matching any of ``patterns`` (all when none), and those marked ``always`` (a broken user file)."""
    if not patterns:
        return list(variants)
    return [v for v in variants if v.always or any(matches(v, p) for p in patterns)]


def with_values(variants: Sequence[Variant], values: Sequence[Tuple[str, Any]]) -> List[Variant]:
    """The variants with these parameters set to other values (a sweep's sizes: ``n=300``).

    ``NAME[I]`` sets element I of a shape (``batch_shape[0]=64``: the batch).
    Only a variant that has the parameter (and the element) changes; its id
    changes with it, so a record never passes for the preset's own size.
    """
    if not values:
        return list(variants)
    whole: Dict[str, Any] = {}
    parts: Dict[str, Dict[int, Any]] = {}
    for k, x in values:
        name, index = setting_target(k) or (k, None)
        if index is None:
            whole[name] = x
        else:
            parts.setdefault(name, {})[index] = x
    out = []
    for v in variants:
        params = tuple((k, _set_parts(whole.get(k, x), parts.get(k, {}))) for k, x in v.params)
        out.append(dataclasses.replace(v, params=params) if params != v.params else v)
    return out


def _set_parts(value: Any, parts: Dict[int, Any]) -> Any:
    """``value`` (a shape tuple) with the elements ``parts`` names set; anything else as it is."""
    if not parts or not isinstance(value, (tuple, list)):
        return value
    return type(value)(parts.get(i, x) for i, x in enumerate(value))


def parse_value(text: str) -> Any:
    """``300`` -> 300, ``0.5`` -> 0.5, anything else stays text: the types presets write."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def all_variants(preset: Preset, benchmarks: Optional[Sequence[Benchmark]] = None) -> List[Variant]:
    out: List[Variant] = []
    for b in benchmarks if benchmarks is not None else load_benchmarks():
        out.extend(b.variants(preset))
    out = with_values(out, preset.values)
    ids = [v.id for v in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise RuntimeError("duplicate variant ids: %s" % ", ".join(dupes[:5]))
    return out
