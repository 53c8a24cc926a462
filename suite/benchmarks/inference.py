"""Inference paths, seed 001: "Why does a Keras model predict slower after compile?"

The seed timed 1000 ``model.predict`` calls on a tiny model (Input(4) ->
Dense(2, relu) -> Dense(1, sigmoid), batch 32) in TF 2.0/2.1: 0.99 s before
``compile()``, 29.8 s after it, 29.5 s after ``_make_train_function()``; and
10 calls on a medium LSTM/Conv1D model, equally slow (34.9 s / 34.7 s)
before and after. Its answers recommend ``model(x)`` (or ``model(x,
training=False)``) and ``predict_on_batch`` for small batches instead.

``inference.tiny`` and ``inference.medium`` measure one model through one
path at one stage per variant:

* paths: ``predict`` (``verbose=0``), ``predict_on_batch``, ``call``
  (``model(x)``), ``call_training_false`` (``model(x, training=False)``),
  ``tf_function`` (``tf.function(model)`` called on ``x``);
* stages: ``uncompiled`` (right after construction), ``compiled`` (after
  ``compile(Adam(1e-3), 'binary_crossentropy')``, the seed's ``'adam'``),
  ``train_built`` (after one ``train_on_batch``, which builds the train
  function and the optimizer's slots as the seed's ``_make_train_function()``
  did in TF 1.x/2.0 Keras).

Variants that differ only in ``stage`` share model, shape, mode and api, so
the report can divide predict-after-compile by predict-before-compile.
Inputs are the seed's: float64 ``randn``, cast to float32 only for direct
calls where the Keras does not cast inputs itself (TF 1.x tf.keras,
standalone keras 2.x; see ``Compat.eager_input``). Every call brings its
result to host memory (``predict`` does already) so GPU timings are of
finished work. Not every path exists everywhere: in graph mode ``model(x)``
and tf.function only build symbolic ops, and standalone keras 2.x called on
data builds symbolic tensors in its own graph even under TF 2 eager (its
tf.function path does compute); those variants are n/a with the reason.

The medium model is built as the seed wrote it, including its slip: the
second LSTM takes ``ipt``, so the Bidirectional LSTM is built but feeds
nothing. ``standard`` and ``full`` run every path at every stage for both
models; ``standard`` keeps the medium model's batch shape with width x 1/8
(the seed's Conv1D(128, 400) over 400 steps of LSTM-512 output is ~0.7 TFLOP
per call, minutes per variant on 2 CPU cores); ``full`` is the seed's model.
``quick`` (CI) keeps every path and every stage but not every pair: each
path before and after ``compile()``, ``predict`` also after the train
function was built, and the medium model (width x 1/8, batch (8, 40, 16))
only through ``predict`` before and after ``compile()``, as the seed timed it.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ..definitions import Benchmark, Prepared, Preset, Variant, make_variant
from .training import dense_head, scaled

KERAS_APIS = ("tf.keras", "keras")
MODES = ("eager", "graph")
PATHS = ("predict", "predict_on_batch", "call", "call_training_false", "tf_function")
# paths that call the model directly (eager execution only), as the reason names them
DIRECT_CALLS = {"call": "model(x)", "call_training_false": "model(x, training=False)",
                "tf_function": "tf.function(model)"}
STAGES = ("uncompiled", "compiled", "train_built")

TINY_SHAPE = (32, 4)
MEDIUM_SHAPE = (32, 400, 16)
EVERY = tuple((path, stage) for path in PATHS for stage in STAGES)
QUICK_TINY = tuple((path, stage) for path in PATHS for stage in STAGES[:2]) + (("predict", "train_built"),)
QUICK_MEDIUM = (("predict", "uncompiled"), ("predict", "compiled"))
# preset -> model -> (batch shape, width multiplier, (path, stage) pairs)
SCALE: Dict[str, Dict[str, Tuple[Tuple[int, ...], float, Tuple[Tuple[str, str], ...]]]] = {
    "quick": {"tiny": (TINY_SHAPE, 1.0, QUICK_TINY), "medium": ((8, 40, 16), 0.125, QUICK_MEDIUM)},
    # seed (the default): the claims' tiny model as the seed ran it; the medium one (no claim) as in quick
    "seed": {"tiny": (TINY_SHAPE, 1.0, QUICK_TINY), "medium": ((8, 40, 16), 0.125, QUICK_MEDIUM)},
    "standard": {"tiny": (TINY_SHAPE, 1.0, EVERY), "medium": (MEDIUM_SHAPE, 0.125, EVERY)},
    "full": {"tiny": (TINY_SHAPE, 1.0, EVERY), "medium": (MEDIUM_SHAPE, 1.0, EVERY)},
}


# -- the seed's models ----------------------------------------------------------

def tiny_model(k: Any, batch_shape: Tuple[int, ...], w: float, compat: Any = None) -> Any:
    L = k.layers
    ipt = L.Input(shape=tuple(batch_shape[1:]))
    x = L.Dense(scaled(2, w), activation="relu")(ipt)
    out = L.Dense(1, activation="sigmoid")(x)
    return k.models.Model(ipt, out)


def medium_model(k: Any, batch_shape: Tuple[int, ...], w: float, compat: Any) -> Any:
    L = k.layers
    ipt = L.Input(batch_shape=batch_shape)
    x = L.Bidirectional(compat.lstm(k, scaled(512, w), activation="relu", return_sequences=True))(ipt)
    x = compat.lstm(k, scaled(512, w), activation="relu", return_sequences=True)(ipt)  # sic: ipt, as in the seed
    x = L.Conv1D(scaled(128, w), 400, strides=1, padding="same")(x)
    x = L.Flatten()(x)
    return dense_head(k, ipt, x, w)


BUILDERS = {"tiny": tiny_model, "medium": medium_model}


class Inference(Benchmark):
    """One seed-001 model through one inference path at one stage."""

    seed = "001"
    model = ""

    def variants(self, preset: Preset) -> List[Variant]:
        shape, width, pairs = SCALE[preset.name][self.model]
        out: List[Variant] = []
        for mode in MODES:
            for api in KERAS_APIS:
                for path, stage in pairs:
                    out.append(make_variant(self, mode, api, model=self.model, batch_shape=shape, width=width,
                                            path=path, stage=stage))
        return out

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        compat = env.compat
        k = env.keras(variant.api)            # NotApplicable if this Keras cannot run here
        path, stage = variant.param("path"), variant.param("stage")
        shape = tuple(variant.param("batch_shape"))
        if path == "tf_function":
            compat.require_eager(DIRECT_CALLS[path])
        elif path in DIRECT_CALLS:
            compat.require_direct_call(k, DIRECT_CALLS[path])

        from ..harness import time_once

        rng = env.rng(1)
        x = rng.randn(*shape)
        y = rng.randint(0, 2, (shape[0], 1))
        model, build_s = time_once(lambda: BUILDERS[self.model](k, shape, float(variant.param("width")), compat))
        info: Dict[str, Any] = {"keras": k.describe(), "params": int(model.count_params()), "model_build_s": build_s}
        if stage in ("compiled", "train_built"):
            _, info["compile_s"] = time_once(lambda: model.compile(compat.adam(k, 1e-3), "binary_crossentropy"))
        if stage == "train_built":
            info["train_function"], info["train_build_s"] = time_once(
                lambda: compat.build_train_function(model, x, y))

        materialize = compat.materialize
        if path == "predict":
            def step() -> Any:
                return compat.predict(model, x)
        elif path == "predict_on_batch":
            def step() -> Any:
                return materialize(model.predict_on_batch(x))
        else:
            xi = compat.eager_input(k, x)
            info["input_dtype"] = str(xi.dtype)
            if path == "call":
                def step() -> Any:
                    return materialize(model(xi))
            elif path == "call_training_false":
                def step() -> Any:
                    return materialize(model(xi, training=False))
            else:
                fn = compat.tf_function(model, what=DIRECT_CALLS[path])

                def step() -> Any:
                    return materialize(fn(xi))

                return Prepared(step=step, info=info, after=lambda: compat.tracing_facts(fn))
        return Prepared(step=step, info=info)

    def tensorflow_part(self, variant: Variant) -> Optional[str]:
        return DIRECT_CALLS["tf_function"] if variant.param("path") == "tf_function" else None


class TinyInference(Inference):
    name = "inference.tiny"
    model = "tiny"
    title = "Seed 001 tiny model (4 -> 2 -> 1, batch 32): predict paths before/after compile"


class MediumInference(Inference):
    name = "inference.medium"
    model = "medium"
    title = "Seed 001 medium model (LSTM 512 + Conv1D 128x400, batch (32,400,16)): predict paths before/after compile"


BENCHMARKS = [TinyInference(), MediumInference()]
