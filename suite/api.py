"""The benchmark API for your own files (``API_VERSION`` 1): what a user benchmark may import from the suite.

A user file declares benchmarks the way the built-in catalogue does, in a
few lines, and lists them in ``BENCHMARKS``::

    from suite.api import Step, UserBenchmark

    class Dense(UserBenchmark):
        name = "own.dense"
        title = "A Dense stack: fit vs model(x)"
        params = {"path": ["fit", "call"], "batch": [64]}   # every combination is one variant
        sizes = {"quick": {"batch": [8]}}                    # per preset; other presets use params

        def setup(self, p, env):
            keras = env.keras                                # this cell's Keras (tf.keras)
            model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64), keras.layers.Dense(1)])
            x = env.rng().rand(p["batch"], 32).astype("float32")
            if p["path"] == "call":
                return lambda: env.materialize(model(x))
            model.compile("adam", "mse")
            y = env.rng(2).rand(p["batch"], 1).astype("float32")
            fit = lambda: model.fit(x, y, epochs=1, verbose=0)
            return Step(fit, first=fit)                       # the first fit builds the train function

    BENCHMARKS = [Dense()]

Only this module's names are the stable surface (``__all__``); a file that
imports other ``suite`` modules may break with any suite release. The rules
a file must follow (import TensorFlow/Keras inside ``setup``, never at the
top: the suite lists variants without TensorFlow) are in docs/own-benchmarks.md
("Benchmark your own model").
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .definitions import Benchmark, NotApplicable, Prepared, Preset, Variant, make_variant
from .harness import time_once, timer

API_VERSION = 1
APIS = ("tf.keras", "keras", "tf")     # tf: plain TensorFlow, no Keras
MODES = ("eager", "graph")

__all__ = ["API_VERSION", "Env", "NotApplicable", "Step", "UserBenchmark"]


class Step:
    """What ``setup`` returns when a bare callable is not enough.

    ``fn``: the timed call (no arguments). ``inner``: how many iterations one
    call runs (``fit`` over 10 batches: 10), so times are per iteration.
    ``first``: a call to make once before timing starts, timed apart and
    recorded as ``info.first_s`` (the ``fit`` that builds the train function,
    a ``model(x)`` that traces); without it the first call of ``fn`` is still
    timed apart (``setup.first_call_s``) and never counted as a sample.
    ``info``: facts to keep with the record (parameter counts, shapes).
    """

    def __init__(self, fn: Callable[[], Any], inner: int = 1, first: Optional[Callable[[], Any]] = None,
                 info: Optional[Dict[str, Any]] = None) -> None:
        if not callable(fn):
            raise TypeError("Step(fn): fn must be a callable taking no arguments, got %r" % (fn,))
        if not isinstance(inner, int) or inner < 1:
            raise ValueError("Step(inner=%r): a positive number of iterations per call" % (inner,))
        self.fn = fn
        self.inner = inner
        self.first = first
        self.info = dict(info or {})


class Env:
    """What ``setup`` gets besides the parameters: the cell's TensorFlow, Keras and numpy.

    On a Keras 3 cell of JAX or PyTorch there is no TensorFlow: ``tf`` and
    ``tf_version`` are None there, and ``apis = ("keras",)`` is Keras 3 on
    the cell's backend (``tf.keras`` and ``tf`` variants are n/a).
    """

    def __init__(self, worker_env: Any, api: str) -> None:
        self._env = worker_env
        self.tf = worker_env.tf
        self.np = worker_env.np
        self.mode = worker_env.mode                      # "eager" | "graph"
        self.preset = worker_env.preset.name             # "quick", "standard", ... (any name)
        self.tf_version = str(worker_env.tf.__version__) if worker_env.tf is not None else None
        self.api = api
        handle = worker_env.keras(api) if api != "tf" else None   # NotApplicable when absent
        self.keras = handle.module if handle is not None else None
        self.keras_version = handle.version if handle is not None else None
        self.keras_flavour = handle.flavour if handle is not None else None   # "keras 3", "tf_keras", ...

    def rng(self, seed: int = 1) -> Any:
        """A numpy ``RandomState``: the same data in every cell."""
        return self.np.random.RandomState(seed)

    def materialize(self, value: Any) -> Any:
        """``value`` (tensors, lists, dicts of them) as numpy: a timed call must wait for its result."""
        return self._env.compat.materialize(value)

    def require_eager(self, what: str) -> None:
        """Raise NotApplicable unless this process executes eagerly."""
        self._env.compat.require_eager(what)


class UserBenchmark(Benchmark):
    """Base class of a user benchmark: declare ``name``, ``params`` and ``setup``.

    ``name``: unique, shown in the report (``own.transformer``). ``params``:
    parameter name -> list of values; every combination is one variant,
    in declaration order. ``sizes``: preset name -> the parameters that
    differ in that preset; a preset it does not name uses ``params``.
    ``apis``: which Keras (``tf.keras``: the cell's own, Keras 2, tf_keras or
    Keras 3; ``keras``: a separate standalone package; ``tf``: none).
    ``modes``: ``eager`` and/or ``graph``. ``timeout``: seconds per variant
    (build, first call and sampling), default the preset's.
    """

    seed = "user"
    params: Mapping[str, Sequence[Any]] = {}
    sizes: Mapping[str, Mapping[str, Sequence[Any]]] = {}
    apis: Tuple[str, ...] = ("tf.keras",)
    modes: Tuple[str, ...] = ("eager",)
    timeout: Optional[float] = None

    def setup(self, p: Dict[str, Any], env: Env) -> Any:
        """Build the model and data for parameters ``p``; return the timed callable or a ``Step``.

        Raise ``NotApplicable("why")`` when this variant cannot exist in this
        cell (the report shows n/a with the reason); any other exception is an
        ``error`` record with its traceback.
        """
        raise NotImplementedError("%s: define setup(self, p, env)" % type(self).__name__)

    # -- what the suite calls ------------------------------------------------

    def params_for(self, preset: str) -> Dict[str, List[Any]]:
        """The parameter grid for ``preset``: ``params`` with the preset's ``sizes`` applied."""
        grid = dict(self.params)
        grid.update(self.sizes.get(preset, {}))
        for key, values in grid.items():
            if not isinstance(values, (list, tuple)) or not values:
                raise TypeError("%s: params[%r] must be a non-empty list of values, got %r" % (self.name, key, values))
            if key in ("api", "mode"):
                raise ValueError("%s: params[%r] is reserved; set apis = (...) or modes = (...)" % (self.name, key))
        return {k: list(v) for k, v in grid.items()}

    def variants(self, preset: Preset) -> List[Variant]:
        for api in self.apis:
            if api not in APIS:
                raise ValueError("%s: apis has %r; use %s" % (self.name, api, ", ".join(APIS)))
        for mode in self.modes:
            if mode not in MODES:
                raise ValueError("%s: modes has %r; use %s" % (self.name, mode, ", ".join(MODES)))
        grid = self.params_for(preset.name)
        out: List[Variant] = []
        for mode in self.modes:
            for api in self.apis:
                for values in itertools.product(*grid.values()):
                    v = make_variant(self, mode, api, **dict(zip(grid.keys(), values)))
                    out.append(dataclasses.replace(v, timeout=self.timeout) if self.timeout else v)
        return out

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        t0 = timer()
        user_env = Env(env, variant.api)
        p = {k: v for k, v in variant.as_dict().items() if k not in ("api", "mode")}
        made = self.setup(p, user_env)
        step = made if isinstance(made, Step) else Step(made)
        build_s = timer() - t0
        info = dict(step.info)
        if user_env.keras_version is not None:
            info["keras"] = {"flavour": user_env.keras_flavour, "version": user_env.keras_version}
        if step.first is not None:
            _, info["first_s"] = time_once(step.first)
        return Prepared(step=step.fn, inner=step.inner, info=info, build_s=build_s)
