"""``matrix.toml``: load, validate and expand it into ``Cell`` records.

Schema
======

A matrix file has four top-level tables; everything else is an error.

``[matrix]`` - settings and defaults for every cell::

    [matrix]
    preset = "quick"                    # suite preset: quick | standard | full
    baseline = "tf1.14-keras2.2.5-cpu"  # report baseline (default: the oldest cell)
    timeout = 3600                      # per-cell run limit: seconds, or "90m" / "2h"
    memory = "8g"                       # per-cell memory limit (docker --memory)
    repeats = 5                         # optional: override the preset's repeats

``[images]`` - where base images come from::

    [images]
    base_registry = "mirror.example.com"   # optional; env TFMATRIX_BASE_REGISTRY wins
                                           # (set it empty to switch a file's mirror off)

  Docker Hub references are rewritten to the registry (``python:3.7-slim-bookworm``
  -> ``mirror.example.com/library/python:3.7-slim-bookworm``); references that
  already name another registry (``nvcr.io/...``) are left alone. Locally built
  bases for air-gapped hosts use ``TFMATRIX_BASE_REGISTRY=tfmatrix.local``.

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
                    {cuda} {cudnn} {default}
==================  ==================================================================

Cell names default to ``tf{tf}[-{keras}]-{target}`` (``tf1.15-cpu``,
``tf1.14-keras2.2.5-cpu``, ``tf2.16-keras3-gpu``, ``tf2.16-tf_keras-cpu``) with
``tf`` as written; they must be valid Docker repository names (``tfmatrix/<name>``).
Cells are listed ``[[cell]]`` tables first, then each product's combinations.

Every error is one line naming file, cell and key, and says the fix; every
value that reaches a template is first checked against ``PATTERNS``.
"""
from __future__ import annotations

import difflib
import fnmatch
import itertools
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import paths
from .errors import UserError
from .releases import Release, Table, load_table, minor_of, version_key
from .size import DEFAULT_MAX_CELLS, empty_products, product_size, too_big
from .size import is_axis as _is_axis

# Strict patterns for every value that can reach a Dockerfile or requirements file.
# Always used with fullmatch: no newline, quote, `$`, `;`, backtick or space gets through
# (env values may contain spaces; they are rendered inside double quotes).
PATTERNS: dict[str, re.Pattern[str]] = {
    "tf": re.compile(r"\d{1,2}\.\d{1,3}(?:\.\d{1,3}(?:\.post\d{1,3})?)?"),
    "python": re.compile(r"3\.\d{1,2}"),
    "cuda": re.compile(r"\d{1,2}\.\d{1,2}(?:\.\d{1,3})?"),
    "cudnn": re.compile(r"\d{1,2}(?:\.\d{1,2}){0,2}"),
    "keras_version": re.compile(r"\d{1,2}\.\d{1,3}\.\d{1,3}"),
    "requirement": re.compile(
        r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
        r"(?:\[[A-Za-z0-9._-]{1,50}(?:,[A-Za-z0-9._-]{1,50})*\])?"
        r"(?:===?|!=|<=|>=|~=|<|>)[A-Za-z0-9.*+!_-]{1,50}"
        r"(?:,(?:===?|!=|<=|>=|~=|<|>)[A-Za-z0-9.*+!_-]{1,50})*"
    ),
    "env_name": re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}"),
    "env_value": re.compile(r"[A-Za-z0-9_.,:/=+@%\- ]{0,256}"),
    "image": re.compile(
        r"(?:[a-z0-9](?:[a-z0-9.-]{0,62}[a-z0-9])?(?::[0-9]{1,5})?/)?"
        r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
        r"(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*){0,5}"
        r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
    ),
    "digest": re.compile(r"sha256:[0-9a-f]{64}"),
    "registry": re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,62}[a-z0-9])?(?::[0-9]{1,5})?(?:/[a-z0-9._-]{1,64}){0,3}"),
    # Docker repository path component: separators only between alphanumerics.
    "name": re.compile(r"(?=[a-z0-9._-]{1,63}$)[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"),
    "memory": re.compile(r"[1-9][0-9]{0,5}[kmg]"),
    "preset": re.compile(r"[a-z][a-z0-9_-]{0,31}"),
}

