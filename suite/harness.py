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

import gc
import itertools
import math
import os
import resource
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

timer = time.perf_counter


@dataclass(frozen=True)
class Budget:
    """How much measuring a preset affords one variant in one process."""

    warmup: int = 2            # calls after the first one, before calibrating
    repeats: int = 5           # samples wanted per process
    min_repeats: int = 3       # never fewer, even when one call is slow
    target_time: float = 0.1   # a repeat should last at least this long (s)
    max_number: int = 10000    # cap on calls per repeat
    max_time: float = 30.0     # soft cap on the measuring time per variant (s)


@dataclass
class Measurement:
    """Raw result of timing one callable."""

    samples: List[float]          # seconds per call, one value per repeat
    number: int                   # calls per repeat (calibrated)
    first_call_s: float           # the very first call, whole (tracing, graph building)
    warmup_calls: int
    calibration: List[Dict[str, float]] = field(default_factory=list)


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


def measure(fn: Callable[[], Any], budget: Budget, inner: int = 1) -> Measurement:
    """First call, warm-up, calibration, then repeats; samples per inner step.

    ``inner`` divides every time: a call that runs ``inner`` training steps
    (``fit`` over a dataset of ``inner`` batches) reports seconds per step.
    """
    t0 = timer()
    fn()
    first = timer() - t0

    warm: List[float] = []
    for _ in range(budget.warmup):
        t0 = timer()
        fn()
        warm.append(timer() - t0)
    estimate = sorted(warm)[len(warm) // 2] if warm else first

    # A call slower than the whole budget allows: one call per repeat and only
    # as many repeats as fit (never fewer than min_repeats).
    if estimate * budget.min_repeats >= budget.max_time:
        number, steps = 1, []
    else:
        number, steps = calibrate(fn, estimate, budget)
    per_repeat = max(estimate * number, 1e-9)
    repeats = max(budget.min_repeats, min(budget.repeats, int(budget.max_time // per_repeat)))

    samples: List[float] = []
    for _ in range(repeats):
        gc.collect()
        samples.append(run_loop(fn, number) / (number * inner))
    return Measurement(
        samples=samples,
        number=number,
        first_call_s=first,
        warmup_calls=len(warm) + sum(int(s["number"]) for s in steps),
        calibration=steps,
    )


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
