"""Training that slows down within a run: per-batch time early in a process against after hundreds of batches.

keras-team/keras#23154 (2026-06): moving from TF 2.10 to Keras 3 on PyTorch,
``fit()`` "starts fine", then memory grows and it "slows to a crawl after
about 100 batches". A time that drifts upward inside one process is a
figure no steady-state sample shows on its own: ``drift.fit`` measures the
same training twice per process, in two variants of one window:

* ``phase=early``: a new model, its training steps (``train_on_batch``, one
  batch of 32 a call, cycling over 8 batches) sampled from the first on;
* ``phase=late``: a new model first trained for ``steps`` batches (each
  step timed), then sampled the same way. Those steps give the record its
  figures: the per-step time's drift (a least-squares slope, in percent of
  its mean per 100 steps, ``drift_pct_per_100_steps``) and how far the
  process's resident memory grew over them (``rss_growth_mib``).

The model is a small classifier (Dense 256 -> 128 -> 64 -> 10, relu, Adam,
sparse categorical cross-entropy); samples are seconds per step. ``fit``'s
own per-call work (an epoch iterator, callbacks) would hide a step that
slows by a few percent, so the steps are ``train_on_batch``'s. A TensorFlow cell runs the ``tf.keras``
variants, a JAX or PyTorch cell the ``keras`` ones.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from ..definitions import Benchmark, Prepared, Preset, Variant, make_variant
from ..harness import timer
from .compiled import keras3, model_info

KERAS_APIS = ("tf.keras", "keras")
PHASES = ("early", "late")
WIDTHS, CLASSES = (256, 128, 64), 10
# preset -> (batch, batches cycled over, steps trained before the late phase is sampled)
SCALE = {"quick": (32, 8, 100), "seed": (32, 8, 400), "standard": (32, 8, 1000), "full": (32, 8, 2000)}


def rss_mib() -> Optional[float]:
    """The process's resident memory now (Linux), in MiB."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2.0 ** 20
    except (OSError, ValueError, IndexError):
        return None


def drift_pct(times: List[float]) -> float:
    """The least-squares slope of ``times`` (one per step), in % of their mean per 100 steps."""
    n = len(times)
    xs = list(range(n))
    mx, my = sum(xs) / n, sum(times) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, times)) / sxx if sxx else 0.0
    return 100.0 * slope * 100 / my if my > 0 else 0.0


class DriftFit(Benchmark):
    name = "drift.fit"
    seed = "today"
    title = "keras#23154: a training step at the start of a process and after hundreds of steps"

    def variants(self, preset: Preset) -> List[Variant]:
        batch, batches, steps = SCALE[preset.name]
        return [make_variant(self, "eager", api, model="mlp", batch=batch, batches=batches, steps=steps,
                             phase=phase)
                for api in KERAS_APIS for phase in PHASES]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        k = keras3(env, variant.api, "training steps timed one by one")
        batch, batches, steps = (int(variant.param(n)) for n in ("batch", "batches", "steps"))
        L = k.layers
        ipt = L.Input(shape=(WIDTHS[0],))
        x = ipt
        for w in WIDTHS[1:]:
            x = L.Dense(w, activation="relu")(x)
        model = k.models.Model(ipt, L.Dense(CLASSES)(x))
        model.compile(optimizer="adam", loss=k.module.losses.SparseCategoricalCrossentropy(from_logits=True))
        rng = env.rng(1)
        xs = [rng.random_sample((batch, WIDTHS[0])).astype("float32") for _ in range(batches)]
        ys = [rng.randint(0, CLASSES, (batch,)) for _ in range(batches)]
        turn = [0]

        def step() -> Any:
            i = turn[0] = (turn[0] + 1) % batches
            return model.train_on_batch(xs[i], ys[i])

        info = model_info(k, model)
        if variant.param("phase") == "early":
            return Prepared(step=step, info=info)
        step()                                          # the first step traces: not a step of the run
        before, times = rss_mib(), []
        for _ in range(steps):
            t0 = timer()
            step()
            times.append(timer() - t0)
        grown = (rss_mib() or 0.0) - (before or 0.0)
        drift = drift_pct(times)
        info["trained_batches"] = steps

        def figures() -> Dict[str, Any]:
            return {"drift_pct_per_100_steps": (drift, "%/100 steps"), "rss_growth_mib": (grown, "MiB")}
        return Prepared(step=step, info=info, figures=figures)


BENCHMARKS = [DriftFit()]
