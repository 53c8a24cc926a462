"""Graph vs eager execution and XLA: seed 003, and seed 004's small functions.

* ``graphs.xla`` (seed 003, "why does tf.function without jit_compile speed
  up a Keras model's forward pass?"): a Keras application with
  ``weights=None`` (nothing is downloaded) called on one random image
  (float64, as the seed's ``np.random.random``) plainly (``call=eager``) and
  through ``tf.function(model, jit_compile=None/False/True)``. The seed's
  EfficientNetV2S (384x384 in ``full``) exists only in tf.keras 2.8+; the
  stand-in every cell has is MobileNetV2 (tf.keras since TF 1.12; 224x224 in
  ``full``, its native size). XLA is requested with the keyword the cell's
  TF spells (``jit_compile``, ``experimental_compile`` in TF 1.15 and 2.1-2.4)
  and recorded in ``info.jit_keyword``; TF 1.14 and 2.0 have neither, so
  their jit variants are n/a. tf.function needs eager execution, so these
  variants exist in eager mode only. Input sides: 384 (EfficientNetV2S) and
  224 (MobileNetV2) in ``full`` and ``seed`` (the default), 224 in ``standard``, 32 in ``quick``, where
  EfficientNetV2S (seconds to build, tens of seconds to XLA-compile at full
  size) runs only eager vs tf.function, the seed's headline; every jit
  variant runs on the stand-in in every preset.
* ``graphs.power`` (seed 004): ``power(x, 100)``, a Python loop of 100
  ``tf.matmul`` on an int32 10x10 matrix with values in [-1, 2), and
  ``graphs.matmul_bias``: the seed's ``matmul(x, y) + b`` on its 1x2, 2x1
  and scalar constants. Each plain eager, through ``tf.function``, and in
  graph mode as the TF1 user would run it: the graph built once, then
  ``Session.run`` per call (inputs held in variables, so that Grappler cannot
  fold the timed work into a constant).

Seed 004's tracing question (``graphs.tracing``) is ``suite.benchmarks.graphs_tracing``.

On a Keras 3 cell without TensorFlow (JAX, PyTorch; ``suite.frameworks``)
``graphs.power`` and ``graphs.matmul_bias`` ask the seed-004 questions of the
cell's framework (``api=backend``): the seed's functions verbatim on
``jnp``/``torch``, ``call=eager`` (op by op) and ``call=compiled``
(``jax.jit``, ``torch.compile``).

Every timed call brings its result to host memory (``.numpy()``,
``Session.run``, ``jax.device_get``, ``Tensor.cpu()``): eager GPU ops are
asynchronous.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ..definitions import BACKEND_API, Benchmark, NotApplicable, Prepared, Preset, Variant, make_variant
from ..frameworks import Ops, backend_step, int_matmul_unavailable, prepare_ops

# -- graphs.xla -----------------------------------------------------------------

XLA_MODELS = {"efficientnetv2s": "EfficientNetV2S", "mobilenetv2": "MobileNetV2"}
# call, jit_compile: the plain call, then the seed's three tf.function variants.
XLA_CALLS = (("eager", "none"), ("tf.function", "none"), ("tf.function", "false"), ("tf.function", "true"))
JIT_VALUES = {"none": None, "false": False, "true": True}
# preset -> model -> (image side, calls)
XLA_SCALE: Dict[str, Dict[str, Tuple[int, Tuple[Tuple[str, str], ...]]]] = {
    "quick": {"efficientnetv2s": (32, XLA_CALLS[:2]), "mobilenetv2": (32, XLA_CALLS)},
    # seed (the default): the seed's model and size; jit_compile=False (the same graph as None) on the stand-in only
    "seed": {"efficientnetv2s": (384, XLA_CALLS[:2] + XLA_CALLS[3:]), "mobilenetv2": (224, XLA_CALLS)},
    "standard": {"efficientnetv2s": (224, XLA_CALLS), "mobilenetv2": (224, XLA_CALLS)},
    "full": {"efficientnetv2s": (384, XLA_CALLS), "mobilenetv2": (224, XLA_CALLS)},
}


# One model per process for the variants that call it the same way (Keras package, model, input shape): the
# seed's EfficientNetV2S takes 4-5 s to build on this host, three times a round in each TF 2.8+ cell. Its calls
# do not change it (weights=None, inference), and each variant wraps it in its own tf.function, so each still
# traces and compiles its own graph: a first call stays a first call.
_MODELS: Dict[Tuple[Any, ...], Tuple[Any, float]] = {}


def shared_model(key: Tuple[Any, ...], build: Callable[[], Any]) -> Tuple[Any, float, bool]:
    """(the model, the seconds its build took, whether an earlier variant of this process built it)."""
    from ..harness import time_once

    if key in _MODELS:
        model, seconds = _MODELS[key]
        return model, seconds, True
    model, seconds = time_once(build)
    _MODELS[key] = (model, seconds)
    return model, seconds, False


class XlaModel(Benchmark):
    name = "graphs.xla"
    seed = "003"
    title = "Seed 003: Keras application forward pass, eager vs tf.function(jit_compile=None/False/True)"

    def variants(self, preset: Preset) -> List[Variant]:
        out: List[Variant] = []
        for model, (side, calls) in XLA_SCALE[preset.name].items():
            for call, jit in calls:
                out.append(make_variant(self, "eager", "tf.keras", model=model, input_shape=(1, side, side, 3),
                                        call=call, jit_compile=jit))
        return out

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        compat = env.compat
        k = env.keras(variant.api)
        call, jit = variant.param("call"), JIT_VALUES[variant.param("jit_compile")]
        compat.require_eager("calling a Keras model on data" if call == "eager" else "tf.function")
        ctor = compat.application(k, XLA_MODELS[variant.param("model")])
        keyword = None
        if call == "tf.function" and jit is not None:
            keyword = compat.jit_argument()
            if keyword is None:
                raise NotApplicable("TensorFlow %s's tf.function has no jit_compile/experimental_compile"
                                    % env.tf.__version__)
        shape = tuple(variant.param("input_shape"))

        model, build_s, shared = shared_model((k.api, k.flavour, k.version, variant.param("model"), shape),
                                              lambda: ctor(weights=None, input_shape=shape[1:]))
        x = compat.eager_input(k, env.rng(1).random_sample(shape))
        info: Dict[str, Any] = {"keras": k.describe(), "params": int(model.count_params()), "model_build_s": build_s,
                                "model_shared": shared, "jit_keyword": keyword, "input_dtype": str(x.dtype)}
        materialize = compat.materialize
        if call == "eager":
            def step() -> Any:
                return materialize(model(x))
            return Prepared(step=step, info=info)

        fn = compat.tf_function(model, jit=jit)

        def fstep() -> Any:
            return materialize(fn(x))

        return Prepared(step=fstep, info=info, after=lambda: compat.tracing_facts(fn))


# -- graphs.power and graphs.matmul_bias ------------------------------------------

POWER_EXPONENT = 100
POWER_SHAPE = (10, 10)
# call per mode: plain eager and tf.function in eager mode, a Session in graph mode.
CALLS_BY_MODE = (("eager", "eager"), ("eager", "tf.function"), ("graph", "session"))
BACKEND_CALLS = ("eager", "compiled")     # api=backend: op by op, and jax.jit / torch.compile


def power(tf: Any, x: Any, y: int) -> Any:
    """Seed 004, verbatim but for ``tf`` passed in."""
    result = tf.eye(10, dtype=tf.dtypes.int32)
    for _ in range(y):
        result = tf.matmul(x, result)
    return result


def a_regular_function(tf: Any, x: Any, y: Any, b: Any) -> Any:
    """Seed 004, verbatim but for ``tf`` passed in."""
    x = tf.matmul(x, y)
    x = x + b
    return x


def session_step(env: Any, values: Tuple[Any, ...], build: Any) -> Prepared:
    """``build(*tensors)`` as a graph over variables holding ``values``; the step runs it."""
    tf, compat = env.tf, env.compat
    compat.require_graph("Session.run of a prebuilt graph")
    graph = tf.Graph()
    with graph.as_default():
        held = [compat.graph_variable(v, name="arg%d" % i) for i, v in enumerate(values)]
        out = build(*[var.value() for var, _, _ in held])
    sess = compat.session(graph)
    for _, init, feed in held:
        sess.run(init, feed)

    def step() -> Any:
        return sess.run(out)

    return Prepared(step=step, cleanup=sess.close, info={"graph_ops": len(graph.get_operations())})


def eager_step(env: Any, values: Tuple[Any, ...], fn: Any) -> Prepared:
    """``fn`` called eagerly on tf.constant copies of ``values``; the eager twin of ``session_step``.

    The caller checks ``compat.require_eager`` first, with its own reason.
    """
    args = [env.tf.constant(v) for v in values]
    materialize = env.compat.materialize

    def step() -> Any:
        return materialize(fn(*args))

    return Prepared(step=step)


class SmallFunction(Benchmark):
    """A small seed-004 function: eager, tf.function, or a TF1 Session."""

    seed = "004"

    def variants(self, preset: Preset) -> List[Variant]:
        tf = [make_variant(self, mode, "tf", call=call, **self.params()) for mode, call in CALLS_BY_MODE]
        return tf + [make_variant(self, "eager", BACKEND_API, call=call, **self.params()) for call in BACKEND_CALLS]

    def params(self) -> Dict[str, Any]:
        raise NotImplementedError

    def inputs(self, np: Any, rng: Any) -> Tuple[Any, ...]:
        """The numpy values of the function's tensor arguments."""
        raise NotImplementedError

    def body(self, tf: Any) -> Callable[..., Any]:
        """The function of the tensor arguments (Python arguments bound)."""
        raise NotImplementedError

    def unavailable_on(self, ops: Ops) -> Optional[str]:
        """Why the function cannot run on this framework and device, or None."""
        return None

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        tf, compat = env.tf, env.compat
        call = variant.param("call")
        values = self.inputs(env.np, env.rng(1))
        if variant.api == BACKEND_API:
            ops = prepare_ops(compat)
            why = self.unavailable_on(ops)
            if why:
                raise NotApplicable(why)
            return backend_step(ops, compat, values, self.body(ops), call)
        body = self.body(tf)
        if call == "session":
            return session_step(env, values, body)

        compat.require_eager("calling TensorFlow ops on tensors")
        if call == "eager":
            return eager_step(env, values, body)
        fn = compat.tf_function(body)
        prepared = eager_step(env, values, fn)
        prepared.after = lambda: compat.tracing_facts(fn)
        return prepared


