"""Seeds 002 and 004 on JAX and PyTorch: the framework's own ops and compiler in a Keras 3 cell without TF.

The seeds ask about TensorFlow's ops (``tf.matmul``, ``tf.einsum``,
``tf.stack``) and its compiler (``tf.function``). A Keras 3 cell on JAX or
PyTorch installs no TensorFlow, so the same questions are asked of its own
framework: ``jax.numpy``/``torch`` ops and ``jax.jit``/``torch.compile``.
The seed's functions run verbatim: ``Ops`` is the part of TF's namespace
they use (``matmul``, ``einsum``, ``stack``, ``eye``, ``constant``,
``dtypes.int32``), spelled by the cell's framework and placed on its default
device (the GPU where it sees one). ``keras.ops`` would add Keras's dispatch
to every op and has no compiler for a plain function, so it is not used.

Variants of these benchmarks have ``api = BACKEND_API`` (their own process
group). A TensorFlow cell answers the same questions with the ``api=tf``
variants, so it holds no ``api=backend`` variant: ``outside`` sets them aside
in its results' ``config.outside`` (``suite.schema.OUTSIDE_KEY``), as a JAX
or PyTorch cell sets aside TensorFlow's. ``outside`` is the one rule of which
framework's variant a cell runs.
"""
from __future__ import annotations

import types
from typing import Any, Callable, Dict, Optional

from .definitions import BACKEND_API, Benchmark, NotApplicable, Prepared, Variant
from .schema import FRAMEWORKS, NO_TF_BACKENDS

BACKEND_SEEDS = ("002", "004")      # the seeds whose TF variants have api=backend twins
# call -> what it is on each backend: the plain call, the compiler as users call it, and the
# compiler told to specialise on Python values (TF's tf.function default for Python arguments)
CALLS = {
    "eager": {"jax": "op-by-op jax.numpy", "torch": "eager torch"},
    "compiled": {"jax": "jax.jit", "torch": "torch.compile"},
    "compiled_static": {"jax": "jax.jit(static_argnums=0)", "torch": "torch.compile(dynamic=False)"},
}
# The seed's TF names and their counterparts, for the records' info (what exactly ran).
OP_NAMES = {"jax": "jax.numpy.%s", "torch": "torch.%s"}


def framework(backend: str) -> str:
    """The framework's name as a reader knows it ("jax" -> "JAX")."""
    return FRAMEWORKS.get(backend, backend)


def no_tf(backend: str) -> str:
    """What a Keras 3 cell of ``backend`` is, in every reason a TensorFlow variant gives there."""
    return "this cell runs Keras 3 on %s and installs no TensorFlow" % framework(backend)


def needs_tensorflow(what: str, backend: str) -> str:
    """Why ``what`` (tf.keras, tf.data input, ...) cannot be on a Keras 3 cell of ``backend``: worker and plan alike."""
    return "%s needs TensorFlow; %s" % (what, no_tf(backend))


def tf_cell_reason() -> str:
    """Why a backend variant is n/a in a TensorFlow cell (the fingerprint and the worker say the same)."""
    return ("runs on a Keras 3 cell's JAX or PyTorch backend; this cell runs TensorFlow, whose api=tf variants "
            "answer the same question")


def _backend(facts: Dict[str, Any]) -> str:
    return str((facts.get("backend") or {}).get("name") or "tensorflow")


