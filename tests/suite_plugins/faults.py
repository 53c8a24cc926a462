"""Benchmarks that fail on purpose, loaded through $TFMATRIX_SUITE_PLUGINS in tests."""
import os
import signal
import time

from suite.definitions import Benchmark, NotApplicable, Prepared, Variant


class Fault(Benchmark):
    seed = "-"
    title = "fault injection"

    def __init__(self, name, behaviour, timeout=None):
        self.name = "faults." + name
        self.behaviour = behaviour
        self.timeout = timeout

    def variants(self, preset):
        return [Variant(self.name, self.seed, (("behaviour", self.behaviour),), mode="eager", api="tf",
                        timeout=self.timeout)]

    def prepare(self, variant, env):
        b = self.behaviour
        if b == "raise":
            raise ValueError("broken on purpose\nsecond line")
        if b == "na":
            raise NotApplicable("not here, on purpose")
        if b == "hang":
            time.sleep(3600)
        if b == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        if b == "abort":
            os.abort()
        return Prepared(step=lambda: sum(range(50)))


class WindowFault(Benchmark):
    """Three variants sampled in one window; two fail while being sampled (after their first bouts)."""

    name = "faults.window"
    seed = "-"
    title = "fault injection while interleaved"

    def variants(self, preset):
        return [Variant(self.name, self.seed, (("behaviour", b),), mode="eager", api="tf")
                for b in ("steady", "raise_later", "crash_later")]

    def prepare(self, variant, env):
        b = variant.param("behaviour")
        calls = [0]

        def step():
            calls[0] += 1
            if calls[0] > 400 and b == "raise_later":
                raise RuntimeError("failed while sampled")
            if calls[0] > 400 and b == "crash_later" and not os.environ.get("FAULTS_NO_CRASH"):
                os.kill(os.getpid(), signal.SIGKILL)
            return sum(range(50))

        return Prepared(step=step)


BENCHMARKS = [
    Fault("ok1", "ok"),
    Fault("raise", "raise"),
    Fault("na", "na"),
    Fault("crash", "crash"),
    Fault("ok2", "ok"),
    Fault("hang", "hang", timeout=3),
    Fault("ok3", "ok"),
    Fault("abort", "abort"),
    Fault("ok4", "ok"),
    WindowFault(),
]