class Power(SmallFunction):
    name = "graphs.power"
    title = "Seed 004: power(x, 100), 100 chained tf.matmul on int32 10x10, eager vs tf.function vs Session"

    def params(self) -> Dict[str, Any]:
        return {"shape": POWER_SHAPE, "exponent": POWER_EXPONENT, "dtype": "int32"}

    def inputs(self, np: Any, rng: Any) -> Tuple[Any, ...]:
        # tf.random.uniform(shape=[10, 10], minval=-1, maxval=2, dtype=int32), from a fixed seed
        return (rng.randint(-1, 2, POWER_SHAPE).astype("int32"),)

    def unavailable_on(self, ops: Ops) -> Optional[str]:
        return int_matmul_unavailable(ops)

    def body(self, tf: Any) -> Callable[..., Any]:
        def power_100(x: Any) -> Any:
            return power(tf, x, POWER_EXPONENT)
        return power_100


class MatmulBias(SmallFunction):
    name = "graphs.matmul_bias"
    title = "Seed 004: matmul(x, y) + b on [[1, 2]], [[2], [3]], 4.0, eager vs tf.function vs Session"

    def params(self) -> Dict[str, Any]:
        return {"dtype": "float32"}

    def inputs(self, np: Any, rng: Any) -> Tuple[Any, ...]:
        return (np.array([[1.0, 2.0]], dtype="float32"), np.array([[2.0], [3.0]], dtype="float32"),
                np.array(4.0, dtype="float32"))

    def body(self, tf: Any) -> Callable[..., Any]:
        def fn(x: Any, y: Any, b: Any) -> Any:
            return a_regular_function(tf, x, y, b)
        return fn


BENCHMARKS = [XlaModel(), Power(), MatmulBias()]
