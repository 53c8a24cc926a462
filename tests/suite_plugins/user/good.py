"""User benchmarks for the tests: plain TF (the fake TensorFlow has no Keras), declared through suite.api."""
import os

from suite.api import NotApplicable, Step, UserBenchmark


class Sum(UserBenchmark):
    name = "own.sum"
    title = "a sum of a range"
    apis = ("tf",)
    params = {"n": [10, 1000]}
    sizes = {"quick": {"n": [10, 100]}}

    def setup(self, p, env):
        n = p["n"]
        first = []
        return Step(lambda: sum(range(n)), first=lambda: first.append(1), info={"n": n})


class Picky(UserBenchmark):
    """Raises where $OWN_FAIL_IN names this cell, n/a where $OWN_NA is set, measures elsewhere."""

    name = "own.picky"
    apis = ("tf",)
    params = {"k": [1]}

    def setup(self, p, env):
        if os.environ.get("OWN_NA"):
            raise NotApplicable("not in this cell, on purpose")
        if os.environ.get("OWN_FAIL_IN") == os.environ.get("TFMATRIX_CELL"):
            raise RuntimeError("fails in this cell on purpose")
        return lambda: p["k"] + 1


BENCHMARKS = [Sum(), Picky()]
