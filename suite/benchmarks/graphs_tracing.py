"""tf.function tracing and retracing, seed 004: ``graphs.tracing``.

``a_function_with_python_side_effect(x) = x * x + tf.constant(2)`` through
``tf.function``, with a Python counter incremented in its body (it runs once
per trace). One call per timed step; what each step passes is fixed per
variant, so the trace count is deterministic (``extra.traces`` vs ``extra.expected_traces``, with
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
the question is asked of the cell's framework (``api=backend``): the same five
arguments through ``call=compiled``, where JAX traces Python scalars as
arguments and PyTorch specialises on the first and marks the value dynamic on
the second, plus ``arg=python_distinct, call=compiled_static``
(``jax.jit(static_argnums=0)``, ``torch.compile(dynamic=False)``: a compile per
value, what ``tf.function`` does with Python arguments). Traces are counted
where each compiler traces (``frameworks.compiler``); ``expected_traces`` is
given for JAX, whose rule is fixed, and left out for PyTorch, whose dynamic-shape
heuristics change between releases.

Every timed call brings its result to host memory (``.numpy()``,
``jax.device_get``, ``Tensor.cpu()``): eager GPU ops are asynchronous.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..definitions import BACKEND_API, Benchmark, NotApplicable, Prepared, Preset, Variant, make_variant
from ..frameworks import call_info, compile_reason, compiler, materialize, prepare_ops

TRACING_ARGS = ("tensor", "python_same", "python_cycle", "tensor_shapes", "python_distinct")
TENSOR_VALUES = 8
PYTHON_CYCLE = (2, 3, 4)
SHAPE_LENGTHS = (1, 2, 3)
REFRESH_EVERY = 100

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

        args = tracing_arguments(arg, lambda i: tf.constant(i, dtype=tf.int32),
                                 lambda n: tf.constant(np.arange(n, dtype="int32")))

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


BENCHMARKS = [Tracing()]
