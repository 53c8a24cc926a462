"""Graph vs eager execution, XLA, and tracing: seeds 003 and 004.

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
* ``graphs.tracing`` (seed 004): ``a_function_with_python_side_effect(x) =
  x * x + tf.constant(2)`` through ``tf.function``, with a Python counter
  incremented in its body (it runs once per trace). One call per timed step;
  what each step passes is fixed per variant, so the trace count is
  deterministic (``extra.traces`` vs ``extra.expected_traces``, with
  ``extra.calls`` and, where TF has it, ``experimental_get_tracing_count``):

  - ``arg=tensor``: scalar int32 tensors cycling through 8 values -> 1 trace;
  - ``arg=python_same``: the Python int 2 every time -> 1 trace;
  - ``arg=python_cycle``: Python ints cycling 2, 3, 4 -> 3 traces;
  - ``arg=tensor_shapes``: int32 vectors of lengths 1, 2, 3 in turn -> 3 traces;
  - ``arg=python_distinct``: a new Python int every call -> one trace per
    call. The function object is replaced by a fresh one every
    ``REFRESH_EVERY`` calls (the new one traces on its first call like any
    other), so long runs do not keep thousands of graphs alive.

  The harness's ``first_call_s`` is the first call, trace included; the
  samples are the steady calls (for ``python_distinct`` every call traces).

On a Keras 3 cell without TensorFlow (JAX, PyTorch; ``suite.frameworks``)
the seed-004 questions are asked of the cell's framework (``api=backend``):
``graphs.power`` and ``graphs.matmul_bias`` run the seed's functions verbatim
on ``jnp``/``torch``, ``call=eager`` (op by op) and ``call=compiled``
(``jax.jit``, ``torch.compile``); ``graphs.tracing`` runs the same five
arguments through ``call=compiled``, where JAX traces Python scalars as
arguments and PyTorch specialises on the first and marks the value dynamic on
the second, plus ``arg=python_distinct, call=compiled_static``
(``jax.jit(static_argnums=0)``, ``torch.compile(dynamic=False)``: a compile per
value, what ``tf.function`` does with Python arguments). Traces are counted
where each compiler traces (``frameworks.compiler``); ``expected_traces`` is
given for JAX, whose rule is fixed, and left out for PyTorch, whose dynamic-shape
heuristics change between releases.

Every timed call brings its result to host memory (``.numpy()``,
``Session.run``, ``jax.device_get``, ``Tensor.cpu()``): eager GPU ops are
asynchronous.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ..definitions import Benchmark, NotApplicable, Prepared, Preset, Variant, make_variant
from ..frameworks import (
    BACKEND_API,
    Ops,
    backend_step,
    call_info,
    compile_reason,
    compiler,
    int_matmul_unavailable,
    materialize,
    prepare_ops,
)

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

        from ..harness import time_once

        model, build_s = time_once(lambda: ctor(weights=None, input_shape=shape[1:]))
        x = compat.eager_input(k, env.rng(1).random_sample(shape))
        info: Dict[str, Any] = {"keras": k.describe(), "params": int(model.count_params()), "model_build_s": build_s,
                                "jit_keyword": keyword, "input_dtype": str(x.dtype)}
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


# -- graphs.tracing ----------------------------------------------------------------

TRACING_ARGS = ("tensor", "python_same", "python_cycle", "tensor_shapes", "python_distinct")
TENSOR_VALUES = 8
PYTHON_CYCLE = (2, 3, 4)
SHAPE_LENGTHS = (1, 2, 3)
REFRESH_EVERY = 100


class Tracing(Benchmark):
    name = "graphs.tracing"
    seed = "004"
    title = "Seed 004: tf.function tracing and retracing, Python scalars vs tensors (traces counted)"

    def variants(self, preset: Preset) -> List[Variant]:
        tf = [make_variant(self, "eager", "tf", arg=arg) for arg in TRACING_ARGS]
        return tf + [make_variant(self, "eager", BACKEND_API, arg=arg, call=call) for arg, call in BACKEND_TRACING]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        if variant.api == BACKEND_API:
            return backend_tracing(variant, env)
        tf, np, compat = env.tf, env.np, env.compat
        arg = variant.param("arg")
        compat.require_eager("tf.function")
        counter = {"traces": 0, "calls": 0}

        def a_function_with_python_side_effect(x: Any) -> Any:
            counter["traces"] += 1    # Python side effect: runs once per trace
            return x * x + tf.constant(2)

        def new_function() -> Any:
            return compat.tf_function(a_function_with_python_side_effect)

        state: Dict[str, Any] = {"fn": new_function(), "retired_tf_count": 0, "retired_unknown": False}
        materialize = compat.materialize

        args: List[Any]
        if arg == "tensor":
            args = [tf.constant(i, dtype=tf.int32) for i in range(TENSOR_VALUES)]
        elif arg == "python_same":
            args = [2]
        elif arg == "python_cycle":
            args = list(PYTHON_CYCLE)
        elif arg == "tensor_shapes":
            args = [tf.constant(np.arange(n, dtype="int32")) for n in SHAPE_LENGTHS]
        else:
            args = []

        def step() -> Any:
            i = counter["calls"]
            counter["calls"] = i + 1
            if args:
                return materialize(state["fn"](args[i % len(args)]))
            if i and i % REFRESH_EVERY == 0:          # python_distinct: bound the graphs kept alive
                n = compat.tracing_count(state["fn"])
                state["retired_unknown"] = state["retired_unknown"] or n is None
                state["retired_tf_count"] += n or 0
                state["fn"] = new_function()
            return materialize(state["fn"](i + 2))

        def expected(calls: int) -> int:
            if arg == "python_distinct":
                return calls
            distinct = {"tensor": 1, "python_same": 1, "python_cycle": len(PYTHON_CYCLE),
                        "tensor_shapes": len(SHAPE_LENGTHS)}[arg]
            return min(calls, distinct)

        def after() -> Dict[str, Any]:
            facts: Dict[str, Any] = {"traces": counter["traces"], "calls": counter["calls"],
                                     "expected_traces": expected(counter["calls"])}
            n: Optional[int] = compat.tracing_count(state["fn"])
            if n is not None and not state["retired_unknown"]:
                facts["tf_tracing_count"] = n + state["retired_tf_count"]
            return facts

        return Prepared(step=step, after=after, info={"refresh_every": REFRESH_EVERY} if not args else {})


# api=backend: every argument through the compiler as users call it, and distinct Python values through the
# compiler told to specialise on them (TF's tf.function behaviour for Python arguments)
BACKEND_TRACING = tuple((arg, "compiled") for arg in TRACING_ARGS) + (("python_distinct", "compiled_static"),)


def tracing_arguments(arg: str, scalar: Any, vector: Any) -> List[Any]:
    """What each call of ``arg`` passes, in turn (empty: a new Python int every call).

    ``scalar(i)`` and ``vector(n)`` make an int32 0-d tensor and an int32 vector of length n.
    """
    if arg == "tensor":
        return [scalar(i) for i in range(TENSOR_VALUES)]
    if arg == "python_same":
        return [2]
    if arg == "python_cycle":
        return list(PYTHON_CYCLE)
    if arg == "tensor_shapes":
        return [vector(n) for n in SHAPE_LENGTHS]
    return []


def jax_expected_traces(arg: str, call: str, calls: int) -> int:
    """jax.jit's rule: a trace per distinct shape/dtype; Python scalars are traced (weakly typed) unless static."""
    if call == "compiled_static":
        return calls
    return min(calls, len(SHAPE_LENGTHS) if arg == "tensor_shapes" else 1)


