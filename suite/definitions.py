"""What a benchmark is: presets, variants, ``Prepared`` and the ``Benchmark`` base class.

Pure descriptions, with no loading: ``suite.registry`` (the catalogue) and
``suite.plugins`` (user files) both build on this module and it imports
neither, so imports run one way (definitions <- plugins <- registry).
Listing variants never imports TensorFlow: ``variants()`` only describes
what to run; whether a variant is possible in a cell is decided inside the
worker (``prepare`` raises ``NotApplicable``).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .harness import Budget
from .schema import param_text

BACKEND_API = "backend"             # the variants that run on the cell's Keras 3 backend (JAX, PyTorch)
MODES = ("eager", "graph")


class NotApplicable(Exception):
    """This variant cannot exist in this cell (the API is missing or differs).

    The message is the reason shown in results and the report.
    """


@dataclass(frozen=True)
class Preset:
    """How much work a run does. Presets scale work, never meaning."""

    name: str
    budget: Budget
    processes: int          # fresh processes per variant (between-process spread)
    timeout: float          # per variant, seconds, including build and first call
    unstable_cv: float      # CV above which a variant is flagged unstable
    description: str = ""
    window: int = 24        # variants built together and sampled round robin (1: one after the other)
    values: Tuple[Tuple[str, Any], ...] = ()   # parameters at other values than the benchmarks' (a sweep's n=300)


# 5 samples, then up to 12 or 1 s a variant until the median's interval is within 2%
QUICK_BUDGET = Budget(warmup=1, repeats=5, min_repeats=3, target_time=0.02, max_number=2000, max_time=1.0,
                      max_repeats=12, ci=0.02)

PRESETS: Dict[str, Preset] = {
    "quick": Preset(
        "quick",
        QUICK_BUDGET,
        processes=1,
        timeout=180.0,
        unstable_cv=0.10,
        description="CI: every code path, smallest shapes, few iterations, one process",
    ),
    "seed": Preset(
        "seed",
        QUICK_BUDGET,                  # the seed sizes cost time; the sampling stays quick's
        processes=1,
        timeout=600.0,
        unstable_cv=0.10,
        description="the default: every seed claim at the seed's own size where a 2-core CPU bears it "
                    "(else the largest that fits, both shown), quick's sampling budget, one process",
    ),
    "standard": Preset(
        "standard",
        Budget(warmup=3, repeats=7, min_repeats=3, target_time=0.2, max_number=20000, max_time=12.0,
               max_repeats=25, ci=0.01),
        processes=2,
        timeout=900.0,
        unstable_cv=0.05,
        description="the seeds' own sizes where a CPU can bear them; two processes",
    ),
    "full": Preset(
        "full",
        Budget(warmup=5, repeats=10, min_repeats=5, target_time=0.5, max_number=50000, max_time=60.0,
               max_repeats=40, ci=0.01),
        processes=3,
        timeout=3600.0,
        unstable_cv=0.05,
        description="the seeds' sizes everywhere; three processes",
    ),
}


def preset_to_json(preset: Preset) -> str:
    return json.dumps(dataclasses.asdict(preset), sort_keys=True)


def preset_from_json(text: str) -> Preset:
    data = json.loads(text)
    data["budget"] = Budget(**data["budget"])
    data["values"] = tuple((str(k), v) for k, v in data.get("values") or ())
    return Preset(**data)


FIXED_COUNT_MAX_TIME = 300.0    # seconds of samples a variant may take when its count is fixed (--repeats)


def customized(preset: Preset, repeats: Optional[int] = None, processes: Optional[int] = None,
               window: Optional[int] = None, values: Optional[Sequence[Tuple[str, Any]]] = None) -> Preset:
    """``preset`` with the repeat count, process count, window size and/or parameter values asked for."""
    if repeats is not None:
        # an explicit count is a fixed count: no adaptive stopping beyond it, no time cap below it (the
        # per-variant timeout still holds)
        budget = dataclasses.replace(preset.budget, repeats=repeats, max_repeats=repeats,
                                     min_repeats=min(preset.budget.min_repeats, repeats),
                                     max_time=max(preset.budget.max_time, FIXED_COUNT_MAX_TIME))
        preset = dataclasses.replace(preset, budget=budget)
    if processes is not None:
        preset = dataclasses.replace(preset, processes=processes)
    if window is not None:
        preset = dataclasses.replace(preset, window=window)
    if values:
        preset = dataclasses.replace(preset, values=tuple(values))
    return preset


@dataclass(frozen=True)
class Variant:
    """One measurable thing: a benchmark with fixed parameters in one mode.

    ``api`` picks the process group together with ``mode``: variants that need
    a different execution mode or Keras package never share a process.
    """

    benchmark: str
    seed: str
    params: Tuple[Tuple[str, Any], ...]
    mode: str = "eager"              # "eager" | "graph"
    api: str = "tf"                  # "tf.keras" | "keras" | "tf" | "numpy" | "backend" (jax/torch, suite.frameworks)
    timeout: Optional[float] = None  # overrides the preset's per-variant timeout
    always: bool = False             # selected whatever the filter (a broken user file: its error is always shown)

    @property
    def id(self) -> str:
        inner = ",".join("%s=%s" % (k, param_text(v)) for k, v in self.params)  # one spelling, the report's too
        return "%s[%s]" % (self.benchmark, inner)

    @property
    def group(self) -> str:
        """The process group: mode and Keras package.

        numpy-only variants need no Keras: they share the plain-TF process. In
        eager mode the plain-TF variants share tf.keras's process (one process
        start and one TensorFlow import a round fewer; their windows stay
        their own benchmark's): graph mode keeps them apart, since a
        ``Session`` variant must not share a graph with Keras's.
        """
        api = "tf" if self.api == "numpy" else self.api
        if self.mode == "eager" and api == "tf":
            api = "tf.keras"
        return "%s:%s" % (self.mode, api)

    def param(self, name: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == name:
                return v
        return default

    def as_dict(self) -> Dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.params}


def make_variant(benchmark: "Benchmark", mode: str, api: str, **params: Any) -> Variant:
    """Variant with ``mode`` and ``api`` also recorded among its parameters."""
    items = [(k, v) for k, v in params.items()]
    items.append(("api", api))
    items.append(("mode", mode))
    return Variant(benchmark=benchmark.name, seed=benchmark.seed, params=tuple(items), mode=mode, api=api)


@dataclass
class Prepared:
    """What a benchmark hands the harness after building its model or graph.

    ``step`` is the timed call. ``inner`` is how many iterations one call runs
    (``fit`` over a dataset of k batches); samples are reported per iteration.
    ``after`` runs once after timing and returns extra facts for the record
    (trace counts, GFLOP/s inputs). ``build_s`` overrides the default build
    time (the whole ``prepare`` call) when a benchmark times its build itself.
    ``figures`` runs once after timing and returns numbers measured beside the
    samples, each with its unit (``{"drift_pct_per_100_steps": (0.4, "%/100
    steps")}``): the record keeps one value per process. ``self_timed``: each
    call of ``step`` returns the seconds it measured itself, and that is the
    sample (a fresh process's first call: compile time, ``compile.cache``),
    one call a sample, no warm-up.
    """

    step: Callable[[], Any]
    inner: int = 1
    unit: str = "s"
    work_flops: Optional[float] = None
    after: Optional[Callable[[], Dict[str, Any]]] = None
    cleanup: Optional[Callable[[], None]] = None
    build_s: Optional[float] = None
    info: Dict[str, Any] = field(default_factory=dict)
    figures: Optional[Callable[[], Dict[str, Tuple[float, str]]]] = None
    self_timed: bool = False


class Benchmark:
    """Base class: a named benchmark from one seed, with its variants."""

    name = ""
    seed = ""
    title = ""
    description = ""

    def variants(self, preset: Preset) -> List[Variant]:
        raise NotImplementedError

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        """Build what ``variant`` times, inside a worker; may raise NotApplicable."""
        raise NotImplementedError

    def tensorflow_part(self, variant: Variant) -> Optional[str]:
        """The part of TensorFlow ``variant`` uses whatever its Keras (``"tf.data input"``), or None.

        A Keras 3 cell on JAX or PyTorch has no TensorFlow, so such a variant
        is not in its catalogue (``suite.frameworks.outside``); ``prepare`` still
        refuses it there (``compat.require_tf``), for a plan made before.
        """
        return None

    def window_key(self, variant: Variant) -> str:
        """Variants with the same key (and process group) are sampled interleaved, in one window.

        The benchmark by default: what a finding divides (predict after vs
        before compile, eager vs tf.function, np.dot vs tf.matmul) lives in
        one benchmark, so it is sampled in the same rounds and can be paired.
        """
        return self.name
