"""``matrix.toml``: load, validate and expand it into ``Cell`` records.

Schema
======

A matrix file has eight top-level tables; everything else is an error.

``[matrix]`` - settings and defaults for every cell::

    [matrix]
    preset = "quick"                    # suite preset: quick | standard | full
    baseline = "tf1.14-keras2.2.5-cpu"  # report baseline (default: the oldest cell)
    timeout = 3600                      # per-cell run limit: seconds, or "90m" / "2h"
    memory = "8g"                       # per-cell memory limit (docker --memory)
    repeats = 5                         # optional: override the preset's repeats
    claims = ["seeds", "today"]         # the built-in claim families a run asks (default: the seeds'; "all")

``[images]`` - where base images come from::

    [images]
    base_registry = "mirror.example.com"   # optional; env TFMATRIX_BASE_REGISTRY wins
                                           # (set it empty to switch a file's mirror off)

  Docker Hub references are rewritten to the registry (``python:3.7-slim-bookworm``
  -> ``mirror.example.com/library/python:3.7-slim-bookworm``); references that
  already name another registry (``nvcr.io/...``) are left alone. Locally built
  bases for air-gapped hosts use ``TFMATRIX_BASE_REGISTRY=tfmatrix.local``.

``[cluster]`` - the Ray cluster ``--runner ray`` uses (runners/cluster.py)::

    [cluster]
    address = "ray://head:10001"   # or "head:6379", or "auto"; --address wins
    pool = "h100"                  # every cell's hardware pool (a Ray custom resource) unless it names one
    cpus = 2                       # CPUs a CPU cell asks of a node

``[suite]`` and ``[report]`` - your own benchmarks and the report's upgrade view
(``suite_tables.py``)::

    [suite]
    paths = ["benchmarks/"]                 # directories or .py files, relative to this file
    requirements = ["keras-hub==0.17.0"]    # installed into every cell
    claims = ["claims.toml"]                # your claims files (``[[claim]]`` tables, docs/claims.md)

    [report]
    compare = ["tf2.15-cpu", "tf2.21-keras3-cpu"]   # baseline, candidate

``[[claim]]`` - a claim of your own (``tfmatrix/analysis/claims/files.py`` reads it, with the
checks against the suite's catalogue and these cells; ``docs/claims.md``)::

    [[claim]]
    key = "predict_overhead"
    claim = "predict() costs more per call than model(x)."
    a = "predict()"
    b = "model(x)"
    faster = "b"
    [[claim.compare]]
    benchmarks = ["inference.tiny"]
    a = { path = "predict", stage = "compiled" }
    b = { path = "call", stage = "compiled" }

``[[cell]]`` - one explicit cell per table::

    [[cell]]
    tf = "1.14"            # required: "1.14" = newest patch in the table, or exact "1.15.0"
    keras = "2.2.5"        # default: the release's own (tf.keras up to 2.15, keras3 from 2.16)
    target = "cpu"         # cpu (default) | gpu

``[[product]]`` - a cross product, GitHub Actions style::

    [[product]]
    tf = ["1.15", "2.1", "2.9"]      # array-valued keys are axes
    target = ["cpu", "gpu"]
    timeout = 5400                   # scalar keys apply to every combination
    exclude = [ { tf = "2.9", target = "gpu" } ]
    include = [
      { tf = "2.1", target = "gpu", pins = ["h5py==2.10.0"] },   # matches: adds pins
      { tf = "2.18", target = "gpu", cudnn = "9.1", allow_untested = true },  # new combo
    ]

  Combinations come out in axis order, first axis slowest. ``exclude`` entries
  are applied first; each removes every combination whose axis values match all
  of its keys (its keys must be axes). Then each ``include`` entry is added to
  every remaining axis combination none of whose axis values it contradicts
  (its other keys are added, overriding scalars and earlier includes, never an
  axis value); an entry that matches no combination becomes a new combination
  of its own. ``pins`` is an axis only when it is a list of lists.

Cell keys (in ``[[cell]]``, ``[[product]]`` and ``include`` entries):

==================  ==================================================================
``tf``              TF release: "major.minor" (newest patch in the table) or an exact patch
``keras``           "tf.keras" (bundled, TF <= 2.15), a standalone Keras 2 version like
                    "2.2.5" (TF 1.14-2.1), "keras3" or a Keras 3 version like "3.3.3"
                    (TF 2.16+), "tf_keras" or "tf_keras==2.16.0" (TF 2.16+, sets
                    TF_USE_LEGACY_KERAS=1)
``backend``         Keras 3 only: "tensorflow" (default), "jax" or "torch"; a jax/torch
                    cell has no ``tf`` (no TensorFlow is installed) and takes Keras,
                    Python and packages from releases.toml [keras3] / [backend.*];
                    written out, it sets KERAS_BACKEND and a per-cell KERAS_HOME
``python``          "3.7" ...; default: the table's choice for the release and base
``target``          "cpu" | "gpu"
``cuda``, ``cudnn`` GPU only; default: what the release was tested with. A cuDNN that
                    differs is pinned through the nvidia-cudnn wheel (TF 2.14+); anything
                    else the default base cannot carry needs an explicit ``base``
``base``            "python" (official slim Python image, default for CPU), "tensorflow"
                    (official tensorflow/tensorflow image of the release), or an image
                    reference such as "nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu22.04"
``base_digest``     "sha256:<64 hex>": pin the base image by digest
``pins``            extra requirement lines, e.g. ["h5py==2.10.0"] (specifier required)
``env``             table of environment variables baked into the image
``preset``          suite preset for this cell; ``repeats`` overrides its repeats
``timeout``         seconds or "90m"/"2h"; ``memory`` like "8g"
``allow_untested``  true: a Python/CUDA/cuDNN/Keras pairing the table does not list is a
                    warning instead of an error
``name``            explicit cell name; may use {tf} {release} {keras} {python} {target}
                    {cuda} {cudnn} {backend} {pool} {default}
``pool``            the hardware pool (Ray custom resource) the cell must run in
                    (``--runner ray``); default: ``[cluster] pool``. In a ``[[product]]``
                    an array is a hardware axis: one cell per pool, named
                    ``{default}-{pool}`` (the report's Hardware section compares them)
``opt_in``          true: the cell runs only when named (``--only``, ``cell NAME``), never in a
                    plain ``matrix`` run; required for a release candidate (TF 2.22.0rc0)
==================  ==================================================================

Cell names default to ``tf{tf}[-{keras}]-{target}`` (``tf1.15-cpu``,
``tf1.14-keras2.2.5-cpu``, ``tf2.16-keras3-gpu``, ``tf2.16-tf_keras-cpu``) with
``tf`` as written (``{keras}-{backend}-{target}`` for jax/torch cells:
``keras3-jax-cpu``), plus ``-{pool}`` (lowercased) when ``pool`` is an axis
(``naming.py``); they must be valid Docker repository names (``tfmatrix/<name>``).
Cells are listed ``[[cell]]`` tables first, then each product's combinations.

Every error is one line naming file, cell and key, and says the fix; every
value that reaches a template is first checked against ``PATTERNS``.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import UserError
from ..versions import version_key
from .base_image import redirect
from .checks import Where, parse_settings, suggest
from .product import expand_product
from .records import (
    BASE_KEYWORDS,
    CELL_KEYS,
    DEFAULT_MEMORY,
    DEFAULT_PRESET,
    DEFAULT_TIMEOUT_S,
    IMAGES_KEYS,
    KERAS_FLAVOURS,
    KNOWN_PRESETS,
    PATTERNS,
    PRODUCT_KEYS,
    REGISTRY_ENV,
    RESERVED_ENV,
    RESERVED_ENV_PREFIX,
    SETTINGS_KEYS,
    TARGETS,
    TOP_KEYS,
    BaseImage,
    Cell,
    KerasSpec,
    Matrix,
    Settings,
)
from .releases import Table, load_table
from .resolve import resolve_cell
from .size import empty_products, product_size, too_big
from .suite_tables import check_compare, outside_notes, suite_settings, with_requirements

__all__ = [
    "BASE_KEYWORDS", "CELL_KEYS", "DEFAULT_MEMORY", "DEFAULT_PRESET", "DEFAULT_TIMEOUT_S", "IMAGES_KEYS",
    "KERAS_FLAVOURS", "KNOWN_PRESETS", "PATTERNS", "PRODUCT_KEYS", "REGISTRY_ENV", "RESERVED_ENV",
    "RESERVED_ENV_PREFIX", "SETTINGS_KEYS", "TARGETS", "TOP_KEYS", "BaseImage", "Cell", "KerasSpec", "Matrix",
    "Settings", "display_path", "expand_product", "load", "parse_matrix", "parse_settings", "redirect",
    "resolve_cell",
]  # fmt: skip

_TOML_POS = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)$")


def _toml_error(file: str, source: str, exc: tomllib.TOMLDecodeError) -> UserError:
    """tomllib's message with its "(at line L, column C)" turned into file:L:C."""
    text = " ".join(str(exc).split())
    m = _TOML_POS.match(text)
    if m:
        msg, line, col = m["msg"], m["line"], m["col"]
    elif text.endswith("(at end of document)"):
        lines = source.split("\n")
        msg, line, col = text.removesuffix("(at end of document)").strip(), str(len(lines)), str(len(lines[-1]) + 1)
    else:
        return UserError(f"{file}: TOML syntax error: {text}; fix the file")
    return UserError(f"{file}:{line}:{col}: TOML syntax error: {msg}; fix the file at that position")


