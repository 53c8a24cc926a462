"""The measurement core: first call, warm-up, calibration, repeats.

Kept free of TensorFlow and of any output formatting (pyperf's split): it
takes a callable and a budget and returns raw samples. Everything here is
``time.perf_counter`` based.

Why not pyperf or asv inside the cell: a cell may only hold numpy and its
TF/Keras (pyperf would have to be installed into every image, including
Python 3.7 ones), and pyperf's worker model spawns a fresh process per value
and re-runs the setup each time; for TensorFlow that setup (import, model
build, tracing) costs seconds to minutes per value. Here one process imports
TF and builds the model once, and between-process variance is measured by
running the same variant in a few fresh processes (see ``isolation``).
``timeit.Timer.autorange`` calibrates the same way as ``calibrate`` below but
would disable the garbage collector while timing, which hides a real cost of
eager TensorFlow (it allocates many Python objects per step).
"""
from __future__ import annotations

import dataclasses
import gc
import itertools
import math
import os
import resource
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

timer = time.perf_counter


@dataclass(frozen=True)
class Budget:
    """How much measuring a preset affords one variant in one process.

    ``repeats`` samples are always taken (``min_repeats`` when one call is
    slower than ``max_time`` allows); after that, sampling goes on until the
    95% interval of the median is within ``ci`` of it (relative half-width)
    or ``max_repeats`` samples or ``max_time`` seconds are spent: adaptive
    stopping, so a quiet variant costs little and a noisy one gets more.
    """

    warmup: int = 2            # calls after the first one, before calibrating
    repeats: int = 5           # samples always taken per process
    min_repeats: int = 3       # never fewer, even when one call is slow
    target_time: float = 0.1   # a repeat should last at least this long (s)
    max_number: int = 10000    # cap on calls per repeat
    max_time: float = 30.0     # soft cap on the measuring time per variant (s)
    max_repeats: int = 0       # adaptive stopping's cap (0: exactly ``repeats``)
    ci: float = 0.0            # stop when the median's 95% interval is within this (0.02 = +-2%)


