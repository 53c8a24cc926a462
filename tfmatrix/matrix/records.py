"""The matrix's records (``Cell``, ``Settings``, ``Matrix``, Keras and base specs) and its vocabulary.

Everything else in ``tfmatrix.matrix`` produces these; renderers and runners only read
them. ``PATTERNS`` lives here because it is the one gate for every value that can reach
a template, and ``render.py`` re-checks against it.
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suite.schema import NO_TF_BACKENDS, PRESET_NAMES

from ..paths import claim_families
from .size import DEFAULT_MAX_CELLS

# Strict patterns for every value that can reach a Dockerfile or requirements file.
# Always used with fullmatch: no newline, quote, `$`, `;`, backtick or space gets through
# (env values may contain spaces; they are rendered inside double quotes).
PATTERNS: dict[str, re.Pattern[str]] = {
    "tf": re.compile(r"\d{1,2}\.\d{1,3}(?:\.\d{1,3}(?:\.post\d{1,3}|rc\d{1,2})?)?"),     # 2.22.0rc0: a candidate
    "python": re.compile(r"3\.\d{1,2}"),
    "cuda": re.compile(r"\d{1,2}\.\d{1,2}(?:\.\d{1,3})?"),
    "cudnn": re.compile(r"\d{1,2}(?:\.\d{1,2}){0,2}"),
    "backend_release": re.compile(r"\d{1,2}\.\d{1,3}(?:\.\d{1,3}){0,2}"),      # jax 0.6, 0.9.0.1; torch 2.6.0
    "keras_version": re.compile(r"\d{1,2}\.\d{1,3}\.\d{1,3}(?:\.dev\d{1,12})?"),   # .dev: keras-nightly
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
    # a Debian package name (Debian policy: lower case, digits, + - .; at least two characters)
    "os_package": re.compile(r"[a-z0-9][a-z0-9+.-]{1,62}"),
    "digest": re.compile(r"sha256:[0-9a-f]{64}"),
    # a path part is never "." or ".." (mirror.example.com/.. would name another registry's path)
    "registry": re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,62}[a-z0-9])?(?::[0-9]{1,5})?"
                           r"(?:/(?!\.\.?(?:/|$))[a-z0-9._-]{1,64}){0,3}"),
    # Docker repository path component: separators only between alphanumerics.
    "name": re.compile(r"(?=[a-z0-9._-]{1,63}$)[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"),
    "memory": re.compile(r"[1-9][0-9]{0,5}[kmg]"),
    "preset": re.compile(r"[a-z][a-z0-9_-]{0,31}"),
    # A Ray custom resource name (nodes declare it: ray start --resources '{"h100": 1}').
    "pool": re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}"),
    # ray://host:port (Ray Client), host:port (the GCS), or auto (the cluster this host belongs to)
    "address": re.compile(r"auto|(?:ray://)?[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})(?::[0-9]{1,5})"),
}

TARGETS = ("cpu", "gpu")
KERAS_FLAVOURS = ("tf.keras", "keras", "keras3", "tf_keras")
KNOWN_PRESETS = PRESET_NAMES  # the suite's presets: one list in suite/schema.py
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
    "preset", "repeats", "timeout", "memory", "allow_untested", "name", "backend", "pool", "opt_in",
    *NO_TF_BACKENDS,            # jax = "0.6", torch = "2.6": the backend's release
)  # fmt: skip
PRODUCT_KEYS = CELL_KEYS + ("include", "exclude")
SETTINGS_KEYS = ("preset", "baseline", "timeout", "memory", "repeats", "max_cells", "rounds", "schedule", "variants",
                 "claims")
DEFAULT_ROUNDS = 3                  # rounds of the interleaved schedule: each a fresh process per variant
AUTO_ROUNDS = "auto"                # rounds = "auto": sequential rounds, only open claim lines run again ...
AUTO_ROUNDS_CAP = 4                 # ... up to this many (analysis.stopping): every line open to the cap costs
#                                     4 rounds of the claims' variants, less than 3 of the whole catalogue did
VARIANTS = ("all", "claims")        # variants = "claims": only what the claims compare (the default's)
CLAIM_FAMILIES = claim_families()  # the built-in claim families (tfmatrix/data/claims/<name>.toml), in report order
ALL_FAMILIES = "all"                # claims = "all": every built-in family
DEFAULT_SCHEDULE = "interleaved"
SCHEDULES = ("interleaved", "sequential")   # matrix.toml's schedule and --schedule: the one list
IMAGES_KEYS = ("base_registry",)
CLUSTER_KEYS = ("address", "pool", "cpus")
DEFAULT_CLUSTER_CPUS = 2         # the CPUs a cell's preset is sized for (a 2-core host): what a CPU cell asks Ray
SUITE_KEYS = ("paths", "requirements", "claims")     # the user's own benchmarks and claims: suite_tables.py
REPORT_KEYS = ("compare",)
TOP_KEYS = ("matrix", "images", "cluster", "suite", "report", "cell", "product", "claim")



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
    pool: str | None = None         # the Ray cluster's hardware pool (a custom resource) the cell must run in
    user_requirements: tuple[str, ...] = ()     # [suite] requirements, also at the end of ``requirements``
    backend: str = "tensorflow"                 # Keras 3's backend; jax/torch cells have no TF (``tf`` is "")
    interpreter: str | None = None              # an existing environment's Python: run as it is, nothing built
    opt_in: bool = False                        # runs only when named (`--only`, `cell NAME`): a release candidate
    backend_version: str = ""                   # a jax/torch cell's backend release, exact ("0.6.2")

    @property
    def existing(self) -> bool:
        """An environment that exists already (``python = "/path/bin/python"``): the suite runs in it as it is."""
        return self.interpreter is not None

    @property
    def has_tf(self) -> bool:
        """False for a jax/torch cell: it installs Keras 3 and its backend only."""
        return self.backend == "tensorflow"

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
            **({"backend": self.backend} if self.backend != "tensorflow" or ("KERAS_BACKEND", self.backend)
               in self.env else {}),
            **({"backend_version": self.backend_version} if self.backend_version else {}),
            **({"pool": self.pool} if self.pool else {}),
            **({"interpreter": self.interpreter} if self.interpreter else {}),
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
    rounds: int = DEFAULT_ROUNDS    # every variant measured in this many rounds of the matrix, pooled (the cap: auto)
    sequential: bool = False        # rounds = "auto": after each round only the open claim lines' variants run again
    variants: str = "all"           # "claims": only the variants a claim compares (--variants)
    claims: tuple[str, ...] = CLAIM_FAMILIES[:1]    # the built-in claim families a run asks (--claims): the seeds'
    claim_files: tuple[Path, ...] = ()          # [suite] claims, resolved: the user's claims files
    schedule: str = DEFAULT_SCHEDULE    # interleaved (slices of every cell per turn) | sequential (whole cells)
    cluster_address: str | None = None   # [cluster] address: the Ray cluster the ray runner joins
    cluster_pool: str | None = None      # [cluster] pool: every cell's hardware pool unless the cell names one
    cluster_cpus: int = DEFAULT_CLUSTER_CPUS   # [cluster] cpus: the CPUs each CPU cell asks of a node
    bench_paths: tuple[Path, ...] = ()          # [suite] paths, resolved: the user's benchmark files
    requirements: tuple[str, ...] = ()          # [suite] requirements, installed into every cell
    compare: tuple[str, str] | None = None      # [report] compare: the upgrade view's (baseline, candidate)


@dataclass(frozen=True)
class Matrix:
    """A loaded matrix file: its cells in file order and its settings.

    ``notes`` are warnings about the file itself (a product that adds no cells, a [suite] path outside its folder).
    """

    path: Path
    cells: tuple[Cell, ...]
    settings: Settings
    notes: tuple[str, ...] = ()
    claim_tables: tuple[dict[str, Any], ...] = ()   # the file's own [[claim]] tables, as written (analysis reads them)

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
        """Cells whose name matches any glob (every cell but the opt-in ones when ``patterns`` is empty)."""
        if not patterns:
            return tuple(c for c in self.cells if not c.opt_in)
        return tuple(c for c in self.cells if any(fnmatch.fnmatchcase(c.name, p) for p in patterns))