TARGETS = ("cpu", "gpu")
KERAS_FLAVOURS = ("tf.keras", "keras", "keras3", "tf_keras")
# Mirrors suite/registry.py PRESETS (tests keep the two in step); tfmatrix does not
# import the suite, which runs inside cells on Python 3.7.
KNOWN_PRESETS = ("quick", "standard", "full")
BASE_KEYWORDS = ("python", "tensorflow", "nvidia-cuda")
REGISTRY_ENV = "TFMATRIX_BASE_REGISTRY"
DEFAULT_PRESET = "quick"
DEFAULT_TIMEOUT_S = 3600
DEFAULT_MEMORY = "8g"
# Set by the image template itself, or by the runners at run time.
RESERVED_ENV = ("PATH", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
RESERVED_ENV_PREFIX = "TFMATRIX_"

CELL_KEYS = (
    "tf", "keras", "python", "target", "cuda", "cudnn", "base", "base_digest", "pins", "env",
    "preset", "repeats", "timeout", "memory", "allow_untested", "name",
)  # fmt: skip
PRODUCT_KEYS = CELL_KEYS + ("include", "exclude")
SETTINGS_KEYS = ("preset", "baseline", "timeout", "memory", "repeats", "max_cells", "rounds")
IMAGES_KEYS = ("base_registry",)
TOP_KEYS = ("matrix", "images", "cell", "product")

_DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")
_TOML_POS = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)$")


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class KerasSpec:
    """Which Keras a cell runs and the requirement line that installs it.

    flavour: "tf.keras" (bundled, no extra package), "keras" (standalone 2.x),
    "keras3", or "tf_keras" (legacy Keras 2 for TF 2.16+, needs TF_USE_LEGACY_KERAS=1).
    """

    flavour: str
    version: str | None
    requirement: str | None

    @property
    def label(self) -> str:
        """Short text for tables and image labels: "tf.keras", "keras3==3.3.3"."""
        return self.flavour if self.version is None else f"{self.flavour}=={self.version}"


@dataclass(frozen=True)
class BaseImage:
    """The image a cell builds FROM.

    kind: "python" | "tensorflow" | "nvidia-cuda" | "custom"; ref: what the
    Dockerfile uses (after the registry redirect, with "@digest" when pinned);
    upstream: the reference before the redirect, without digest; python: the
    base's own Python when known.
    """

    kind: str
    ref: str
    upstream: str
    python: str | None
    digest: str | None


@dataclass(frozen=True)
class Cell:
    """One fully resolved matrix cell: everything needed to render and run it.

    ``requirements`` are the lines of the image's requirements.txt, in order;
    ``bootstrap`` are requirement lines installed first (the pip that venvs on
    OS-Python bases need before they can read modern wheels); ``untested``
    holds the warnings that ``allow_untested`` turned from errors.
    """

    name: str
    tf: str
    tf_release: str
    keras: KerasSpec
    python: str
    target: str
    cuda: str | None
    cudnn: str | None
    base: BaseImage
    requirements: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    preset: str
    repeats: int | None
    timeout_s: int
    memory: str
    allow_untested: bool
    untested: tuple[str, ...]
    origin: str
    bootstrap: tuple[str, ...] = ()

    @property
    def python_from_base(self) -> bool:
        """True when the base is the official image of exactly this Python.

        Otherwise the Python comes from the base's OS packages (installed at build
        time when missing), and ``bootstrap`` upgrades the venv's pip first.
        """
        return self.base.kind == "python" and self.base.python == self.python

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form for cell.json (field order kept, env as an object)."""
        return {
            "name": self.name,
            "tf": self.tf,
            "tf_release": self.tf_release,
            "keras": {"flavour": self.keras.flavour, "version": self.keras.version,
                      "requirement": self.keras.requirement},
            "python": self.python,
            "target": self.target,
            "cuda": self.cuda,
            "cudnn": self.cudnn,
            "base": {"kind": self.base.kind, "ref": self.base.ref, "upstream": self.base.upstream,
                     "python": self.base.python, "digest": self.base.digest},
            "requirements": list(self.requirements),
            "bootstrap": list(self.bootstrap),
            "env": dict(self.env),
            "preset": self.preset,
            "repeats": self.repeats,
            "timeout_s": self.timeout_s,
            "memory": self.memory,
            "allow_untested": self.allow_untested,
            "untested": list(self.untested),
            "origin": self.origin,
        }  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """The ``[matrix]`` and ``[images]`` tables, defaults applied.

    ``baseline`` is always a cell name once the matrix is loaded (the oldest cell
    when the file names none); ``base_registry`` already has the env var applied.
    """

    preset: str = DEFAULT_PRESET
    baseline: str | None = None
    timeout_s: int = DEFAULT_TIMEOUT_S
    memory: str = DEFAULT_MEMORY
    repeats: int | None = None
    base_registry: str | None = None
    max_cells: int = DEFAULT_MAX_CELLS
    rounds: int = 1                 # every cell once, then every cell again: rounds.py


@dataclass(frozen=True)
class Matrix:
    """A loaded matrix file: its cells in file order and its settings.

    ``notes`` are warnings about the file itself (a product that adds no cells).
    """

    path: Path
    cells: tuple[Cell, ...]
    settings: Settings
    notes: tuple[str, ...] = ()

    @property
    def warnings(self) -> tuple[str, ...]:
        """The file's notes, then every untested warning, each once, in cell order."""
        return tuple(dict.fromkeys([*self.notes, *(w for c in self.cells for w in c.untested)]))

    def cell(self, name: str) -> Cell:
        for c in self.cells:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def baseline(self) -> Cell:
        assert self.settings.baseline is not None
        return self.cell(self.settings.baseline)

    def select(self, patterns: Sequence[str]) -> tuple[Cell, ...]:
        """Cells whose name matches any glob (all cells when ``patterns`` is empty)."""
        if not patterns:
            return self.cells
        return tuple(c for c in self.cells if any(fnmatch.fnmatchcase(c.name, p) for p in patterns))


