"""One environment on two devices (or thread settings), and the size from which the GPU starts to pay.

A GPU cell and a CPU cell that run the same thing (the same TF or Keras 3
backend, Python, packages, preset and benchmarks, on the same host) answer a
question the version tables never ask: how much faster is the GPU, and from
what size on? Built cells pair when they differ only in target (and what the
target builds: CUDA, base image, wheels); existing environments pair when
they are one interpreter run with a different device or thread setting
(``DEVICE_ENV``: ``target = "cpu"`` with ``env = {JAX_PLATFORMS = "cpu"}``
beside ``target = "gpu"``, or ``OMP_NUM_THREADS = "1"`` beside ``"2"`` on a
machine without a GPU). ``device_groups`` finds them; the report's Devices
section (``report.devices_view``) compares each pair variant by variant with
``upgrade.upgrade_view`` (the one verdict rule: ``moderation.judge``; two cells
of one interleaved run pair round by round) and, along the size axes the
seeds turn on (``SIZE_AXES``), finds the crossover (``crossover``).
"""
from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .hardware import cpu_model, stack_key
from .statistics.words import FASTER
from .statistics.words import THIN as ONE_ROUND

# Environment variables that choose the device or the number of threads, not what runs: cells that differ only in
# these (and the target) are one environment in two settings.
DEVICE_ENV = ("JAX_PLATFORMS", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
              "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "XLA_FLAGS",
              # how JAX takes the GPU's memory (scripts/gpu_check.py's GPU cell does not preallocate): GPU-only
              "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR")
# What a built cell's target changes in its spec (a GPU image, CUDA, the GPU wheels): not a difference in what runs.
_BUILT_FOR_TARGET = ("target", "cuda", "cudnn", "base", "requirements", "bootstrap", "origin")


@dataclass(frozen=True, order=True)
class DeviceSetting:
    """Where one environment ran: its target and the device/thread variables it was given."""

    target: str
    env: tuple[tuple[str, str], ...]

    @property
    def label(self) -> str:
        """ "GPU", "CPU, JAX_PLATFORMS=cpu", "CPU, OMP_NUM_THREADS=1"."""
        extra = ", ".join(f"{k}={v}" for k, v in self.env)
        return self.target.upper() + (f", {extra}" if extra else "")

    @property
    def sort_key(self) -> tuple[bool, str]:
        """The reference first: a CPU setting before a GPU one, then by its variables."""
        return (self.target != "cpu", self.label)


def device_setting(c: Any) -> DeviceSetting:
    return DeviceSetting(c.target, tuple(sorted((k, v) for k, v in c.facts.spec.env.items() if k in DEVICE_ENV)))


def device_key(c: Any) -> str:
    """Everything about a cell but its device setting, with the host it ran on: equal keys ran the same thing there.

    ``hardware.stack_key`` without the target, the device/thread variables and
    what a built cell's target builds; with the pool and CPU model, so a pair
    compares devices and not hosts.
    """
    key = json.loads(stack_key(c))
    for k in _BUILT_FOR_TARGET:
        key["spec"].pop(k, None)
    if isinstance(key["spec"].get("env"), dict):
        key["spec"]["env"] = {k: v for k, v in key["spec"]["env"].items() if k not in DEVICE_ENV}
    key["seen"].pop("target", None)
    key["host"] = [c.facts.spec.pool, cpu_model(c)]
    return json.dumps(key, sort_keys=True, default=str)


def family_key(c: Any) -> str:
    """``device_key`` without the preset: pairs of one environment run at several presets (each its own sizes: n =
    256 in quick, 2000 in seed, ...) pool their sizes for one crossover."""
    key = json.loads(device_key(c))
    key["spec"].pop("preset", None)
    key["seen"].pop("preset", None)
    if isinstance(key["seen"].get("request"), dict):
        key["seen"]["request"].pop("preset", None)
    return json.dumps(key, sort_keys=True, default=str)


@dataclass(frozen=True)
class DeviceGroup:
    """One environment's cells in two or more device settings, the reference (CPU, else the first) first."""

    label: str
    cells: tuple[Any, ...]

    def pairs(self) -> list[tuple[Any, Any]]:
        """(reference, other) for every other setting: the ratio is other/reference (GPU/CPU for a device pair)."""
        return [(self.cells[0], c) for c in self.cells[1:]]


def device_groups(cells: Sequence[Any]) -> list[DeviceGroup]:
    """Cells with results grouped by ``device_key``: groups with two or more settings, one cell each.

    A group where one setting has several cells (two CPU cells that differ in
    something the key leaves out, such as a wheel) is not paired: which to
    compare would be a guess.
    """
    by_key: dict[str, list[Any]] = {}
    for c in cells:
        if c.has_records:
            by_key.setdefault(device_key(c), []).append(c)
    out = []
    for group in by_key.values():
        settings = [device_setting(c) for c in group]
        if len(set(settings)) > 1 and len(set(settings)) == len(settings):
            ordered = tuple(c for _, c in sorted(zip(settings, group, strict=True), key=lambda p: p[0].sort_key))
            out.append(DeviceGroup(ordered[0].label.rsplit(" · ", 1)[0], ordered))
    return out


