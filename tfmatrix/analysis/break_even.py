"""After how many calls a side with a dearer first call pays: compiling (``tf.function``, XLA, ``jax.jit``,
``torch.compile``) or moving to the GPU costs once, and saves on every call after.

Why its own question: "does jit_compile pay?" has two answers, the steady call
(what the line's ratio says) and the calls it takes to win back the first
call's compile. A 13.8 s ``torch.compile`` that saves 40 µs a call pays after
about 345,000 calls: for a script that calls it a hundred times, never.

The first call of each process is recorded apart from the samples
(``setup.first_call_s``, the compile and the first run); each side's is the
median over its processes. Pure arithmetic on two ``Variant`` records.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from .variant import Variant


@dataclass(frozen=True)
class BreakEven:
    """The faster side's extra first-call cost and the calls after which its per-call saving repays it."""

    first_extra_s: float        # the faster side's first call, less the other's (each the median over processes)
    saving_s: float             # what each later call saves (time per call: per iteration x ``inner``)
    calls: int                  # first_extra_s / saving_s, rounded up

    def text(self, faster: str) -> str:
        """"A's first call costs 7.66 s more: it pays after about 330,000 calls" (two significant figures: the
        first calls vary from process to process by more than that)."""
        shown = self.calls if self.calls < 100 else int(float(f"{self.calls:.2g}"))
        return f"{faster}'s first call costs {_seconds(self.first_extra_s)} more: it pays after about {shown:,} calls"


def _seconds(s: float) -> str:
    return f"{s:.3g} s" if s >= 1 else f"{s * 1e3:.3g} ms"


def _first(v: Variant) -> float | None:
    values = [float(x) for x in v.first_call_s if isinstance(x, (int, float)) and x >= 0]
    return statistics.median(values) if values else None


def break_even(fast: Variant, slow: Variant, t_fast: float, t_slow: float) -> BreakEven | None:
    """Where ``fast`` (the side decided faster per call, ``t_fast`` < ``t_slow`` seconds per iteration) has the
    dearer first call: after how many calls it pays. None where its first call is not dearer, where either first
    call was not recorded, or where it pays within the first two calls (nothing to say)."""
    first_fast, first_slow = _first(fast), _first(slow)
    if first_fast is None or first_slow is None or not t_fast < t_slow:
        return None
    extra = first_fast - first_slow
    saving = (t_slow - t_fast) * fast.inner
    if extra <= 0 or saving <= 0:
        return None
    calls = math.ceil(extra / saving)
    return BreakEven(extra, saving, calls) if calls > 2 else None
