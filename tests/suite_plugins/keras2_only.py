"""A user benchmark that works with Keras 2 only: ``layers.experimental.preprocessing`` is gone in Keras 3.

The Docker end-to-end test runs it beside examples/own_benchmark: an error
record in the Keras 3 cell, ok in the TF 2.15 cell.
"""
from suite.api import UserBenchmark


class Rescaling(UserBenchmark):
    name = "legacy.rescaling"
    title = "Keras 2's experimental Rescaling layer on a batch of images"
    params = {"batch": [8]}

    def setup(self, p, env):
        layer = env.keras.layers.experimental.preprocessing.Rescaling(1 / 255.0)
        x = env.rng().rand(p["batch"], 16, 16, 3).astype("float32")
        return lambda: env.materialize(layer(x))


BENCHMARKS = [Rescaling()]