# --------------------------------------------------------------------------- helpers


@dataclass
class _Where:
    """Where a value came from, for one-line messages: file, cell origin, untested policy."""

    file: str
    origin: str
    allow_untested: bool = False
    untested: list[str] = field(default_factory=list)

    def error(self, key: str | None, problem: str, fix: str) -> UserError:
        keypart = f"key '{key}': " if key else ""
        return UserError(f"{self.file}: {self.origin}: {keypart}{problem}; {fix}")

    def not_tested(self, key: str, problem: str, fix: str) -> None:
        """An unsupported-but-possible pairing: an error, or a warning under allow_untested."""
        if not self.allow_untested:
            raise self.error(key, problem, f"{fix} or set allow_untested = true")
        self.untested.append(f"{self.file}: {self.origin}: key '{key}': {problem} (allowed by allow_untested = true)")


def _suggest(key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    return "known keys: " + ", ".join(known)


def _check_keys(where: _Where, table: Mapping[str, Any], known: Sequence[str], what: str) -> None:
    for key in table:
        if key not in known:
            if key in ("include", "exclude") and "include" not in known:
                raise where.error(key, f"'{key}' belongs to [[product]] tables", "move the cell into a [[product]]")
            raise where.error(key, f"unknown {what} key", _suggest(key, known))


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)  # fmt: skip


def _get_str(where: _Where, values: Mapping[str, Any], key: str, example: str) -> str | None:
    """A string value or None; floats get their own hint (TOML reads 3.10 as 3.1)."""
    if key not in values:
        return None
    value = values[key]
    if isinstance(value, str):
        return value
    if isinstance(value, float | int) and not isinstance(value, bool):
        raise where.error(key, f"expected a string, got {_type_name(value)} ({value!r})",
                          f'quote it: {key} = "{example}" (unquoted, TOML reads a version as a number: 3.10 is 3.1)')
    if isinstance(value, list):
        raise where.error(key, "expected a string, got an array",
                          "arrays are axes and belong in [[product]] tables")
    raise where.error(key, f"expected a string, got {_type_name(value)}", f'write {key} = "{example}"')


def _checked(where: _Where, key: str, value: str, pattern: str, expected: str, fix: str) -> str:
    if not PATTERNS[pattern].fullmatch(value):
        raise where.error(key, f"{value!r} is not {expected}", fix)
    return value


def _vmatch(given: str, tested: str) -> bool:
    """ "8" matches "8.6"; "11.2.1" matches "11.2"; "11.8" does not match "11.2"."""
    a, b = given.split("."), tested.split(".")
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def redirect(ref: str, registry: str | None) -> str:
    """Point a Docker Hub reference at ``registry`` (a mirror, or tfmatrix.local).

    ``python:3.7-slim-bookworm`` -> ``<registry>/library/python:3.7-slim-bookworm``;
    ``nvidia/cuda:11.8.0-...`` -> ``<registry>/nvidia/cuda:11.8.0-...``. A reference
    that names another registry (``nvcr.io/nvidia/...``) stays as it is: only Docker
    Hub is mirrored. Pure; ``registry`` None or "" means no redirect.
    """
    if not registry:
        return ref
    name, at, digest = ref.partition("@")
    first, slash, rest = name.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        if first not in _DOCKER_HUB:
            return ref
        name = rest
    if "/" not in name:
        name = f"library/{name}"
    return f"{registry}/{name}" + (f"@{digest}" if at else "")


