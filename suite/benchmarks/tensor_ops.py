"""Tensor operations, seed 002 (Li Xihan, "TensorFlow performance tips").

* ``tensor_ops.matmul``: the seed's ``np.dot(A, B)`` vs ``tf.matmul(A, B)`` on
  two random n x n float64 matrices (``np.random.uniform``), n = 10000 in
  ``full`` (the seed: 5.61 s vs 0.77 s, the latter on a GPU). Reported as
  seconds per product and, through ``work_flops`` = 2 n^3, as GFLOP/s
  (``extra.gflops_per_s``). ``tf.matmul`` runs eagerly on ``tf.constant``
  inputs (as the seed) and, in graph mode, as a prebuilt graph through
  ``Session.run`` (the TF1 way; inputs held in variables so that Grappler
  cannot fold the product into a constant). numpy's product does not depend
  on TF's mode; it runs once, in the ``numpy`` group.
* ``tensor_ops.batched_matmul``: the seed's batch of matrix products, A of
  shape [b, m, k] = [1000, 100, 1000] times B [k, l] = [1000, 1000], as a
  Python loop of ``tf.matmul(A[i], B)`` + ``tf.stack`` (``impl=loop_stack``,
  1000 ops; the seed: 0.40 s) vs one ``tf.einsum('ijk,kl->ijl', A, B)``
  (``impl=einsum``; 0.28 s). float32 (the seed does not say; TF's default).
  Eager, and in graph mode the same ops built once and run per call (the
  loop becomes 1000 graph nodes).

The timed call always includes bringing the product to host memory
(``.numpy()`` or ``Session.run``): eager GPU ops are asynchronous, so a
call that does not read its result would time only the kernel launch (the
seed's 0.77 s for a 10000^3 product is likely such a figure).

Scale: ``full`` is the seed's sizes; ``standard`` keeps the batched shapes
(about 200 GFLOP per call) and uses n = 4000 for the square product (the
seed's n = 10000 is 2 TFLOP per call, about a minute on 2 CPU cores);
``seed`` (the default) keeps each product the seed's [100, 1000] x
[1000, 1000] but batches 100 of them, not 1000 (the loop/einsum ratio is the
same at both batch sizes on 2 cores, 1.6x, at a tenth of the time), and
uses n = 2000 (a fraction of a second a call, where the seed's n = 10000 takes
about 30 s with numpy); ``quick`` shrinks both.

On a Keras 3 cell without TensorFlow (JAX, PyTorch) the same questions are
asked of the cell's framework (``api=backend``, ``suite.frameworks``):
``impl=matmul`` is ``jax.numpy.matmul``/``torch.matmul`` on device copies of
the same float64 matrices (JAX with ``jax_enable_x64``), against the same
``numpy.dot`` variant, and ``impl=loop_stack``/``einsum`` run the seed's two
functions verbatim on ``jnp``/``torch``, at the same sizes per preset.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ..definitions import BACKEND_API, Benchmark, NotApplicable, Prepared, Preset, Variant, make_variant
from ..frameworks import backend_step, prepare_ops
from .graphs import eager_step, session_step

MATMUL_N = {"quick": 256, "seed": 2000, "standard": 4000, "full": 10000}
# preset -> (A shape [b, m, k], B shape [k, l])
BATCHED_SHAPES: Dict[str, Tuple[Tuple[int, int, int], Tuple[int, int]]] = {
    "quick": ((100, 20, 100), (100, 100)),
    "seed": ((100, 100, 1000), (1000, 1000)),
    "standard": ((1000, 100, 1000), (1000, 1000)),
    "full": ((1000, 100, 1000), (1000, 1000)),
}


def loop_stack(tf: Any, A: Any, B: Any, b: int) -> Any:
    """Seed 002, verbatim but for ``tf`` and the batch size passed in."""
    C = []
    for i in range(b):
        C.append(tf.matmul(A[i], B))
    C = tf.stack(C, axis=0)
    return C


def einsum(tf: Any, A: Any, B: Any, b: int) -> Any:
    """Seed 002: one batched product."""
    return tf.einsum("ijk,kl->ijl", A, B)


BATCHED = {"loop_stack": loop_stack, "einsum": einsum}


class Matmul(Benchmark):
    name = "tensor_ops.matmul"
    seed = "002"
    title = "Seed 002: np.dot vs tf.matmul on two n x n float64 matrices (n = 10000 in full), GFLOP/s"

    def variants(self, preset: Preset) -> List[Variant]:
        n = MATMUL_N[preset.name]
        return [
            make_variant(self, "eager", "numpy", impl="numpy.dot", n=n, dtype="float64"),
            make_variant(self, "eager", "tf", impl="tf.matmul", n=n, dtype="float64"),
            make_variant(self, "graph", "tf", impl="tf.matmul", n=n, dtype="float64"),
            make_variant(self, "eager", BACKEND_API, impl="matmul", n=n, dtype="float64"),
        ]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        tf, np, compat = env.tf, env.np, env.compat
        n = int(variant.param("n"))
        rng = env.rng(1)
        A = rng.uniform(size=(n, n))
        B = rng.uniform(size=(n, n))
        flops = 2.0 * n ** 3
        impl = variant.param("impl")
        if impl == "numpy.dot":
            def dot() -> Any:
                return np.dot(A, B)
            return Prepared(step=dot, work_flops=flops, info={"numpy": np.__version__})
        if variant.api == BACKEND_API:
            ops = prepare_ops(compat, float64=True)
            prepared = backend_step(ops, compat, (A, B), ops.matmul)
            prepared.info["op"] = ops.name("matmul")
            prepared.work_flops = flops
            return prepared
        if impl != "tf.matmul":
            raise NotApplicable("unknown implementation %s" % impl)
        if variant.mode == "graph":
            prepared = session_step(env, (A, B), lambda a, b: tf.matmul(a, b))
        else:
            compat.require_eager("tf.matmul on tf.constant inputs")
            prepared = eager_step(env, (A, B), lambda a, b: tf.matmul(a, b))
        prepared.work_flops = flops
        return prepared


class BatchedMatmul(Benchmark):
    name = "tensor_ops.batched_matmul"
    seed = "002"
    title = "Seed 002: loop of tf.matmul(A[i], B) + tf.stack vs one tf.einsum('ijk,kl->ijl'), A [1000,100,1000]"

    def variants(self, preset: Preset) -> List[Variant]:
        a_shape, b_shape = BATCHED_SHAPES[preset.name]
        tf = [make_variant(self, mode, "tf", impl=impl, a_shape=a_shape, b_shape=b_shape, dtype="float32")
              for mode in ("eager", "graph") for impl in BATCHED]
        return tf + [make_variant(self, "eager", BACKEND_API, impl=impl, a_shape=a_shape, b_shape=b_shape,
                                  dtype="float32") for impl in BATCHED]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        tf, compat = env.tf, env.compat
        a_shape = tuple(variant.param("a_shape"))
        b_shape = tuple(variant.param("b_shape"))
        rng = env.rng(1)
        A = rng.uniform(size=a_shape).astype("float32")
        B = rng.uniform(size=b_shape).astype("float32")
        b = a_shape[0]
        fn = BATCHED[variant.param("impl")]
        flops = 2.0 * a_shape[0] * a_shape[1] * a_shape[2] * b_shape[1]
        if variant.api == BACKEND_API:
            ops = prepare_ops(compat)
            prepared = backend_step(ops, compat, (A, B), lambda x, y: fn(ops, x, y, b))
        elif variant.mode == "graph":
            prepared = session_step(env, (A, B), lambda x, y: fn(tf, x, y, b))
        else:
            compat.require_eager("tf ops on tf.constant inputs")
            prepared = eager_step(env, (A, B), lambda x, y: fn(tf, x, y, b))
        prepared.work_flops = flops
        return prepared


BENCHMARKS = [Matmul(), BatchedMatmul()]
