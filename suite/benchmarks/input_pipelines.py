"""Input pipelines, seed 000 factor 4: "numpy vs. tf.data.Dataset vs. ...".

The seed lists the input format among the factors behind TF2's training
slowdown: each format takes its own training loop (numpy arrays,
``tf.data.Dataset``, Python generator or ``Sequence``). ``input_pipelines.fit``
trains the seed answer's small model (``training.answer_small``: Conv1D 128
x 40, global average pooling, Dense 64, Dense 1) with ``fit`` for one epoch
of ``batches`` batches of the seed's small data (batch, 140, 30), fed by:

* ``numpy``: arrays of ``batches * batch`` samples, ``fit(x, y, batch_size)``;
* ``tf.data``: a ``tf.data.Dataset`` whose elements are whole batches (the
  seed's ``make_data_tf``), repeated; ``tf.data_prefetch``: the same with
  ``.prefetch(AUTOTUNE)`` (``tf.data.AUTOTUNE``, or
  ``tf.data.experimental.AUTOTUNE`` before TF 2.4);
* ``generator``: a Python generator cycling over the same batches
  (``fit_generator`` where ``fit`` does not take generators);
* ``sequence``: a ``keras.utils.Sequence`` (``PyDataset`` in Keras 3) over
  the same batches;
* ``torch.dataloader``: a PyTorch ``DataLoader`` over the same samples
  (a ``TensorDataset``, batches in order), which Keras 3's ``fit`` takes on
  the PyTorch backend (n/a where torch is not installed).

Every source holds the same float64 inputs and int64 targets, made once
before timing; samples are seconds per batch (``inner`` = ``batches``).
Standalone keras 2.x cannot consume a ``tf.data.Dataset`` (n/a). ``quick``
shrinks the model (width x 1/8) and batch like ``training``; ``standard``
and ``full`` use the seed's model and batch, with more batches per epoch.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ..definitions import Benchmark, NotApplicable, Prepared, Preset, Variant, make_variant
from .training import ANSWER_DATA, TF_DATA, answer_small, tf_data_part

KERAS_APIS = ("tf.keras", "keras")
MODES = ("eager", "graph")
SOURCES = ("numpy", "tf.data", "tf.data_prefetch", "generator", "sequence", "torch.dataloader")
# preset -> (batch size, width multiplier, batches per epoch)
SCALE: Dict[str, Tuple[int, float, int]] = {
    "quick": (8, 0.125, 4),
    "seed": (8, 0.125, 4),          # no seed claim rests on it: quick's shapes
    "standard": (32, 1.0, 20),
    "full": (32, 1.0, 50),
}


def batch_source(base: Any, xs: List[Any], ys: List[Any]) -> Any:
    """A ``Sequence``/``PyDataset`` subclass instance over the given batches."""

    class Batches(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()

        def __len__(self) -> int:
            return len(xs)

        def __getitem__(self, i: int) -> Any:
            return xs[i], ys[i]

    return Batches()


def torch_loader() -> Any:
    """``(x, y, batch) -> DataLoader`` over a ``TensorDataset``, in order; NotApplicable without torch."""
    try:
        import torch  # type: ignore
        from torch.utils.data import DataLoader, TensorDataset  # type: ignore
    except ImportError:
        raise NotApplicable("a PyTorch DataLoader needs torch, which this cell does not install")

    def make(x: Any, y: Any, batch: int) -> Any:
        return DataLoader(TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=batch, shuffle=False)
    return make


def cycle_batches(xs: List[Any], ys: List[Any]) -> Any:
    """An endless Python generator over the given batches."""
    while True:
        for x, y in zip(xs, ys):
            yield x, y


class FitInput(Benchmark):
    name = "input_pipelines.fit"
    seed = "000"
    title = ("Seed 000 factor 4: fit fed by numpy vs tf.data (with/without prefetch) vs generator vs Sequence "
             "(PyDataset) vs a PyTorch DataLoader")

    def tensorflow_part(self, variant: Variant) -> Optional[str]:
        return tf_data_part(variant)

    def variants(self, preset: Preset) -> List[Variant]:
        batch, width, batches = SCALE[preset.name]
        shape = (batch,) + tuple(ANSWER_DATA["small"][1:])
        out: List[Variant] = []
        for mode in MODES:
            for api in KERAS_APIS:
                for source in SOURCES:
                    out.append(make_variant(self, mode, api, model="answer_small", batch_shape=shape, width=width,
                                            batches=batches, input=source))
        return out

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        tf, compat = env.tf, env.compat
        k = env.keras(variant.api)            # NotApplicable if this Keras cannot run here
        source = variant.param("input")
        shape = tuple(variant.param("batch_shape"))
        n = int(variant.param("batches"))
        batch = shape[0]
        if source.startswith("tf.data") and k.api == "keras" and k.major < 3:
            raise NotApplicable("standalone keras %s cannot consume a tf.data.Dataset" % k.version)
        if source.startswith("tf.data"):
            compat.require_tf(TF_DATA)
        loader = torch_loader() if source == "torch.dataloader" else None
        if loader is not None and (k.major < 3 or not compat.eager()):
            raise NotApplicable("Keras %s in %s mode cannot consume a PyTorch DataLoader (Keras 3's fit can)"
                                % (k.version, "eager" if compat.eager() else "graph"))
        info: Dict[str, Any] = {"keras": k.describe()}
        if source == "sequence":
            base = compat.sequence_base(k)
            info["sequence_class"] = "%s.%s" % (base.__module__, base.__name__)
        prefetch = compat.autotune() if source == "tf.data_prefetch" else None

        from ..harness import time_once

        def build_and_compile() -> Any:
            m = answer_small(k, shape, float(variant.param("width")), compat)
            m.compile(compat.adam(k, 1e-4), "binary_crossentropy")
            return m

        model, build_s = time_once(build_and_compile)
        info["params"] = int(model.count_params())
        rng = env.rng(1)
        x = rng.randn(n * batch, *shape[1:])
        y = rng.randint(0, 2, (n * batch, 1))

        if source == "numpy":
            def fit_numpy() -> Any:
                return compat.fit_arrays(model, x, y, batch)
            return Prepared(step=fit_numpy, inner=n, build_s=build_s, info=info)

        xs = [x[i * batch:(i + 1) * batch] for i in range(n)]
        ys = [y[i * batch:(i + 1) * batch] for i in range(n)]
        if source.startswith("tf.data"):
            ds = tf.data.Dataset.from_tensor_slices((x.reshape((n,) + shape), y.reshape(n, batch, 1))).repeat()
            if prefetch is not None:
                ds = ds.prefetch(prefetch)
                info["prefetch"] = int(prefetch)

            def fit_dataset() -> Any:
                return compat.fit_dataset(k, model, ds, n)
            return Prepared(step=fit_dataset, inner=n, build_s=build_s, info=info)

        if loader is not None:
            data = loader(x.astype("float32"), y.astype("float32"), batch)

            def fit_loader() -> Any:
                return model.fit(data, epochs=1, verbose=0)
            return Prepared(step=fit_loader, inner=n, build_s=build_s, info=info)
        feed = cycle_batches(xs, ys) if source == "generator" else batch_source(compat.sequence_base(k), xs, ys)

        def fit_generator() -> Any:
            return compat.fit_generator(k, model, feed, n)
        return Prepared(step=fit_generator, inner=n, build_s=build_s, info=info)


BENCHMARKS = [FitInput()]