def gpu_pair(cells: Sequence[Any]) -> bool:
    """Some device group holds a GPU and a CPU cell of one environment."""
    return any({c.target for c in g.cells} >= {"cpu", "gpu"} for g in device_groups(cells))


# -- sizes and crossovers --------------------------------------------------------

@dataclass(frozen=True)
class SizeAxis:
    """A size the seeds turn on: the benchmarks (globs), the parameter, which element of it is the size."""

    seed: str
    benchmarks: tuple[str, ...]
    param: str
    index: int | None           # None: the parameter is the size; else its element (a shape's batch or side)
    name: str                   # "matrix size n", in words

    def size(self, params: Mapping[str, Any]) -> float | None:
        value = params.get(self.param)
        if self.index is not None:
            value = value[self.index] if isinstance(value, (list, tuple)) and len(value) > self.index else None
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None

    def covers(self, benchmark: str) -> bool:
        return any(fnmatch.fnmatchcase(benchmark, g) for g in self.benchmarks)


SIZE_AXES = (
    SizeAxis("002", ("tensor_ops.matmul",), "n", None, "matrix size n"),
    SizeAxis("000", ("training.*",), "batch_shape", 0, "batch size"),
    SizeAxis("001", ("inference.*",), "batch_shape", 0, "batch size"),
    SizeAxis("003", ("graphs.xla",), "input_shape", 1, "image side"),
)


# Variants that run on the CPU whatever the device setting (NumPy in the same processes): on a GPU/CPU pair they are the
# control, not a device question; their ratio should be 1.
CONTROL_APIS = ("numpy",)
# A control whose whole interval lies beyond this (either way) moved: the two cells differ in more than the device.
CONTROL_MARGIN = 0.10


@dataclass(frozen=True)
class SizePoint:
    size: float
    ratio: float                # time B / time A (GPU/CPU)
    low: float                  # its 95% interval (nan with one process a side)
    high: float
    variant: str
    verdict: str                # B against A: "faster", "slower", "no clear difference" or "not enough replication"

    def text(self) -> str:
        """ "0.40 [0.36, 0.44] at 1024", "0.89 (one round) at 2000"."""
        ci = f"[{self.low:.2f}, {self.high:.2f}]" if self.verdict != ONE_ROUND else "(one round)"
        return f"{self.ratio:.2f} {ci} at {_num(self.size)}"


@dataclass(frozen=True)
class Bracket:
    """Where B starts to pay: between the largest size where it is decided not faster and the smallest from which it
    is decided faster at every larger measured size; ``estimate`` interpolates between them (shown, not a verdict)."""

    below: float
    above: float
    estimate: float


@dataclass(frozen=True)
class Crossover:
    """One configuration along one size axis: its points, and the sizes between which B/A falls below 1 for good."""

    axis: SizeAxis
    benchmark: str
    config: str                 # every other parameter, as text
    points: tuple[SizePoint, ...]   # by size
    bracket: Bracket | None     # None: no crossover shown within the measured sizes, ``why``
    why: str = ""
    data: str = ""              # where the data lives (the variant's ``info.data``): a transfer per call moves it

    @property
    def at(self) -> float | None:
        """The interpolated crossover (for the chart's line), or None."""
        return self.bracket.estimate if self.bracket else None

    def text(self, b: str = "GPU", a: str = "CPU") -> str:
        """ "GPU pays from matrix size n between 128 and 512 (≈ 300 interpolated; GPU/CPU 3.00 [2.9, 3.1] at 128, ...)",
        or "no crossover shown within the measured sizes (matrix size n): why; ..."."""
        sizes = ", ".join(p.text() for p in self.points)
        data = f"; {self.data}" if self.data else ""
        if self.bracket is None:
            why = self.why.replace("B ", f"{b} ")
            return f"no crossover shown within the measured sizes ({self.axis.name}): {why} ({b}/{a} {sizes}){data}"
        x = self.bracket
        return (f"{b} pays from {self.axis.name} between {_num(x.below)} and {_num(x.above)} "
                f"(≈ {_num(x.estimate)} interpolated; {b}/{a} {sizes}){data}")


def _num(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.3g}"


