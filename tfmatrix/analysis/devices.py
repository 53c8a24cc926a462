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
    env = c.cell_spec.get("env") if isinstance(c.cell_spec.get("env"), dict) else {}
    return DeviceSetting(c.target, tuple(sorted((k, str(v)) for k, v in env.items() if k in DEVICE_ENV)))


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
    key["host"] = [str(c.cell_spec.get("pool") or ""), cpu_model(c)]
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


@dataclass(frozen=True)
class SizePoint:
    size: float
    ratio: float                # time B / time A (GPU/CPU)
    low: float
    high: float
    variant: str


@dataclass(frozen=True)
class Crossover:
    """One configuration along one size axis: its points, and the size from which B/A < 1 for good."""

    axis: SizeAxis
    benchmark: str
    config: str                 # every other parameter, as text
    points: tuple[SizePoint, ...]   # by size
    at: float | None            # the crossover size (interpolated on log size), or None
    first: bool = False         # B is faster at every measured size: the crossover is at or below the smallest

    def text(self, b: str = "GPU", a: str = "CPU") -> str:
        """ "the GPU starts to pay at matrix size n ≈ 420 (GPU/CPU 1.8 at 256, 0.4 at 1024)", or why not."""
        sizes = ", ".join(f"{p.ratio:.2f} at {_num(p.size)}" for p in self.points)
        if self.at is None:
            return f"{b} does not pay within the measured sizes ({self.axis.name}; {b}/{a} {sizes})"
        where = f"at or below {_num(self.at)}" if self.first else f"≈ {_num(self.at)}"
        return f"{b} pays from {self.axis.name} {where} ({b}/{a} {sizes})"


def _num(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.3g}"


def crossover_at(points: Sequence[SizePoint]) -> tuple[float | None, bool]:
    """(size, at the first point): the smallest size from which every ratio is below 1, interpolated on log size
    and log ratio between the last point at or above 1 and the next; (None, False) when the largest is not below."""
    pts = sorted(points, key=lambda p: p.size)
    if not pts or pts[-1].ratio >= 1.0:
        return None, False
    i = len(pts) - 1
    while i > 0 and pts[i - 1].ratio < 1.0:
        i -= 1
    if i == 0:
        return pts[0].size, True
    before, after = pts[i - 1], pts[i]
    la, lb = math.log(before.ratio), math.log(after.ratio)
    share = la / (la - lb) if la != lb else 0.0
    return math.exp(math.log(before.size) + share * (math.log(after.size) - math.log(before.size))), False


def crossovers(changes: Sequence[Any], params: Mapping[str, Mapping[str, Any]],
               axes: Sequence[SizeAxis] = SIZE_AXES) -> list[Crossover]:
    """Per size axis and configuration (every other parameter equal), the ratios by size and their crossover.

    ``changes``: ``compare_result.VariantChange`` of one pair, or of pairs of one family (``family_key``: the same
    environment at several presets), the first at a size kept; ``params``: each variant id's parameters.
    """
    out = []
    for axis in axes:
        series: dict[tuple[str, str], list[SizePoint]] = {}
        for ch in changes:
            p = params.get(ch.id)
            size = axis.size(p) if p is not None and axis.covers(ch.benchmark) else None
            if p is None or size is None:
                continue
            config = ", ".join(f"{k}={_text(v)}" for k, v in p.items() if k != axis.param)
            points = series.setdefault((ch.benchmark, config), [])
            if all(q.size != size for q in points):
                points.append(SizePoint(size, ch.ci.ratio, ch.ci.low, ch.ci.high, ch.id))
        for (bench, config), pts in sorted(series.items()):
            pts.sort(key=lambda p: p.size)
            at, first = crossover_at(pts)
            out.append(Crossover(axis, bench, config, tuple(pts), at, first))
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
