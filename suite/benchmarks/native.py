"""Keras 3's overhead over the framework it runs on: one small CNN in Keras and written in plain TF, JAX or PyTorch.

keras-team/keras#22561 (2026-03) measured a ~114K-parameter CNN's forward
pass, batch 4: pure JAX jit 0.45 ms, pure PyTorch 0.52 ms eager and 0.97 ms
compiled, Keras on PyTorch 2.03 ms eager and 2.49 ms compiled (Apple MPS).
``native.cnn`` asks the same of each cell's framework with one architecture
(32x32x3 input, Conv 3x3x16 + relu, 2x2 max-pool, Conv 3x3x32 + relu, 2x2
max-pool, Dense 64 + relu, Dense 10: ~80K parameters, float32, batch 4):

* ``impl=keras``: the Keras model; ``call=eager`` is ``model(x,
  training=False)``, ``call=compiled`` is ``predict_on_batch(x)`` after
  ``compile(jit_compile=True)`` (XLA on TensorFlow and JAX, ``torch.compile``
  on PyTorch): what a Keras user calls;
* ``impl=native``: the same layers in the framework's own ops with weights of
  the same shapes; ``call=eager`` op by op, ``call=compiled`` under
  ``tf.function(jit_compile=True)``, ``jax.jit`` or ``torch.compile``.

A TensorFlow cell runs the ``tf.keras`` and ``api=tf`` variants, a JAX or
PyTorch cell the ``keras`` and ``api=backend`` ones (``suite.frameworks.outside``
sets the others aside); every call brings its output to the host as numpy,
as ``predict_on_batch`` does. PyTorch's convolutions are NCHW: its input is
laid out so once, before timing.
"""
from __future__ import annotations

from typing import Any, Callable, List, Tuple

from ..definitions import BACKEND_API, Benchmark, Prepared, Preset, Variant, make_variant
from .compiled import jit_compiled, jit_unavailable, keras3, model_info

IMPLS = (("keras", "tf.keras"), ("keras", "keras"), ("native", "tf"), ("native", BACKEND_API))
CALLS = ("eager", "compiled")
SHAPE = (4, 32, 32, 3)          # keras#22561's batch 4; CIFAR-sized images
FILTERS, DENSE, CLASSES = (16, 32), 64, 10


def keras_cnn(k: Any) -> Any:
    L = k.layers
    ipt = L.Input(shape=SHAPE[1:])
    x = ipt
    for f in FILTERS:
        x = L.Conv2D(f, 3, activation="relu")(x)
        x = L.MaxPooling2D(2)(x)
    x = L.Flatten()(x)
    x = L.Dense(DENSE, activation="relu")(x)
    return k.models.Model(ipt, L.Dense(CLASSES)(x))


def shapes() -> List[Tuple[int, ...]]:
    """The weights' shapes, NHWC / HWIO as Keras holds them: conv kernels and biases, then the dense layers."""
    side, chans, out = SHAPE[1], SHAPE[3], []
    for f in FILTERS:
        out += [(3, 3, chans, f), (f,)]
        side, chans = (side - 2) // 2, f
    flat = side * side * chans
    return out + [(flat, DENSE), (DENSE,), (DENSE, CLASSES), (CLASSES,)]


def tf_forward(tf: Any, weights: List[Any]) -> Callable[[Any], Any]:
    def forward(x: Any) -> Any:
        for i in range(len(FILTERS)):
            x = tf.nn.relu(tf.nn.conv2d(x, weights[2 * i], 1, "VALID") + weights[2 * i + 1])
            x = tf.nn.max_pool2d(x, 2, 2, "VALID")
        x = tf.reshape(x, (tf.shape(x)[0], -1))
        x = tf.nn.relu(tf.matmul(x, weights[-4]) + weights[-3])
        return tf.matmul(x, weights[-2]) + weights[-1]
    return forward


