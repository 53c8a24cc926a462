"""Benchmark files from outside the suite: ``$TFMATRIX_SUITE_PLUGINS``, a user's own benchmarks.

The variable lists files or directories (``os.pathsep`` between them); a
directory contributes every ``*.py`` in it whose name does not start with
``_``, in name order, and goes on ``sys.path`` so its files can import
helper modules beside them. Each file's ``BENCHMARKS`` list is added to the
catalogue.

A file that cannot be imported (a syntax error, a missing package, an
exception at import time) or whose benchmarks cannot list their variants
never costs the cell its other results: it becomes one variant,
``<file>.import[file=<name>]``, whose build raises ``PluginError`` with the
original traceback, so the run records an ``error`` with that traceback's
tail and goes on. That variant is selected whatever ``--only`` filter the run
has (``Variant.always``): a filter naming the file's benchmarks must not hide
why they are missing. The parent process and every worker load the files the
same way, so the placeholder has the same id in both.

An entry ``SIDE=FILE`` (``tfmatrix ab``) is one version of a file: each
version is imported as its own module, and their benchmarks are paired by
name into one benchmark per name (``suite.sides``).
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
from typing import Any, List, Tuple

from .definitions import PRESETS, Benchmark, Preset, Variant
from .schema import PLUGINS_ENV, SIDE_PATTERN
from .sides import pair_up

TRACEBACK_LINES = 20


class PluginError(Exception):
    """A user benchmark file failed to import, or its benchmarks to list their variants."""


def plugin_paths(value: str) -> List[str]:
    """The ``.py`` files named by ``value`` (files and directories, ``os.pathsep`` between them)."""
    files: List[str] = []
    for entry in filter(None, value.split(os.pathsep)):
        if os.path.isdir(entry):
            files.extend(os.path.join(entry, n) for n in sorted(os.listdir(entry))
                         if n.endswith(".py") and not n.startswith("_"))
        else:
            files.append(entry)
    return files


def _directories(value: str) -> List[str]:
    return [os.path.abspath(e) for e in filter(None, value.split(os.pathsep)) if os.path.isdir(e)]


def _tail(text: str) -> str:
    return "\n".join(text.rstrip().splitlines()[-TRACEBACK_LINES:])


class BrokenFile(Benchmark):
    """Stands in for a benchmark file that failed: one variant, whose build raises the original error."""

    seed = "user"

    def __init__(self, path: str, what: str, error_text: str) -> None:
        stem = os.path.splitext(os.path.basename(path))[0]
        self.name = "%s.import" % stem
        self.title = "user benchmark file %s" % os.path.basename(path)
        self.path = path
        last = [ln for ln in error_text.strip().splitlines() if ln.strip()][-1:] or ["unknown error"]
        self.message = "%s %s: %s\n%s" % (os.path.basename(path), what, last[0].strip(), _tail(error_text))

    def variants(self, preset: Preset) -> List[Variant]:
        # always selected: a --bench/--only filter meant for this file's benchmarks must not hide why they are missing
        return [Variant(self.name, self.seed, (("file", os.path.basename(self.path)),), mode="eager", api="tf",
                        always=True)]

    def prepare(self, variant: Variant, env: Any) -> Any:
        raise PluginError(self.message)


def _import(path: str, side: str = "") -> Any:
    stem = os.path.splitext(os.path.basename(path))[0]
    name = "suite_plugin_%s%s" % (side + "_" if side else "", stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError("cannot load benchmark file %s (not a Python file?)" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # dataclasses and pickling look a module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _listable(bench: Any, path: str) -> Any:
    """``bench`` when it is a Benchmark whose variants can be listed; else a BrokenFile saying why."""
    if not isinstance(bench, Benchmark) or not getattr(bench, "name", ""):
        return BrokenFile(path, "declares a benchmark that is not a named Benchmark instance",
                          "TypeError: %r in BENCHMARKS (give it a name and list instances)" % (bench,))
    try:
        for preset in PRESETS.values():
            bench.variants(preset)
    except Exception:
        return BrokenFile(path, "cannot list the variants of %s" % bench.name, traceback.format_exc())
    return bench


def _load_file(path: str, side: str = "") -> List[Benchmark]:
    try:
        module = _import(path, side)
    except Exception:
        return [BrokenFile(path, "failed to import", traceback.format_exc())]
    return [_listable(b, path) for b in getattr(module, "BENCHMARKS", [])]


def split_sides(value: str) -> Tuple[str, List[Tuple[str, str]]]:
    """``value`` without its ``SIDE=FILE`` entries, and those entries as (side, file), in order."""
    plain: List[str] = []
    sided: List[Tuple[str, str]] = []
    for entry in filter(None, value.split(os.pathsep)):
        match = re.match(SIDE_PATTERN, entry)
        if match and not os.path.exists(entry):
            sided.append((match.group(1), match.group(2)))
        else:
            plain.append(entry)
    return os.pathsep.join(plain), sided


def load_plugins(value: str, lead: str = "") -> List[Benchmark]:
    """The benchmarks of every file ``value`` names; a file that fails is one ``BrokenFile``.

    ``SIDE=FILE`` entries are versions of one file (``tfmatrix ab``): their
    benchmarks are paired by name into ``sides.Sides``, one benchmark each.
    ``lead``: the side whose file is imported first (the process's
    ``sides.Order``: where a module lands is a position too); the pairing
    keeps the entries' order.
    """
    value, sided = split_sides(value)
    for directory in _directories(value):
        if directory not in sys.path:
            sys.path.insert(0, directory)
    found: List[Benchmark] = []
    for path in plugin_paths(value):
        found.extend(_load_file(path))
    if sided:
        loaded = {side: _load_file(path, side) for side, path in sorted(sided, key=lambda e: e[0] != lead)}
        found.extend(pair_up([(side, loaded[side]) for side, _ in sided]))
    return found


def from_environment(lead: str = "") -> List[Benchmark]:
    """The plugin benchmarks ``$TFMATRIX_SUITE_PLUGINS`` names (none when unset); ``lead``: see ``load_plugins``."""
    return load_plugins(os.environ.get(PLUGINS_ENV, ""), lead)


def side_names() -> List[str]:
    """The sides ``$TFMATRIX_SUITE_PLUGINS`` names (``SIDE=FILE``), in order: none outside ``tfmatrix ab``."""
    return [side for side, _ in split_sides(os.environ.get(PLUGINS_ENV, ""))[1]]
