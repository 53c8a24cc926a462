"""Self-check: what the harness itself costs per timed call.

An empty callable through the very loop every benchmark uses. Its median is
the per-call overhead included in every other figure (target: under 1 us).
"""
from __future__ import annotations

from typing import Any, List

from ..definitions import Benchmark, Prepared, Preset, Variant


def _empty() -> None:
    return None


class HarnessOverhead(Benchmark):
    name = "selfcheck.overhead"
    seed = "-"
    title = "Harness overhead: an empty callable through the timing loop"

    def variants(self, preset: Preset) -> List[Variant]:
        return [Variant(self.name, self.seed, (("callable", "empty"),), mode="eager", api="tf")]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        return Prepared(step=_empty)


BENCHMARKS = [HarnessOverhead()]