def jax_forward(weights: List[Any]) -> Callable[[Any], Any]:
    import jax  # type: ignore
    import jax.numpy as jnp  # type: ignore

    def forward(x: Any) -> Any:
        for i in range(len(FILTERS)):
            x = jax.lax.conv_general_dilated(x, weights[2 * i], (1, 1), "VALID",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = jax.nn.relu(x + weights[2 * i + 1])
            x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        x = x.reshape(x.shape[0], -1)
        x = jax.nn.relu(x @ weights[-4] + weights[-3])
        return x @ weights[-2] + weights[-1]
    return forward


def torch_forward(weights: List[Any]) -> Callable[[Any], Any]:
    import torch  # type: ignore
    import torch.nn.functional as F  # type: ignore

    def forward(x: Any) -> Any:
        for i in range(len(FILTERS)):
            x = F.max_pool2d(F.relu(F.conv2d(x, weights[2 * i], weights[2 * i + 1])), 2)
        x = torch.flatten(x.permute(0, 2, 3, 1), 1)      # Keras flattens NHWC: the same order of features
        x = F.relu(x @ weights[-4] + weights[-3])
        return x @ weights[-2] + weights[-1]
    return forward


class NativeCNN(Benchmark):
    name = "native.cnn"
    seed = "today"
    title = "keras#22561: a small CNN's forward pass (batch 4) in Keras 3 and in plain TF, JAX or PyTorch"

    def variants(self, preset: Preset) -> List[Variant]:
        return [make_variant(self, "eager", api, model="cnn", input_shape=SHAPE, impl=impl, call=call)
                for impl, api in IMPLS for call in CALLS]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        compat = env.compat
        compat.require_eager("a forward pass called eagerly or compiled")
        compiled = variant.param("call") == "compiled"
        x = env.rng(1).random_sample(SHAPE).astype("float32")
        if variant.param("impl") == "keras":
            return self._keras(variant, env, x, compiled)
        weights = [env.rng(2 + i).standard_normal(s).astype("float32") * 0.1 for i, s in enumerate(shapes())]
        if variant.api == BACKEND_API:
            return self._backend(compat, weights, x, compiled)
        return self._tf(env.tf, compat, weights, x, compiled)

    def _keras(self, variant: Variant, env: Any, x: Any, compiled: bool) -> Prepared:
        compat = env.compat
        k = keras3(env, variant.api, "a forward pass called eagerly or compiled")
        jit_unavailable(compat, compiled)
        model = keras_cnn(k)
        info = model_info(k, model)
        materialize = compat.materialize
        if compiled:
            jit_compiled(k, model)

            def step() -> Any:
                return materialize(model.predict_on_batch(x))
        else:
            xi = compat.eager_input(k, x)

            def step() -> Any:
                return materialize(model(xi, training=False))
        return Prepared(step=step, info=info)

    def _tf(self, tf: Any, compat: Any, weights: List[Any], x: Any, compiled: bool) -> Prepared:
        if tf is None:
            compat.require_tf("plain TensorFlow ops")
        w = [tf.constant(a) for a in weights]
        fn = tf_forward(tf, w)
        if compiled:
            fn = compat.tf_function(fn, jit=True, what="tf.function(jit_compile=True)")
        xi = tf.constant(x)

        def step() -> Any:
            return fn(xi).numpy()
        return Prepared(step=step, info={"framework": "tensorflow", "params": sum(a.size for a in weights)})

    def _backend(self, compat: Any, weights: List[Any], x: Any, compiled: bool) -> Prepared:
        from ..frameworks import cell_backend_of, ops_for

        backend = cell_backend_of(compat)
        jit_unavailable(compat, compiled)
        ops = ops_for(backend)
        if backend == "torch":
            import numpy as np

            weights = [np.ascontiguousarray(w.transpose(3, 2, 0, 1)) if w.ndim == 4 else w for w in weights]
            x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        w = [ops.put(a) for a in weights]
        fn = torch_forward(w) if backend == "torch" else jax_forward(w)
        if compiled:
            fn = self._compile(backend, fn)
        xi = ops.put(x)
        to_host = ops.to_host

        def step() -> Any:
            return to_host(fn(xi))
        return Prepared(step=step, info={"framework": backend, "device": ops.device,
                                         "params": sum(int(a.size) for a in weights)})

    @staticmethod
    def _compile(backend: str, fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        if backend == "jax":
            import jax  # type: ignore

            return jax.jit(fn)  # type: ignore[no-any-return]
        import torch  # type: ignore

        return torch.compile(fn)  # type: ignore[no-any-return]


BENCHMARKS = [NativeCNN()]