def spread_over(budget: Budget, rounds: int) -> Budget:
    """The budget of one of ``rounds`` fresh processes that share a variant's samples (pyperf's trade).

    The interleaved schedule measures every variant in ``rounds`` processes;
    each takes about 1/rounds of the samples and time, so the run costs the
    same sampling time and the samples come from ``rounds`` process states
    instead of one. Never fewer than two samples a process.
    """
    if rounds <= 1:
        return budget
    repeats = max(2, -(-budget.repeats // rounds))
    return dataclasses.replace(
        budget, repeats=repeats, min_repeats=max(2, min(budget.min_repeats, repeats)),
        max_repeats=max(repeats, -(-budget.max_repeats // rounds)) if budget.max_repeats else 0,
        max_time=budget.max_time / rounds)


@dataclass
class Measurement:
    """Raw result of timing one callable."""

    samples: List[float]          # seconds per call, one value per repeat
    number: int                   # calls per repeat (calibrated)
    first_call_s: float           # the very first call, whole (tracing, graph building)
    warmup_calls: int
    calibration: List[Dict[str, float]] = field(default_factory=list)
    stopped: str = "repeats"      # why sampling stopped: repeats | ci | max_repeats | max_time


def run_loop(fn: Callable[[], Any], number: int) -> float:
    """Time ``number`` back-to-back calls; the loop costs tens of ns per call.

    The self-check benchmark runs exactly this loop over an empty callable, so
    the per-call overhead is measured, not assumed.
    """
    it = itertools.repeat(None, number)
    t0 = timer()
    for _ in it:
        fn()
    return timer() - t0


def calibrate(fn: Callable[[], Any], estimate: float, budget: Budget) -> Tuple[int, List[Dict[str, float]]]:
    """Find how many calls make one repeat last ``budget.target_time``.

    Starts from the warm-up's per-call estimate and verifies it by timing
    (like ``timeit.autorange``, but converging in one or two steps). The loops
    run here also serve as further warm-up.
    """
    steps: List[Dict[str, float]] = []
    number = _number_for(estimate, budget)
    for _ in range(4):
        elapsed = run_loop(fn, number)
        steps.append({"number": number, "elapsed": elapsed})
        if elapsed >= budget.target_time * 0.8 or number >= budget.max_number:
            break
        per_call = max(elapsed / number, 1e-9)
        number = _number_for(per_call, budget)
    return number, steps


def _number_for(per_call: float, budget: Budget) -> int:
    if per_call <= 0:
        return budget.max_number
    return max(1, min(budget.max_number, int(math.ceil(budget.target_time / per_call))))


class Sampler:
    """One callable, ready to be sampled: first call, warm-up and calibration done.

    Splitting "get ready" from "take a sample" is what lets the worker
    interleave the samples of several variants (round robin over a window of
    variants), so a slow phase of the host hits each of them a little instead
    of one of them fully, and two variants sampled in the same rounds can be
    compared round by round (paired).
    """

    def __init__(self, fn: Callable[[], Any], budget: Budget, inner: int = 1, self_timed: bool = False) -> None:
        self.fn = fn
        self.budget = budget
        self.inner = inner
        self.self_timed = self_timed          # fn returns the seconds it measured: one call a sample, no warm-up
        self.samples: List[float] = []
        self.spent = 0.0
        t0 = timer()
        first = fn()
        self.first_call_s = float(first) if self_timed else timer() - t0
        warm: List[float] = []
        for _ in range(0 if self_timed else budget.warmup):
            t0 = timer()
            fn()
            warm.append(timer() - t0)
        estimate = sorted(warm)[len(warm) // 2] if warm else self.first_call_s
        # A call slower than the whole budget allows: one call per repeat and only
        # as many repeats as fit (never fewer than min_repeats).
        self.calibration: List[Dict[str, float]] = []
        if self_timed or estimate * budget.min_repeats >= budget.max_time:
            self.number = 1
        else:
            self.number, self.calibration = calibrate(fn, estimate, budget)
        self.per_repeat = max(estimate * self.number, 1e-9)
        self.wanted = max(budget.min_repeats, min(budget.repeats, int(budget.max_time // self.per_repeat)))
        self.warmup_calls = len(warm) + sum(int(s["number"]) for s in self.calibration)
        self.stopped = ""
        self.error: Optional[BaseException] = None
        self.error_text = ""
        self.wall = 0.0           # time spent in its bouts, garbage collections included

    def sample(self, collect: bool = True) -> float:
        """One repeat: ``number`` calls, after a garbage collection (kept out of the timed loop).

        ``collect=False`` when the caller collected already: ``interleave``
        collects once per round, because with a window's models alive a
        collection costs tens of milliseconds, once per sample it would cost
        more than the sampling itself.
        """
        t0 = timer()
        if collect:
            gc.collect()
        elapsed = float(self.fn()) if self.self_timed else run_loop(self.fn, self.number)
        self.spent += elapsed
        value = elapsed / (self.number * self.inner)
        self.samples.append(value)
        self.wall += timer() - t0
        return value

    def fail(self, error: BaseException, text: str) -> None:
        """The callable raised while being sampled: no more samples, the worker reports the error."""
        self.error, self.error_text = error, text
        self.stopped = "error"

    def done(self) -> bool:
        """Enough samples: the fixed count, then (adaptive) a tight enough median or the budget spent."""
        if self.error is not None:
            return True
        n = len(self.samples)
        b = self.budget
        if n < self.wanted:
            return False
        cap = max(b.max_repeats, self.wanted)
        if n >= cap:
            self.stopped = "max_repeats" if cap > self.wanted else "repeats"
            return True
        if self.spent + self.per_repeat > b.max_time:
            self.stopped = "max_time"
            return True
        if b.ci > 0 and relative_ci(self.samples) <= b.ci:
            self.stopped = "ci"
            return True
        return False

    def result(self) -> Measurement:
        return Measurement(samples=list(self.samples), number=self.number, first_call_s=self.first_call_s,
                           warmup_calls=self.warmup_calls, calibration=self.calibration,
                           stopped=self.stopped or "repeats")


def relative_ci(samples: List[float]) -> float:
    """Half-width of the median's 95% interval relative to the median (inf when too few samples)."""
    from .stats import median, median_ci

    lo, hi = median_ci(samples)
    mid = median(samples)
    if mid <= 0 or lo != lo:           # NaN: too few samples for an interval
        return math.inf
    return (hi - lo) / 2.0 / mid


def interleave(samplers: List[Sampler], before: Optional[Callable[[int], None]] = None) -> int:
    """Sample every sampler round by round until each is done; returns the number of rounds.

    Round r takes one sample of each sampler that is not done, forwards on
    even rounds and backwards on odd ones (A B B A: a linear drift within a
    round cancels). Sample i of two samplers was taken in the same round, a
    few bouts apart, which is what a paired comparison needs. ``before(i)``
    runs before sampler i's bout (the worker names the variant to its parent
    there, outside the timed loop).
    """
    rounds = 0
    while True:
        live = [i for i, s in enumerate(samplers) if not s.done()]
        if not live:
            return rounds
        gc.collect()
        for i in (live if rounds % 2 == 0 else live[::-1]):
            if before is not None:
                before(i)
            try:
                samplers[i].sample(collect=False)
            except Exception as e:        # one variant's failure must not cost its window-mates
                samplers[i].fail(e, traceback.format_exc())
        rounds += 1


def measure(fn: Callable[[], Any], budget: Budget, inner: int = 1) -> Measurement:
    """First call, warm-up, calibration, then repeats back to back: one variant alone.

    ``inner`` divides every time: a call that runs ``inner`` training steps
    (``fit`` over a dataset of ``inner`` batches) reports seconds per step.
    """
    s = Sampler(fn, budget, inner)
    while not s.done():
        s.sample()
    return s.result()


def time_once(fn: Callable[[], Any]) -> Tuple[Any, float]:
    """Run ``fn`` once and return (its result, seconds)."""
    t0 = timer()
    out = fn()
    return out, timer() - t0


# -- peak memory -------------------------------------------------------------

def reset_peak_rss() -> bool:
    """Reset the kernel's high-water mark (VmHWM) for this process (Linux 4.0+)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> Optional[float]:
    """Peak resident memory since the last reset, in MiB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    try:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    except (ValueError, OSError):  # pragma: no cover - non-Linux
        return None


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1
