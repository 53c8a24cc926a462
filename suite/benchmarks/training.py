"""Training speed, seed 000: "Why is TF2 much slower than TF1?"

Both halves of the seed, with its models and shapes exactly:

* ``training.question``: the question's small model (Conv1D 128/400 +
  Flatten) and medium model (BiLSTM 512, LSTM 512, Conv1D, Dense stack) at
  batch shape (32, 400, 16), Adam(1e-4), binary cross-entropy.
* ``training.answer``: the answer's small/medium/large Conv1D models on
  small/medium/large data ((32,140,30), (32,1400,30), (32,14000,30)); the
  large model skips small data (its first two convolutions need >= 1344
  steps).

Each crossed with the seed's factors: ``train_on_batch`` vs ``fit``, numpy
vs ``tf.data.Dataset`` input, eager vs graph mode, ``tf.keras`` vs
standalone ``keras``. The data are the seed's: float64 ``randn`` inputs and
int64 0/1 targets (the dtype conversion is part of what the seed measured).

Presets scale work, not meaning: ``quick`` keeps every model and every code
path but shrinks batch and width (filters/units x 1/8), uses each model's
smallest legal data, and crosses all paths with the first model only (the
others run ``train_on_batch`` in every mode and Keras); ``seed`` (the default
matrix) runs what the seed's claims are about at the seed's sizes: the
question's models with ``train_on_batch`` on (32, 400, 16) (the BiLSTM model at
width x 1/8, ~20 s a step at full width on 2 cores, and with standalone keras
only), and the answer's small
model on small data through every path; ``standard`` uses the seed's sizes for everything a
2-core CPU can bear; ``full`` is the seed's full grid. The scale is part of
every variant's parameters, so numbers from different presets never mix.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ..definitions import Benchmark, NotApplicable, Prepared, Preset, Variant, make_variant

KERAS_APIS = ("tf.keras", "keras")
MODES = ("eager", "graph")
# (loop, input): the seed's combinations. tf.data is fed through fit only:
# train_on_batch takes arrays.
PATHS = (("train_on_batch", "numpy"), ("fit", "numpy"), ("fit", "tf.data"))

QUESTION_SHAPE = (32, 400, 16)
ANSWER_DATA = {"small": (32, 140, 30), "medium": (32, 1400, 30), "large": (32, 14000, 30)}
DATASET_BATCHES = {"quick": 4, "seed": 4, "standard": 20, "full": 50}

# Which (model, data) the answer's grid runs per preset. quick: each model at
# its smallest legal data. standard: drops what a 2-core CPU cannot bear
# (the large model, and the medium model on 14000-step data).
ANSWER_GRID = {
    "quick": (("small", "small"), ("medium", "small"), ("large", "medium")),
    "seed": (("small", "small"),),
    "standard": (("small", "small"), ("small", "medium"), ("small", "large"),
                 ("medium", "small"), ("medium", "medium")),
    "full": (("small", "small"), ("small", "medium"), ("small", "large"),
             ("medium", "small"), ("medium", "medium"), ("medium", "large"),
             ("large", "medium"), ("large", "large")),
}
QUESTION_MODELS = ("small", "medium")
# seed (the default): the question's BiLSTM model at full width takes ~20 s a
# train_on_batch step on 2 cores, so it runs at width x 1/8 on the seed's shape
# (still 1-13 s a step: 400 LSTM steps), and only with standalone keras, the
# Keras the seed (and its claims) measured.
MODEL_WIDTH = {"seed": {"medium": 0.125}}
MODEL_APIS = {"seed": {"medium": ("keras",)}}
SCALE = {  # preset -> (batch size, width multiplier)
    "quick": (8, 0.125),
    "seed": (32, 1.0),
    "standard": (32, 1.0),
    "full": (32, 1.0),
}


def scaled(n: int, width: float) -> int:
    return max(1, int(round(n * width)))


# -- the seed's models, parameterised only by width ---------------------------

def small_head(k: Any, ipt: Any, x: Any, w: float) -> Any:
    """The small models' classifier on ``x`` (Dropout, Dense 64, a sigmoid), as a model of ``ipt``."""
    L = k.layers
    x = L.Dropout(0.5)(x)
    x = L.Dense(scaled(64, w), activation="relu")(x)
    out = L.Dense(1, activation="sigmoid")(x)
    return k.models.Model(ipt, out)