def _image_kind(ref: str) -> str:
    """Kind of an explicit base reference, from its repository name."""
    name = ref.split("@")[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    parts = repo.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    repo = "/".join(parts)
    return {"python": "python", "library/python": "python", "tensorflow/tensorflow": "tensorflow",
            "nvidia/cuda": "nvidia-cuda"}.get(repo, "custom")  # fmt: skip


# --------------------------------------------------------------------------- settings


def _timeout(where: _Where, key: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str) and re.fullmatch(r"[1-9][0-9]{0,6}[smh]?", value):
        seconds = int(value.rstrip("smh")) * {"s": 1, "m": 60, "h": 3600}.get(value[-1], 1)
    else:
        raise where.error(key, f"{value!r} is not a duration", 'write seconds (3600) or "90m" / "2h"')
    if not 1 <= seconds <= 7 * 24 * 3600:
        raise where.error(key, f"{seconds} s is out of range", "use 1 s .. 7 days")
    return seconds


def _memory(where: _Where, key: str, value: Any) -> str:
    if not isinstance(value, str) or not PATTERNS["memory"].fullmatch(value):
        raise where.error(key, f"{value!r} is not a memory size", 'write a number and k/m/g, like "8g"')
    return value


def _repeats(where: _Where, key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1000:
        raise where.error(key, f"{value!r} is not a repeat count", "use an integer from 1 to 1000")
    return value


def _rounds(where: _Where, key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 20:
        raise where.error(key, f"{value!r} is not a number of rounds", "use an integer from 1 to 20")
    return value


def _preset(where: _Where, key: str, value: Any) -> str:
    if not isinstance(value, str) or not PATTERNS["preset"].fullmatch(value) or value not in KNOWN_PRESETS:
        raise where.error(key, f"{value!r} is not a suite preset", "use one of: " + ", ".join(KNOWN_PRESETS))
    return value


def _registry(where: _Where, key: str | None, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not PATTERNS["registry"].fullmatch(value):
        raise where.error(key, f"{value!r} is not a registry host",
                          'write a host[:port][/path] like "mirror.example.com"')
    return value


def parse_settings(file: str, doc: Mapping[str, Any], environ: Mapping[str, str]) -> Settings:
    """``[matrix]`` + ``[images]`` + $TFMATRIX_BASE_REGISTRY -> Settings (baseline still unresolved)."""
    m = doc.get("matrix", {})
    im = doc.get("images", {})
    for name, table, keys in (("[matrix]", m, SETTINGS_KEYS), ("[images]", im, IMAGES_KEYS)):
        where = _Where(file, name)
        if not isinstance(table, dict):
            raise where.error(None, f"{name} must be a table", f"write it as a {name} section")
        _check_keys(where, table, keys, name)
    where = _Where(file, "[matrix]")
    baseline = m.get("baseline")
    if baseline is not None and not isinstance(baseline, str):
        raise where.error("baseline", f"expected a cell name, got {_type_name(baseline)}",
                          'write baseline = "tf1.14-cpu"')
    if REGISTRY_ENV in environ:
        registry = _registry(_Where(f"environment variable {REGISTRY_ENV}", "value"), None, environ[REGISTRY_ENV])
    else:
        registry = _registry(_Where(file, "[images]"), "base_registry", im.get("base_registry"))
    return Settings(
        preset=_preset(where, "preset", m["preset"]) if "preset" in m else DEFAULT_PRESET,
        baseline=baseline,
        timeout_s=_timeout(where, "timeout", m["timeout"]) if "timeout" in m else DEFAULT_TIMEOUT_S,
        memory=_memory(where, "memory", m["memory"]) if "memory" in m else DEFAULT_MEMORY,
        repeats=_repeats(where, "repeats", m["repeats"]) if "repeats" in m else None,
        base_registry=registry,
        max_cells=_max_cells(where, m["max_cells"]) if "max_cells" in m else DEFAULT_MAX_CELLS,
        rounds=_rounds(where, "rounds", m["rounds"]) if "rounds" in m else 1,
    )


def _max_cells(where: _Where, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 100_000:
        raise where.error("max_cells", f"{value!r} is not a cell count", "use an integer from 1 to 100000")
    return value


# --------------------------------------------------------------------------- products


def _fmt_value(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def expand_product(file: str, index: int, table: Mapping[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """One ``[[product]]`` -> [(cell values, origin)], with GitHub Actions include/exclude semantics."""
    where = _Where(file, f"product[{index}]")
    _check_keys(where, table, PRODUCT_KEYS, "product")
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
            w = _Where(file, f"product[{index}] {kind}[{j}]")
            _check_keys(w, entry, CELL_KEYS, "cell")
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


# --------------------------------------------------------------------------- one cell


def _resolve_tf(where: _Where, values: Mapping[str, Any], table: Table) -> tuple[Release, str, str]:
    """-> (release row, exact version, version as written)."""
    given = _get_str(where, values, "tf", "1.15")
    if given is None:
        raise where.error("tf", "missing", 'every cell needs a TF release, e.g. tf = "1.15"')
    _checked(where, "tf", given, "tf", 'a version like "1.15" or "1.15.5"',
             "write the TF release as major.minor or major.minor.patch")
    try:
        rel = table.release(given)
    except KeyError:
        raise where.error("tf", f"TF {minor_of(given)} is not in the compatibility table "
                                f"(known: {table.oldest().tf} .. {table.newest().tf})",
                          "pick a known release or add a row to tfmatrix/data/releases.toml")
    if given == rel.tf:
        return rel, rel.newest, given
    if given not in rel.patches:
        raise where.error("tf", f"TF {given} is not a known {rel.tf} release (known: {', '.join(rel.patches)})",
                          f'use one of those or tf = "{rel.tf}" for {rel.newest}')
    return rel, given, given


def _resolve_keras(where: _Where, values: Mapping[str, Any], rel: Release) -> tuple[KerasSpec, str | None]:
    """-> (KerasSpec, the name fragment: None for the release's default Keras)."""
    given = _get_str(where, values, "keras", "2.2.5")
    fix_all = 'use "tf.keras", a Keras 2 version like "2.2.5", "keras3" or a 3.x version, or "tf_keras"'
    if given is None:
        given = rel.keras
    if given == "tf.keras":
        if rel.keras != "tf.keras":
            raise where.error("keras", f"TF {rel.tf} has no bundled Keras 2 (its tf.keras is Keras 3)",
                              'use keras = "keras3" or keras = "tf_keras"')
        return KerasSpec("tf.keras", None, None), None
    if given == "keras3" or (given.startswith("3.") and PATTERNS["keras_version"].fullmatch(given)):
        if rel.keras3 is None:
            raise where.error("keras", f"Keras 3 needs TF >= 2.16; TF {rel.tf} bundles Keras 2 as tf.keras",
                              'use keras = "tf.keras" or a TF release >= 2.16')
        version = rel.keras3 if given == "keras3" else given
        if rel.keras3_min and version_key(version) < version_key(rel.keras3_min):
            raise where.error("keras", f"TF {rel.tf} requires keras>={rel.keras3_min}, not {version}",
                              f'use keras = "keras3" ({rel.keras3}) or a version >= {rel.keras3_min}')
        return KerasSpec("keras3", version, f"keras=={version}"), ("keras3" if given == "keras3" else f"keras{version}")
    if given == "tf_keras" or given.startswith("tf_keras=="):
        if rel.tf_keras is None:
            raise where.error("keras", f"tf_keras is for TF >= 2.16; TF {rel.tf} bundles Keras 2 as tf.keras",
                              'use keras = "tf.keras"')
        version = rel.tf_keras if given == "tf_keras" else given.removeprefix("tf_keras==")
        _checked(where, "keras", version, "keras_version", "a tf_keras version like 2.16.0",
                 'write keras = "tf_keras==2.16.0" or just "tf_keras"')
        if minor_of(version) != rel.tf:
            raise where.error("keras", f"tf_keras {version} pairs with TF {minor_of(version)} only, not TF {rel.tf}",
                              f'use keras = "tf_keras" ({rel.tf_keras})')
        part = "tf_keras" if given == "tf_keras" else f"tf_keras{version}"
        return KerasSpec("tf_keras", version, f"tf-keras=={version}"), part
    if given.startswith("2.") and PATTERNS["keras_version"].fullmatch(given):
        if rel.keras3_min:  # the TF wheel itself requires keras >= 3: pip cannot install this pair at all
            raise where.error("keras", f"TF {rel.tf} requires keras>={rel.keras3_min}, so pip cannot install "
                                       f"standalone Keras {given} with it (allow_untested does not change that)",
                              'use keras = "tf_keras" for Keras 2 on this release, or "keras3"')
        if given not in rel.keras2:
            known = ", ".join(rel.keras2) if rel.keras2 else "none (from TF 2.2 the keras package is tf.keras itself)"
            where.not_tested("keras", f"standalone Keras {given} is not known to pair with TF {rel.tf} "
                                      f"(known: {known})", "use a known pairing")
        return KerasSpec("keras", given, f"keras=={given}"), f"keras{given}"
    raise where.error("keras", f"{given!r} is not a Keras choice", fix_all)


def _check_python(where: _Where, python: str, rel: Release, table: Table) -> None:
    if version_key(python) < version_key(table.suite_min_python):
        raise where.error("python", f"the suite needs Python >= {table.suite_min_python}, not {python}",
                          f"use Python {table.suite_min_python} or newer")
    if python not in rel.python:  # no wheel: pip cannot install it, allow_untested or not
        raise where.error("python", f"TF {rel.tf} has wheels for Python {', '.join(rel.python)} only, not {python} "
                                    "(allow_untested does not change that)", "use one of those")


@dataclass(frozen=True)
class _BaseChoice:
    base: BaseImage
    python: str
    carries_cuda: bool  # the image itself provides CUDA/cuDNN (tensorflow/nvidia-cuda from the table)
    pip_cuda: bool  # CUDA/cuDNN come from the release's nvidia-* wheels
    bootstrap: tuple[str, ...]


def _resolve_base(where: _Where, values: Mapping[str, Any], rel: Release, target: str, table: Table,
                  registry: str | None) -> _BaseChoice:
    """Base image and the cell's Python (they constrain each other)."""
    given = _get_str(where, values, "base", "python")
    python_given = _get_str(where, values, "python", rel.default_python)
    if python_given is not None:
        _checked(where, "python", python_given, "python", 'a Python version like "3.7"', 'write python = "3.X"')
    digest = _get_str(where, values, "base_digest", "sha256:...")
    if digest is not None:
        _checked(where, "base_digest", digest, "digest", "a sha256 digest",
                 'write base_digest = "sha256:<64 hex digits>"')
    gpu = target == "gpu"
    keyword = given if given is not None else ("python" if not gpu else rel.gpu_base)

    if keyword == "python":
        if gpu and not rel.pip_cuda:
            raise where.error("base", f"TF {rel.tf} has no pip CUDA wheels (they start with TF 2.14), so a GPU "
                                      f"cell needs a base that carries CUDA {rel.cuda}",
                              "drop base to use the release's GPU image, or name an image that carries CUDA")
        python = python_given or rel.default_python
        _check_python(where, python, rel, table)
        upstream, kind, base_python, os_python = f"python:{python}-slim-bookworm", "python", python, False
        carries, pip_cuda = False, gpu
    elif keyword in ("tensorflow", "nvidia-cuda"):
        if keyword == "tensorflow":
            upstream = rel.tf_image.gpu if gpu else rel.tf_image.cpu
            os_name, base_python = rel.tf_image.os, rel.tf_image.python
        else:
            if rel.gpu_image is None or rel.gpu_image_os is None or not gpu:
                raise where.error("base", f"the table has no nvidia/cuda image for TF {rel.tf} {target}",
                                  'use base = "python", "tensorflow" or an image reference')
            upstream, os_name, base_python = rel.gpu_image, rel.gpu_image_os, None
        osp = table.os[os_name]
        if python_given is not None:
            if python_given not in osp.pythons:
                raise where.error("python", f"base {upstream} is {os_name}, which provides Python "
                                            f"{', '.join(osp.pythons)}, not {python_given}",
                                  "use one of those, or name a base image that has this Python")
            _check_python(where, python_given, rel, table)
            python = python_given
        else:
            floor = version_key(table.suite_min_python)
            candidates = [p for p in osp.pythons if p in rel.python and version_key(p) >= floor]
            if not candidates:
                raise where.error("python", f"base {upstream} ({os_name}) offers no Python that TF {rel.tf} "
                                            "and the suite both support", "name a base image with a suitable Python")
            python = next((p for p in (base_python, osp.default) if p in candidates), candidates[-1])
        kind, os_python = keyword, True
        carries, pip_cuda = gpu and not rel.pip_cuda, gpu and rel.pip_cuda
    else:
        _checked(where, "base", keyword, "image", "an image reference",
                 'use "python", "tensorflow" or a reference like "nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu22.04"')
        if "@" in keyword:
            raise where.error("base", "digests go in base_digest", 'write base_digest = "sha256:..." next to base')
        kind = _image_kind(keyword)
        if gpu and kind == "python" and not rel.pip_cuda:
            raise where.error("base", f"{keyword} carries no CUDA and TF {rel.tf} has no pip CUDA wheels (they start "
                                      "with TF 2.14)", "drop base, or name an image that carries CUDA")
        python = python_given or rel.default_python
        _check_python(where, python, rel, table)
        upstream, base_python, os_python = keyword, None, True
        # Official Python/TensorFlow images get the release's CUDA wheels; any other image
        # (nvidia/cuda, custom) is trusted to carry the CUDA the cell names.
        carries, pip_cuda = False, gpu and rel.pip_cuda and kind in ("python", "tensorflow")

    ref = redirect(upstream, registry) + (f"@{digest}" if digest else "")
    base = BaseImage(kind=kind, ref=ref, upstream=upstream, python=base_python, digest=digest)
    # Only the official Python image of exactly this Python brings a modern pip into its venvs.
    bootstrap = () if kind == "python" and base_python == python else (table.os_python_pip,)
    assert bootstrap or not os_python
    return _BaseChoice(base, python, carries, pip_cuda, bootstrap)


def _resolve_cuda(where: _Where, values: Mapping[str, Any], rel: Release, target: str,
                  choice: _BaseChoice, table: Table) -> tuple[str | None, str | None]:
    cuda_given = _get_str(where, values, "cuda", rel.cuda)
    cudnn_given = _get_str(where, values, "cudnn", rel.cudnn)
    if target == "cpu":
        for key, value in (("cuda", cuda_given), ("cudnn", cudnn_given)):
            if value is not None:
                raise where.error(key, "only GPU cells have CUDA/cuDNN versions", f'remove {key} or set target = "gpu"')
        return None, None
    if cuda_given is not None:
        _checked(where, "cuda", cuda_given, "cuda", 'a CUDA version like "11.2"', 'write cuda = "major.minor"')
    if cudnn_given is not None:
        _checked(where, "cudnn", cudnn_given, "cudnn", 'a cuDNN version like "8.1"', 'write cudnn = "major.minor"')
    cuda, cudnn = cuda_given or rel.cuda, cudnn_given or rel.cudnn
    cuda_differs, cudnn_differs = not _vmatch(cuda, rel.cuda), not _vmatch(cudnn, rel.cudnn)
    if cuda_differs:
        where.not_tested("cuda", f"TF {rel.tf} was built and tested with CUDA {rel.cuda}, not {cuda}",
                         f'use cuda = "{rel.cuda}"')
    if cudnn_differs and choice.pip_cuda:
        oldest = table.cudnn_installable(rel.cuda, cudnn)
        if oldest:
            raise where.error("cudnn", f"cuDNN comes from the {table.cudnn_wheel(rel.cuda)} wheel, whose oldest "
                                       f"version is {oldest}, so pip cannot install cuDNN {cudnn} (allow_untested "
                                       "does not change that)", f'use cudnn = "{rel.cudnn}" or a version >= {oldest}')
    if cudnn_differs:
        where.not_tested("cudnn", f"TF {rel.tf} was built and tested with cuDNN {rel.cudnn}, not {cudnn}",
                         f'use cudnn = "{rel.cudnn}"')
    base = choice.base.upstream
    if choice.carries_cuda and (cuda_differs or cudnn_differs):
        key, want, has = ("cuda", cuda, rel.cuda) if cuda_differs else ("cudnn", cudnn, rel.cudnn)
        label = {"cuda": "CUDA", "cudnn": "cuDNN"}[key]
        raise where.error(key, f"the default GPU base {base} carries {label} {has}, not {want}",
                          "name a base image that carries it (base = \"...\")")
    if choice.pip_cuda and cuda_differs:
        raise where.error("cuda", f"CUDA comes from the nvidia-* wheels TF {rel.tf} pins (CUDA {rel.cuda}), not {cuda}",
                          "vary cudnn instead, or name a base image that carries this CUDA (base = \"...\")")
    return cuda, cudnn


def _requirements(where: _Where, values: Mapping[str, Any], rel: Release, exact: str, target: str,
                  keras: KerasSpec, cudnn: str | None, choice: _BaseChoice, table: Table) -> tuple[str, ...]:
    """requirements.txt lines: TF (+ CUDA wheels), Keras, the table's pins, the cell's pins."""
    lines: list[str] = []
    if target == "cpu":
        package = table.tf_keras.cpu_package if keras.flavour == "tf_keras" else rel.cpu_package_for(exact)
        lines.append(f"{package}=={exact}")
    elif rel.pip_cuda and choice.pip_cuda:
        wheels = list(rel.cuda_wheels)
        default_cudnn = cudnn is None or _vmatch(cudnn, rel.cudnn)
        if not default_cudnn:
            wheel = table.cudnn_wheel(rel.cuda)
            wheels = [f"{wheel}=={cudnn}.*" if w.startswith(f"{wheel}==") else w for w in wheels]
        extra = rel.and_cuda_extra and default_cudnn
        lines += [f"tensorflow[and-cuda]=={exact}" if extra else f"tensorflow=={exact}", *wheels]
    elif rel.pip_cuda:
        lines.append(f"tensorflow=={exact}")  # an explicit base carries its own CUDA
    else:
        lines.append(f"{rel.gpu_package}=={exact}")
    if keras.requirement:
        lines.append(keras.requirement)
    if keras.flavour == "tf_keras" and table.tf_keras.pin_keras3 and rel.keras3:
        lines.append(f"keras=={rel.keras3}")
    lines += [p.requirement for p in rel.pins]
    pins = values.get("pins", [])
    if not isinstance(pins, list) or not all(isinstance(p, str) for p in pins):
        raise where.error("pins", "expected an array of requirement strings", 'write pins = ["h5py==2.10.0"]')
    for pin in pins:
        _checked(where, "pins", pin, "requirement", "a requirement with a version specifier",
                 'write one requirement per string, like "h5py==2.10.0" or "numpy<1.19" (no markers, no spaces)')
    lines += pins
    for line in lines:  # the table is data too: the same gate as user input
        if not PATTERNS["requirement"].fullmatch(line):
            raise where.error(None, f"requirement {line!r} from the compatibility table is malformed",
                              "fix tfmatrix/data/releases.toml")
    return tuple(lines)


def _resolve_env(where: _Where, values: Mapping[str, Any], keras: KerasSpec,
                 table: Table) -> tuple[tuple[str, str], ...]:
    derived = list(table.tf_keras.env) if keras.flavour == "tf_keras" else []
    env = values.get("env", {})
    if not isinstance(env, dict):
        raise where.error("env", f"expected a table, got {_type_name(env)}", 'write env = { NAME = "value" }')
    out = list(derived)
    for name, value in env.items():
        if not PATTERNS["env_name"].fullmatch(name):
            raise where.error("env", f"{name!r} is not an environment variable name", "use letters, digits and _")
        if name in RESERVED_ENV or name.startswith(RESERVED_ENV_PREFIX) or name in dict(derived):
            raise where.error("env", f"{name} is set by tfmatrix itself", f"remove {name} from env")
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise where.error("env", f"{name}: expected a string, got {_type_name(value)}", f'write {name} = "..."')
        text = str(value)
        if not PATTERNS["env_value"].fullmatch(text):
            raise where.error("env", f"{name}: {text!r} contains characters that are not allowed",
                              "use letters, digits, spaces and _.,:/=+@%- (no quotes, $, ; or newlines)")
        out.append((name, text))
    return tuple(out)


_NAME_FIELDS = ("tf", "release", "keras", "python", "target", "cuda", "cudnn", "default")


def _resolve_name(where: _Where, values: Mapping[str, Any], fields: Mapping[str, str]) -> str:
    given = _get_str(where, values, "name", fields["default"])
    name = fields["default"] if given is None else given
    if given is not None:
        def sub(m: re.Match[str]) -> str:
            if m.group(1) not in fields:
                raise where.error("name", f"unknown placeholder {{{m.group(1)}}}", "use " + " ".join(
                    f"{{{f}}}" for f in _NAME_FIELDS))
            return fields[m.group(1)]

        name = re.sub(r"\{([^{}]*)\}", sub, given)
    if not PATTERNS["name"].fullmatch(name):
        raise where.error("name", f"{name!r} is not a valid cell name",
                          "use 1-63 lowercase letters, digits and . _ - (starting and ending with a letter or digit)")
    return name


def resolve_cell(file: str, origin: str, values: Mapping[str, Any], settings: Settings, table: Table) -> Cell:
    """Validate one cell's raw values against the table and build its ``Cell`` (pure)."""
    where = _Where(file, origin)
    _check_keys(where, values, CELL_KEYS, "cell")
    allow = values.get("allow_untested", False)
    if not isinstance(allow, bool):
        raise where.error("allow_untested", f"expected true or false, got {_type_name(allow)}",
                          "write allow_untested = true")
    where.allow_untested = allow
    rel, exact, tf_written = _resolve_tf(where, values, table)
    target = _get_str(where, values, "target", "cpu") or "cpu"
    if target not in TARGETS:
        raise where.error("target", f"{target!r} is not a target", 'use "cpu" or "gpu"')
    keras, keras_part = _resolve_keras(where, values, rel)
    choice = _resolve_base(where, values, rel, target, table, settings.base_registry)
    cuda, cudnn = _resolve_cuda(where, values, rel, target, choice, table)
    requirements = _requirements(where, values, rel, exact, target, keras, cudnn, choice, table)
    env = _resolve_env(where, values, keras, table)
    default = "-".join(p for p in (f"tf{tf_written}", keras_part, target) if p)
    name = _resolve_name(where, values, {
        "tf": tf_written, "release": rel.tf, "keras": keras_part or keras.flavour, "python": choice.python,
        "target": target, "cuda": cuda or "", "cudnn": cudnn or "", "default": default,
    })  # fmt: skip
    preset = _preset(where, "preset", values["preset"]) if "preset" in values else settings.preset
    repeats = _repeats(where, "repeats", values["repeats"]) if "repeats" in values else settings.repeats
    timeout_s = _timeout(where, "timeout", values["timeout"]) if "timeout" in values else settings.timeout_s
    memory = _memory(where, "memory", values["memory"]) if "memory" in values else settings.memory
    return Cell(
        name=name, tf=exact, tf_release=rel.tf, keras=keras, python=choice.python, target=target,
        cuda=cuda, cudnn=cudnn, base=choice.base, requirements=requirements, env=env, preset=preset,
        repeats=repeats, timeout_s=timeout_s, memory=memory, allow_untested=allow,
        untested=tuple(where.untested), origin=f"{file}: {origin}", bootstrap=choice.bootstrap,
    )  # fmt: skip


# --------------------------------------------------------------------------- whole file


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
    top = _Where(file, "top level")
    for key in doc:
        if key not in TOP_KEYS:
            raise top.error(key, "unknown table", _suggest(key, TOP_KEYS))
    settings = parse_settings(file, doc, environ)
    raw: list[tuple[dict[str, Any], str]] = []
    for i, cell_table in enumerate(_tables(file, doc, "cell")):
        raw.append((cell_table, f"cell[{i}]"))
    products = _tables(file, doc, "product")
    sizes = [product_size(i, p) for i, p in enumerate(products)]       # counted before anything is expanded
    refusal = too_big(file, len(raw), sizes, settings.max_cells)
    if refusal:
        raise UserError(refusal)
    for i, product in enumerate(products):
        raw += expand_product(file, i, product)
    empty = empty_products(file, sizes)
    if not raw:
        raise UserError(empty[0] if empty else f"{file}: the matrix has no cells; add a [[cell]] or [[product]] table")
    cells = [resolve_cell(file, origin, values, settings, table) for values, origin in raw]
    seen: dict[str, Cell] = {}
    for cell in cells:
        if cell.name in seen:
            first = seen[cell.name].origin.removeprefix(f"{file}: ")
            raise UserError(f"{cell.origin}: cell '{cell.name}' has the same name as {first}; "
                            "set name = \"...\" on one of them")
        seen[cell.name] = cell
    baseline = settings.baseline
    if baseline is None:
        baseline = min(cells, key=lambda c: version_key(c.tf)).name  # oldest; first in file order on ties
    elif baseline not in seen:
        close = difflib.get_close_matches(baseline, list(seen), n=1, cutoff=0.6)
        fix = f"did you mean '{close[0]}'?" if close else "cells are: " + ", ".join(seen)
        raise UserError(f"{file}: [matrix]: key 'baseline': no cell is named {baseline!r}; {fix}")
    return Matrix(path=path, cells=tuple(cells), settings=Settings(
        preset=settings.preset, baseline=baseline, timeout_s=settings.timeout_s, memory=settings.memory,
        repeats=settings.repeats, base_registry=settings.base_registry, max_cells=settings.max_cells),
        notes=tuple(empty))  # fmt: skip


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