def outside(facts: Dict[str, Any], variant: Variant, bench: Optional[Benchmark] = None) -> Optional[str]:
    """Why ``variant`` is not in this cell's catalogue: it is another framework's (``suite.schema.OUTSIDE_KEY``).

    A Keras 3 cell on JAX or PyTorch installs no TensorFlow, so tf.keras,
    TensorFlow's own ops and graph mode are not questions it can be asked
    (its ``api=keras`` and ``api=backend`` twins ask them of its framework);
    a TensorFlow cell answers the ``api=backend`` variants' questions with its
    ``api=tf`` ones; a Keras 3 variant that feeds tf.data or calls
    tf.function (``bench.tensorflow_part``) is TensorFlow's too. Such a
    variant is no n/a result of the cell: a failure to run what the cell
    holds is.
    """
    backend = _backend(facts)
    if variant.api == BACKEND_API:
        return tf_cell_reason() if backend == "tensorflow" else None
    if backend == "tensorflow":
        return None
    if variant.api == "tf":
        return "TensorFlow-only benchmark; %s%s" % (
            no_tf(backend), " (its api=backend variants ask the same of %s)" % framework(backend)
            if variant.seed in BACKEND_SEEDS else "")
    if variant.mode == "graph":
        return "graph mode is TensorFlow's (a tf.compat.v1 Session); this cell runs Keras 3 on %s, eagerly only" % (
            framework(backend))
    if variant.api == "tf.keras":
        keras = (facts.get("keras") or {}).get("tf.keras")
        said = keras.get("unavailable") if isinstance(keras, dict) else None
        return str(said or needs_tensorflow("tf.keras", backend))
    part = bench.tensorflow_part(variant) if bench is not None else None
    return needs_tensorflow(part, backend) if part else None


def cell_backend_of(compat: Any) -> str:
    """The JAX/PyTorch backend the worker runs on, or NotApplicable in a TensorFlow cell."""
    backend = getattr(compat, "backend", None)
    if backend not in NO_TF_BACKENDS:
        raise NotApplicable(tf_cell_reason())
    return str(backend)


class Ops:
    """The TF calls the seeds make, spelled by one framework on one device.

    ``module`` is ``jax.numpy`` or ``torch``; ``put`` copies a numpy array to
    the device; ``to_host`` brings a result back as numpy (a timed call waits
    for the device: JAX dispatches asynchronously, CUDA kernels too).
    """

    def __init__(self, backend: str, module: Any, device: str, put: Callable[[Any], Any],
                 to_host: Callable[[Any], Any], place: Callable[[Any], Any]) -> None:
        self.backend = backend
        self.module = module
        self.device = device
        self.put = put
        self.to_host = to_host
        self._place = place
        self.dtypes = types.SimpleNamespace(int32=module.int32)

    def matmul(self, a: Any, b: Any) -> Any:
        return self.module.matmul(a, b)

    def einsum(self, spec: str, *operands: Any) -> Any:
        return self.module.einsum(spec, *operands)

    def stack(self, values: Any, axis: int = 0) -> Any:
        if self.backend == "torch":
            return self.module.stack(values, dim=axis)
        return self.module.stack(values, axis=axis)

    def eye(self, n: int, dtype: Any = None) -> Any:
        return self._place(self.module.eye(n, dtype=dtype))

    def constant(self, value: Any, dtype: Any = None) -> Any:
        """A scalar or array on the device; Python ints are int32, as ``tf.constant`` makes them."""
        if dtype is None and isinstance(value, int):
            dtype = self.module.int32
        return self._place(self.module.asarray(value, dtype=dtype))

    def name(self, op: str) -> str:
        return OP_NAMES[self.backend] % op


def enable_float64(backend: str) -> Optional[str]:
    """JAX computes float64 only with ``jax_enable_x64`` (else it silently truncates): turn it on.

    The seed's matrices are float64 (``np.random.uniform``), on both of its
    sides; PyTorch keeps float64 as given. Returns the setting made, for the record.
    """
    if backend != "jax":
        return None
    import jax

    jax.config.update("jax_enable_x64", True)
    return "jax_enable_x64=True"


def jax_ops() -> Ops:
    import jax
    import jax.numpy as jnp
    import numpy as np

    dev = jax.devices()[0]

    def put(a: Any) -> Any:
        return jax.device_put(a, dev)

    def to_host(x: Any) -> Any:
        return np.asarray(jax.device_get(x))

    return Ops("jax", jnp, "%s:%d" % (dev.platform, dev.id), put, to_host, put)


def torch_ops() -> Ops:
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"

    def put(a: Any) -> Any:
        return torch.from_numpy(a).to(device)

    def to_host(x: Any) -> Any:
        if device == "cuda":
            torch.cuda.synchronize()
        return x.detach().cpu().numpy() if hasattr(x, "detach") else x

    def place(t: Any) -> Any:
        return t.to(device)

    return Ops("torch", torch, device, put, to_host, place)


