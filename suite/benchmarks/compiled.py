"""``jit_compile`` on any Keras backend: seed 003's forward pass, and today's question about training.

``graphs.xla`` asks the seed's question through ``tf.function``, which only
TensorFlow has. ``compiled.application`` asks it the way Keras 3 does on every
backend: ``model.compile(jit_compile=False/True)`` and then
``model.predict_on_batch(x)`` on one random image (float64, as the seed's
``np.random.random``). ``jit_compile=True`` means XLA on TensorFlow and JAX
and ``torch.compile`` on PyTorch; ``False`` is tf.function without XLA on
TensorFlow, un-jitted op-by-op JAX, and eager PyTorch. The model is the
MobileNetV2 stand-in of ``graphs.xla`` (``weights=None``: nothing is
downloaded; every Keras since 2.2 has it), 32x32 in ``quick`` and its native
224x224 elsewhere. Variants exist for ``tf.keras`` and ``keras``: a TF cell
runs the first (on Keras 3 the second is the same package, n/a), a JAX or
PyTorch cell the second, so the report compares backends across cells with the
api left out. Keras 2 without ``compile(jit_compile=...)`` (before TF 2.8) is n/a.

``compiled.fit`` asks keras-team/keras#21851 (2025-11): "using PyTorch as the
backend, ``jit_compile=True`` actually makes performance much worse than
without compiling; JAX outperforms PyTorch in every scenario". The user's
model, a dense autoencoder on MNIST-sized vectors (784 -> 128 -> 32 -> 128 ->
784, relu, Adam, MSE), trained with ``fit`` over a few batches of 64 per call
after ``compile(jit_compile=False/True)``; samples are seconds per batch. The
first call (tracing, XLA or ``torch.compile``) is timed apart. ``quick``
shrinks it (64 -> 16 -> 8 -> 16 -> 64, batches of 16).
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, List, Tuple

from ..definitions import Benchmark, NotApplicable, Prepared, Preset, Variant, make_variant

KERAS_APIS = ("tf.keras", "keras")
JIT = ("false", "true")
SIDE = {"quick": 32, "seed": 224, "standard": 224, "full": 224}


def backend_name(k: Any) -> str:
    """The Keras backend a handle runs on ("tensorflow" for Keras 2)."""
    if k.major < 3:
        return "tensorflow"
    return str(k.module.backend.backend())


class CompiledApplication(Benchmark):
    name = "compiled.application"
    seed = "003"
    title = "Seed 003 on any backend: MobileNetV2 predict_on_batch after compile(jit_compile=False/True)"

    def variants(self, preset: Preset) -> List[Variant]:
        side = SIDE[preset.name]
        return [make_variant(self, "eager", api, model="mobilenetv2", input_shape=(1, side, side, 3),
                             call="predict_on_batch", jit_compile=jit)
                for api in KERAS_APIS for jit in JIT]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        compat = env.compat
        k, jit = keras_jit(env, variant, "predict_on_batch of a compiled Keras model")
        ctor = compat.application(k, "MobileNetV2")
        shape = tuple(variant.param("input_shape"))

        from ..harness import time_once

        model, build_s = time_once(lambda: ctor(weights=None, input_shape=shape[1:]))
        require_jit_keyword(k, model)
        _, compile_s = time_once(lambda: model.compile(jit_compile=jit))
        x = compat.eager_input(k, env.rng(1).random_sample(shape))
        info = dict(model_info(k, model), model_build_s=build_s, compile_s=compile_s, input_dtype=str(x.dtype))
        materialize = compat.materialize

        def step() -> Any:
            return materialize(model.predict_on_batch(x))

        return Prepared(step=step, info=info)


def keras3(env: Any, api: str, what: str) -> Any:
    """The Keras 3 handle for ``api`` in an eager process, or NotApplicable (today's questions are Keras 3's)."""
    env.compat.require_eager(what)
    k = env.keras(api)
    if k.major < 3:
        raise NotApplicable("a question about Keras 3 on its backends; this cell's Keras is %s" % k.version)
    return k


def keras_jit(env: Any, variant: Variant, what: str) -> Tuple[Any, bool]:
    """The Keras handle for the variant's api and its ``jit_compile`` side; NotApplicable where it cannot run here."""
    k = env.keras(variant.api)
    env.compat.require_eager(what)
    jit = variant.param("jit_compile") == "true"
    jit_unavailable(env.compat, jit)
    return k, jit


def model_info(k: Any, model: Any) -> Dict[str, Any]:
    """What a Keras benchmark's record keeps of its model: the Keras, its backend, the parameter count."""
    return {"keras": k.describe(), "backend": backend_name(k), "params": int(model.count_params())}


def jit_compiled(k: Any, model: Any) -> None:
    """``model.compile(jit_compile=True)``: XLA on TensorFlow and JAX, ``torch.compile`` on PyTorch."""
    require_jit_keyword(k, model)
    model.compile(jit_compile=True)


def require_jit_keyword(k: Any, model: Any) -> None:
    """NotApplicable where this Keras's ``Model.compile`` takes no ``jit_compile`` (Keras 2 before TF 2.8)."""
    if "jit_compile" not in inspect.signature(model.compile).parameters:
        raise NotApplicable("%s %s's Model.compile has no jit_compile" % (k.flavour, k.version))


def jit_unavailable(compat: Any, jit: bool) -> None:
    """NotApplicable where ``jit_compile=True`` cannot work in this cell (torch.compile without a C++ compiler)."""
    reason = compat.compile_unavailable() if jit else None
    if reason:
        raise NotApplicable(reason)


# preset -> (layer widths, batch, batches per fit call)
FIT_SCALE = {"quick": ((64, 16, 8, 16, 64), 16, 4), "seed": ((784, 128, 32, 128, 784), 64, 8),
             "standard": ((784, 128, 32, 128, 784), 64, 16), "full": ((784, 128, 32, 128, 784), 64, 32)}


def autoencoder(k: Any, widths: Any) -> Any:
    """keras#21851's model: Dense layers down to a code and back up, relu inside, linear out."""
    L = k.layers
    ipt = L.Input(shape=(widths[0],))
    x = ipt
    for w in widths[1:-1]:
        x = L.Dense(w, activation="relu")(x)
    return k.models.Model(ipt, L.Dense(widths[-1])(x))


class CompiledFit(Benchmark):
    name = "compiled.fit"
    seed = "today"
    title = "keras#21851: a dense autoencoder trained with fit() after compile(jit_compile=False/True)"

    def variants(self, preset: Preset) -> List[Variant]:
        widths, batch, batches = FIT_SCALE[preset.name]
        return [make_variant(self, "eager", api, model="autoencoder", widths=widths, batch=batch, batches=batches,
                             jit_compile=jit)
                for api in KERAS_APIS for jit in JIT]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        k, jit = keras_jit(env, variant, "fit() after compile(jit_compile=...)")
        widths, batch, batches = variant.param("widths"), int(variant.param("batch")), int(variant.param("batches"))

        from ..harness import time_once

        model, build_s = time_once(lambda: autoencoder(k, widths))
        require_jit_keyword(k, model)
        _, compile_s = time_once(lambda: model.compile(optimizer="adam", loss="mse", jit_compile=jit))
        x = env.rng(1).random_sample((batch * batches, widths[0])).astype("float32")
        info = dict(model_info(k, model), model_build_s=build_s, compile_s=compile_s)

        def step() -> Any:
            return model.fit(x, x, batch_size=batch, epochs=1, verbose=0, shuffle=False)

        return Prepared(step=step, inner=batches, info=info)


BENCHMARKS = [CompiledApplication(), CompiledFit()]