def _tables(file: str, doc: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    value = doc.get(key, [])
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise UserError(f"{file}: '{key}' must be an array of tables; write [[{key}]] headers")
    return value


def parse_matrix(text: str, file: str, path: Path, environ: Mapping[str, str], table: Table) -> Matrix:
    """The matrix in ``text`` (``file`` is how messages name it). Pure apart from its arguments."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(file, text, exc)
    top = Where(file, "top level")
    for key in doc:
        if key not in TOP_KEYS:
            raise top.error(key, "unknown table", suggest(key, TOP_KEYS))
    settings = suite_settings(file, doc, path.parent, parse_settings(file, doc, environ))
    raw: list[tuple[dict[str, Any], str, bool]] = []     # values, origin, pool is an axis (a hardware axis)
    for i, cell_table in enumerate(_tables(file, doc, "cell")):
        raw.append((cell_table, f"cell[{i}]", False))
    products = _tables(file, doc, "product")
    sizes = [product_size(i, p) for i, p in enumerate(products)]       # counted before anything is expanded
    refusal = too_big(file, len(raw), sizes, settings.max_cells)
    if refusal:
        raise UserError(refusal)
    for i, product in enumerate(products):
        pool_axis = isinstance(product.get("pool"), list)
        raw += [(values, origin, pool_axis) for values, origin in expand_product(file, i, product)]
    empty = empty_products(file, sizes)
    if not raw:
        raise UserError(empty[0] if empty else f"{file}: the matrix has no cells; add a [[cell]] or [[product]] table")
    cells = [with_requirements(resolve_cell(file, origin, values, settings, table, pool_axis), settings.requirements)
             for values, origin, pool_axis in raw]
    seen: dict[str, Cell] = {}
    for cell in cells:
        if cell.name in seen:
            raise UserError(_same_name(file, seen[cell.name], cell))
        seen[cell.name] = cell
    baseline = settings.baseline
    if baseline is None:
        with_tf = [c for c in cells if c.has_tf and not c.existing] or cells    # jax/torch/existing: no TF release
        baseline = min(with_tf, key=lambda c: version_key(c.tf)).name  # oldest; first in file order on ties
    elif baseline not in seen:
        close = difflib.get_close_matches(baseline, list(seen), n=1, cutoff=0.6)
        fix = f"did you mean '{close[0]}'?" if close else "cells are: " + ", ".join(seen)
        raise UserError(f"{file}: [matrix]: key 'baseline': no cell is named {baseline!r}; {fix}")
    compare = check_compare(file, settings.compare, list(seen))
    settings = dataclasses.replace(settings, baseline=baseline, compare=compare)
    claims = doc.get("claim", [])
    if not isinstance(claims, list) or not all(isinstance(t, dict) for t in claims):
        raise UserError(f"{file}: 'claim' must be an array of tables; write [[claim]] headers (docs/claims.md)")
    notes = (*empty, *outside_notes(file, path.parent, settings))
    return Matrix(path=path, cells=tuple(cells), settings=settings, notes=notes, claim_tables=tuple(claims))


def _same_name(file: str, first: Cell, cell: Cell) -> str:
    """Two cells, one name: the fix names {pool} when they differ in their pool (a name template without it)."""
    fix = ('put {pool} in the name template (name = "{default}-{pool}"), so each pool\'s cell has its own name'
           if first.pool != cell.pool else 'set name = "..." on one of them')
    return f"{cell.origin}: cell '{cell.name}' has the same name as {first.origin.removeprefix(f'{file}: ')}; {fix}"


def display_path(path: Path) -> str:
    """How messages name a file: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load(path: Path | str | None = None, environ: Mapping[str, str] | None = None) -> Matrix:
    """Read and validate a matrix file (default: the repository's matrix.toml)."""
    p = Path(path) if path is not None else paths.DEFAULT_MATRIX
    file = display_path(p)
    try:
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise UserError(f"{file}: no such matrix file; pass --matrix PATH or create it")
    except IsADirectoryError:
        raise UserError(f"{file}: is a directory; pass --matrix PATH to a matrix.toml file")
    except UnicodeDecodeError as exc:
        raise UserError(f"{file}: not UTF-8 text (byte {exc.start}); save the file as UTF-8")
    return parse_matrix(text, file, p, os.environ if environ is None else environ, load_table())