def dense_head(k: Any, ipt: Any, x: Any, w: float) -> Any:
    """The medium and large models' classifier on ``x`` (Dense 256, Dropout, Dense 128, Dense 64, a sigmoid).

    Seed 000's medium and large models and seed 001's medium model end with it.
    """
    L = k.layers
    x = L.Dense(scaled(256, w), activation="relu")(x)
    x = L.Dropout(0.5)(x)
    x = L.Dense(scaled(128, w), activation="relu")(x)
    x = L.Dense(scaled(64, w), activation="relu")(x)
    out = L.Dense(1, activation="sigmoid")(x)
    return k.models.Model(ipt, out)


def question_small(k: Any, batch_shape: Tuple[int, ...], w: float, compat: Any = None) -> Any:
    L = k.layers
    ipt = L.Input(batch_shape=batch_shape)
    x = L.Conv1D(scaled(128, w), 400, strides=4, padding="same")(ipt)
    x = L.Flatten()(x)
    return small_head(k, ipt, x, w)


def question_medium(k: Any, batch_shape: Tuple[int, ...], w: float, compat: Any) -> Any:
    L = k.layers
    ipt = L.Input(batch_shape=batch_shape)
    x = L.Bidirectional(compat.lstm(k, scaled(512, w), activation="relu", return_sequences=True))(ipt)
    x = compat.lstm(k, scaled(512, w), activation="relu", return_sequences=True)(x)
    x = L.Conv1D(scaled(128, w), 400, strides=4, padding="same")(x)
    x = L.Flatten()(x)
    return dense_head(k, ipt, x, w)


def answer_small(k: Any, batch_shape: Tuple[int, ...], w: float, compat: Any = None) -> Any:
    L = k.layers
    ipt = L.Input(batch_shape=batch_shape)
    x = L.Conv1D(scaled(128, w), 40, strides=4, padding="same")(ipt)
    x = L.GlobalAveragePooling1D()(x)
    return small_head(k, ipt, x, w)


def answer_medium(k: Any, batch_shape: Tuple[int, ...], w: float, compat: Any = None) -> Any:
    L = k.layers
    ipt = L.Input(batch_shape=batch_shape)
    x = ipt
    for filters in (64, 128, 256, 256, 128, 64):
        x = L.Conv1D(scaled(filters, w), 20, strides=1, padding="valid")(x)
    x = L.GlobalAveragePooling1D()(x)
    return dense_head(k, ipt, x, w)


def answer_large(k: Any, batch_shape: Tuple[int, ...], w: float, compat: Any = None) -> Any:
    L = k.layers
    ipt = L.Input(batch_shape=batch_shape)
    x = L.Conv1D(scaled(64, w), 400, strides=4, padding="valid")(ipt)
    x = L.Conv1D(scaled(128, w), 200, strides=1, padding="valid")(x)
    for _ in range(40):
        x = L.Conv1D(scaled(256, w), 12, strides=1, padding="same")(x)
    x = L.Conv1D(scaled(512, w), 20, strides=2, padding="valid")(x)
    x = L.Conv1D(scaled(1028, w), 10, strides=2, padding="valid")(x)  # 1028 as in the seed
    x = L.Conv1D(scaled(256, w), 1, strides=1, padding="valid")(x)
    x = L.GlobalAveragePooling1D()(x)
    return dense_head(k, ipt, x, w)


BUILDERS: Dict[Tuple[str, str], Callable[..., Any]] = {
    ("question", "small"): question_small,
    ("question", "medium"): question_medium,
    ("answer", "small"): answer_small,
    ("answer", "medium"): answer_medium,
    ("answer", "large"): answer_large,
}


# -- data, as the seed makes it ------------------------------------------------

def make_data(np: Any, rng: Any, batch_shape: Tuple[int, ...]) -> Tuple[Any, Any]:
    return rng.randn(*batch_shape), rng.randint(0, 2, (batch_shape[0], 1))


def make_dataset(tf: Any, rng: Any, batch_shape: Tuple[int, ...], n_batches: int) -> Any:
    """The seed's make_data_tf: each dataset element is one whole batch."""
    data = rng.randn(n_batches, *batch_shape)
    target = rng.randint(0, 2, (n_batches, batch_shape[0], 1))
    return tf.data.Dataset.from_tensor_slices((data, target)).repeat()


# -- the benchmark ---------------------------------------------------------------

TF_DATA = "tf.data input"       # what a variant fed by tf.data needs of TensorFlow, whatever its Keras