def backend_tracing(variant: Variant, env: Any) -> Prepared:
    """``graphs.tracing`` on JAX or PyTorch: ``x * x + constant(2)`` through the cell's compiler, traces counted."""
    compat, np = env.compat, env.np
    ops = prepare_ops(compat)
    arg, call = variant.param("arg"), variant.param("call")
    why = compile_reason(compat, ops)
    if why:
        raise NotApplicable(why)
    counter = {"traces": 0, "calls": 0}

    def traced() -> None:
        counter["traces"] += 1

    two = ops.constant(2)

    def a_function_with_python_side_effect(x: Any) -> Any:
        return x * x + two

    compile_ = compiler(ops, call, traced)
    # jax.jit(static_argnums) keeps a compiled function per value: renewed as graphs.tracing renews tf.function
    refresh = REFRESH_EVERY if (ops.backend == "jax" and call == "compiled_static") else 0
    state = {"fn": compile_(a_function_with_python_side_effect)}
    args = tracing_arguments(arg, lambda i: ops.constant(i), lambda n: ops.put(np.arange(n, dtype="int32")))

    def step() -> Any:
        i = counter["calls"]
        counter["calls"] = i + 1
        if args:
            return materialize(ops, state["fn"](args[i % len(args)]))
        if refresh and i and i % refresh == 0:
            state["fn"] = compile_(a_function_with_python_side_effect)
        return materialize(ops, state["fn"](i + 2))

    def after() -> Dict[str, Any]:
        facts: Dict[str, Any] = {"traces": counter["traces"], "calls": counter["calls"]}
        if ops.backend == "jax":
            facts["expected_traces"] = jax_expected_traces(arg, call, counter["calls"])
        return facts

    info: Dict[str, Any] = dict(call_info(ops, call), refresh_every=refresh or None)
    return Prepared(step=step, after=after, info=info)


BENCHMARKS = [XlaModel(), Power(), MatmulBias(), Tracing()]