def ops_for(backend: str) -> Ops:
    return {"jax": jax_ops, "torch": torch_ops}[backend]()


def materialize(ops: Ops, value: Any) -> Any:
    """Every array of a result on the host (lists and tuples element by element)."""
    if isinstance(value, (list, tuple)):
        return [materialize(ops, v) for v in value]
    return ops.to_host(value)


def int_matmul_unavailable(ops: Ops) -> Optional[str]:
    """PyTorch has no integer matrix product on CUDA; the seed's power(x, 100) is int32."""
    if ops.backend == "torch" and ops.device.startswith("cuda"):
        return ("torch.matmul has no int32 kernel on CUDA ('addmm_cuda' not implemented for 'Int'); the seed's "
                "power(x, 100) is int32, so this PyTorch GPU cell cannot run it")
    return None


def compiler(ops: Ops, call: str, on_trace: Callable[[], None]) -> Callable[[Callable[..., Any]], Any]:
    """``fn -> compiled fn`` for ``call`` ("compiled" or "compiled_static"), counting traces with ``on_trace``.

    JAX runs a jitted function's Python body once per trace, so the count is
    taken there. PyTorch's Dynamo replays a body's Python side effects on
    every call, so it is counted where a graph is handed to the compiler: a
    backend that counts, then compiles with inductor (the default).
    """
    static = call == "compiled_static"
    if ops.backend == "jax":
        import jax

        def jit(fn: Callable[..., Any]) -> Any:
            def counted(*args: Any) -> Any:
                on_trace()          # Python side effect: runs once per trace
                return fn(*args)
            return jax.jit(counted, static_argnums=(0,) if static else ())
        return jit
    import torch

    inductor = torch._dynamo.lookup_backend("inductor")

    def counting(gm: Any, example_inputs: Any) -> Any:
        on_trace()
        return inductor(gm, example_inputs)

    def compile_(fn: Callable[..., Any]) -> Any:
        return torch.compile(fn, backend=counting, dynamic=False if static else None)
    return compile_


def compile_reason(compat: Any, ops: Ops) -> Optional[str]:
    """Why the cell's compiler cannot run here (torch.compile without a C++ compiler), or None."""
    return compat.compile_unavailable() if ops.backend == "torch" else None


# Where a backend step's data lives (``info.data``): a GPU crossover depends on it (a transfer each call moves it)
DATA_ON_DEVICE = "inputs on the device (copied there once), the result copied to the host each call"


def call_info(ops: Ops, call: str) -> Dict[str, Any]:
    """What a call ran as, for the record: the framework, its device, and the compiler."""
    return {"backend": ops.backend, "framework": framework(ops.backend), "device": ops.device,
            "call_as": CALLS[call][ops.backend]}


def prepare_ops(compat: Any, float64: bool = False) -> Ops:
    """The cell's framework on its default device (NotApplicable in a TensorFlow cell)."""
    backend = cell_backend_of(compat)
    if float64:
        enable_float64(backend)
    return ops_for(backend)


def backend_step(ops: Ops, compat: Any, values: Any, fn: Callable[..., Any], call: str = "eager") -> Prepared:
    """``fn`` on device copies of ``values`` (numpy), plain or compiled; the twin of ``graphs.eager_step``.

    A compiled step's ``after`` reports how many graphs the compiler traced.
    """
    args = [ops.put(v) for v in values]
    info = dict(call_info(ops, call), data=DATA_ON_DEVICE)
    counter = {"traces": 0}
    if call != "eager":
        reason = compile_reason(compat, ops)
        if reason:
            raise NotApplicable(reason)

        def traced() -> None:
            counter["traces"] += 1
        fn = compiler(ops, call, traced)(fn)

    def step() -> Any:
        return materialize(ops, fn(*args))

    after = (lambda: dict(counter)) if call != "eager" else None
    return Prepared(step=step, info=info, after=after)
