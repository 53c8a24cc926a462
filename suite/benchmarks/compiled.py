"""Seed 003 on any Keras backend: a Keras application's forward pass with ``jit_compile`` off and on.

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
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, List

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
        k = env.keras(variant.api)
        compat.require_eager("predict_on_batch of a compiled Keras model")
        jit = variant.param("jit_compile") == "true"
        unavailable = getattr(compat, "compile_unavailable", None)
        reason = unavailable() if (jit and unavailable is not None) else None
        if reason:
            raise NotApplicable(reason)
        ctor = compat.application(k, "MobileNetV2")
        shape = tuple(variant.param("input_shape"))

        from ..harness import time_once

        model, build_s = time_once(lambda: ctor(weights=None, input_shape=shape[1:]))
        if "jit_compile" not in inspect.signature(model.compile).parameters:
            raise NotApplicable("%s %s's Model.compile has no jit_compile" % (k.flavour, k.version))
        _, compile_s = time_once(lambda: model.compile(jit_compile=jit))
        x = compat.eager_input(k, env.rng(1).random_sample(shape))
        info: Dict[str, Any] = {"keras": k.describe(), "backend": backend_name(k), "params": int(model.count_params()),
                                "model_build_s": build_s, "compile_s": compile_s, "input_dtype": str(x.dtype)}
        materialize = compat.materialize

        def step() -> Any:
            return materialize(model.predict_on_batch(x))

        return Prepared(step=step, info=info)


BENCHMARKS = [CompiledApplication()]