def tf_data_part(variant: Variant) -> Optional[str]:
    """``Benchmark.tensorflow_part`` of a variant whose ``input`` may be tf.data (training, input_pipelines)."""
    return TF_DATA if str(variant.param("input")).startswith("tf.data") else None


class Training(Benchmark):
    """One seed-000 model on one batch shape through one training path."""

    seed = "000"
    family = ""

    def grid(self, preset: Preset) -> List[Tuple[str, str, Tuple[int, ...]]]:
        raise NotImplementedError

    def variants(self, preset: Preset) -> List[Variant]:
        batch, width = SCALE[preset.name]
        widths = MODEL_WIDTH.get(preset.name, {})
        apis = MODEL_APIS.get(preset.name, {})
        out: List[Variant] = []
        for mode in MODES:
            for api in KERAS_APIS:
                for i, (model, data, shape) in enumerate(self.grid(preset)):
                    if api not in apis.get(model, KERAS_APIS):
                        continue
                    shape = (batch,) + tuple(shape[1:])
                    for loop, source in self.paths(preset, i):
                        out.append(make_variant(self, mode, api, model=model, data=data, batch_shape=shape,
                                                width=widths.get(model, width), loop=loop, input=source))
        return out

    def paths(self, preset: Preset, i: int) -> Tuple[Tuple[str, str], ...]:
        """The (loop, input) paths of the grid's ``i``-th config: quick runs every path on the
        first config and train_on_batch on the others (every builder and code path still runs)."""
        return PATHS if preset.name != "quick" or i == 0 else PATHS[:1]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        tf, np, compat = env.tf, env.np, env.compat
        k = env.keras(variant.api)            # NotApplicable if this Keras cannot run here
        loop, source = variant.param("loop"), variant.param("input")
        shape = tuple(variant.param("batch_shape"))
        build = BUILDERS[(self.family, variant.param("model"))]
        rng = env.rng(1)

        if source == "tf.data" and k.api == "keras" and k.major < 3:
            raise NotApplicable("standalone keras %s cannot consume a tf.data.Dataset" % k.version)

        from ..harness import time_once

        def build_and_compile() -> Any:
            m = build(k, shape, float(variant.param("width")), compat)
            m.compile(compat.adam(k, 1e-4), "binary_crossentropy")
            return m

        model, build_s = time_once(build_and_compile)
        info = {"keras": k.describe(), "params": int(model.count_params()),
                "optimizer": "%s.%s" % (type(model.optimizer).__module__, type(model.optimizer).__name__)}

        if source == "numpy":
            x, y = make_data(np, rng, shape)
            if loop == "train_on_batch":
                def step() -> Any:
                    return model.train_on_batch(x, y)
            else:
                def step() -> Any:
                    return compat.fit_numpy(model, x, y)
            return Prepared(step=step, build_s=build_s, info=info)

        compat.require_tf(TF_DATA)
        n = DATASET_BATCHES[env.scale]
        ds = make_dataset(tf, rng, shape, n)

        def fit_dataset() -> Any:
            return compat.fit_dataset(k, model, ds, n)

        return Prepared(step=fit_dataset, inner=n, build_s=build_s, info=info)

    def tensorflow_part(self, variant: Variant) -> Optional[str]:
        return tf_data_part(variant)


class QuestionTraining(Training):
    name = "training.question"
    family = "question"
    title = "Seed 000 question: small (Conv1D+Flatten) and medium (BiLSTM/LSTM) models, batch (32,400,16)"

    def grid(self, preset: Preset) -> List[Tuple[str, str, Tuple[int, ...]]]:
        shape = QUESTION_SHAPE if preset.name != "quick" else (QUESTION_SHAPE[0], 40, QUESTION_SHAPE[2])
        return [(m, "question", shape) for m in QUESTION_MODELS]

    def paths(self, preset: Preset, i: int) -> Tuple[Tuple[str, str], ...]:
        # seed: the question's own loop (train_on_batch on numpy); fit and tf.data are the answer's
        return PATHS[:1] if preset.name == "seed" else super().paths(preset, i)


class AnswerTraining(Training):
    name = "training.answer"
    family = "answer"
    title = "Seed 000 answer: small/medium/large Conv1D models x small/medium/large data"

    def grid(self, preset: Preset) -> List[Tuple[str, str, Tuple[int, ...]]]:
        return [(m, d, ANSWER_DATA[d]) for m, d in ANSWER_GRID[preset.name]]


BENCHMARKS = [QuestionTraining(), AnswerTraining()]