def crossover_at(points: Sequence[SizePoint]) -> tuple[Bracket | None, str]:
    """(the bracket, "") where the verdicts show one, else (None, why not).

    A crossover is stated only from verdicts: B decided faster (its interval
    below 1) at the largest measured size and every size down to some size S,
    and decided not faster (slower, or the same: a replicated interval
    spanning 1) at the size just below S. One size is never a crossover, a
    one-round point never decides a side, and "faster everywhere" places no
    crossover inside the measured sizes. The estimate interpolates log ratio
    on log size between the two sizes, kept inside them.
    """
    pts = sorted(points, key=lambda p: p.size)
    if len(pts) < 2:
        return None, ("one measured size: a crossover needs sizes on both sides of it" if pts else "no sizes")
    last = pts[-1]
    if last.verdict != FASTER:
        return None, f"B is not shown faster at the largest measured size, {_num(last.size)} ({last.verdict})"
    i = len(pts) - 1
    while i > 0 and pts[i - 1].verdict == FASTER:
        i -= 1
    if i == 0:
        return None, f"B is faster at every measured size, from the smallest ({_num(pts[0].size)}): the crossover " \
                     "lies below it"
    before, after = pts[i - 1], pts[i]
    if before.verdict == ONE_ROUND:
        return None, f"not enough replication at {_num(before.size)} (one round): whether B pays below " \
                     f"{_num(after.size)} is open"
    la, lb = math.log(before.ratio), math.log(after.ratio)
    share = la / (la - lb) if la > lb else 0.0
    if share <= 0.0 or share >= 1.0:
        return Bracket(before.size, after.size, before.size if share <= 0.0 else after.size), ""
    estimate = math.exp(math.log(before.size) + share * (math.log(after.size) - math.log(before.size)))
    return Bracket(before.size, after.size, estimate), ""


def is_control(params: Mapping[str, Any]) -> bool:
    """A variant that runs on the CPU in every device setting (NumPy in the same processes)."""
    return params.get("api") in CONTROL_APIS


def control_moved(changes: Sequence[Any], params: Mapping[str, Mapping[str, Any]]) -> str:
    """Why a GPU/CPU pair is void, or "": a control (``is_control``) whose whole interval lies beyond
    ``CONTROL_MARGIN`` either way moved between the two cells, so they differ in more than the device."""
    for ch in changes:
        p = params.get(ch.id)
        if p is None or not is_control(p) or not ch.ci.replicated:
            continue
        if ch.ci.low > 1 + CONTROL_MARGIN or ch.ci.high < 1 / (1 + CONTROL_MARGIN):
            return (f"the control {ch.id} (NumPy, on the CPU in both cells) moved: B/A {ch.ci.ratio:.2f} "
                    f"[{ch.ci.low:.2f}, {ch.ci.high:.2f}], beyond ±{CONTROL_MARGIN:.0%}; the two cells differ in more "
                    "than the device (the host's state, threads), so no crossover is stated for this pair")
    return ""


def crossovers(changes: Sequence[Any], params: Mapping[str, Mapping[str, Any]],
               axes: Sequence[SizeAxis] = SIZE_AXES, without_controls: bool = False,
               data: Mapping[str, str] | None = None) -> list[Crossover]:
    """Per size axis and configuration (every other parameter equal), the ratios by size and their crossover.

    ``changes``: ``compare.result.VariantChange`` of one pair, or of pairs of one family (``family_key``: the same
    environment at several presets), the first at a size kept; ``params``: each variant id's parameters;
    ``without_controls``: leave out the controls (on a GPU/CPU pair NumPy runs on the CPU in both: no device
    question); ``data``: where each variant id's data lives (``Variant.data``), said with its crossover.
    """
    out = []
    for axis in axes:
        series: dict[tuple[str, str], list[SizePoint]] = {}
        for ch in changes:
            p = params.get(ch.id)
            size = axis.size(p) if p is not None and axis.covers(ch.benchmark) else None
            if p is None or size is None or (without_controls and is_control(p)):
                continue
            config = ", ".join(f"{k}={_text(v)}" for k, v in p.items() if k != axis.param)
            points = series.setdefault((ch.benchmark, config), [])
            if all(q.size != size for q in points):
                points.append(SizePoint(size, ch.ci.ratio, ch.ci.low, ch.ci.high, ch.id, ch.verdict))
        for (bench, config), pts in sorted(series.items()):
            pts.sort(key=lambda p: p.size)
            bracket, why = crossover_at(pts)
            out.append(Crossover(axis, bench, config, tuple(pts), bracket, why, (data or {}).get(pts[0].variant, "")))
    return out


def _text(value: Any) -> str:
    return "x".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)


def seed_gpu_note(ran: Sequence[Any], answered: Sequence[Any]) -> str:
    """Why a claim the seed measured on a GPU has no GPU line here: no GPU cell ran, or those that ran could not say.

    ``ran``: the cells with results; ``answered``: the claim's GPU cells (``claims.ClaimCell``), all without lines.
    Only when no GPU cell ran is the claim "measured on the CPU only": a GPU cell that ran and cannot answer
    (a JAX cell has no tf.function) is named, with where its reason is.
    """
    gpu = [c.name for c in ran if c.target == "gpu"]
    if not gpu:
        return "The seed measured this on a GPU; here it is measured on the CPU only (no GPU cell has it)."
    cells = f"cell{'s' * (len(gpu) != 1)} {', '.join(gpu)}"
    if answered:
        return f"The seed measured this on a GPU; the GPU {cells} ran but could not answer it (the reasons below)."
    return (f"The seed measured this on a GPU; the GPU {cells} ran but none is a cell this claim compares "
            "(a TF version or reference cell it asks for).")
