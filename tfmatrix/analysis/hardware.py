"""Which hardware measured each cell, which cells differ in nothing else, and the loud line when hardware is mixed.

A cross-version comparison means something only on identical hardware. On one
host every cell shares it; on a cluster (``--runner ray``) cells land on
different nodes, and unless they are pinned to one hardware pool (``pool``
in matrix.toml) their CPU or GPU models may differ. The models come from the
suite's own host facts (measured inside the cell), else the host summary.

Hardware is also a question of its own: ``pool = ["a", "b"]`` in a
``[[product]]`` runs the same cell on each pool. ``hardware_groups`` finds
those cells (identical in everything but pool and measured CPU/GPU model) for
the report's Hardware section (``hardware_view``); the version tables,
claims and questions stay version comparisons, and ``same_hardware`` lets them
pick a reference cell on the cell's own hardware when there is one.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

HARDWARE_SECTION = "the Hardware section"

# Cell-spec keys that name or place a cell rather than say what it runs (or only limit how long it may take).
_NOT_STACK = ("name", "origin", "pool", "untested", "allow_untested", "timeout_s")


def cpu_model(c: Any) -> str:
    """The CPU model the cell ran on, as the suite (or else the host) saw it."""
    return c.facts.host.cpu.model or c.facts.host_summary.cpu or "?"


def gpu_model(c: Any) -> str | None:
    """The GPU model(s) nvidia-smi showed inside a GPU cell, or None (CPU cell, or none seen)."""
    if c.target != "gpu":
        return None
    return " + ".join(sorted(set(c.facts.host.gpu_names))) or None


@dataclass(frozen=True, order=True)
class Hardware:
    """Where a cell was measured: its pool (as matrix.toml named it, "" for none) and the models it saw."""

    pool: str
    cpu: str
    gpu: str                    # "" for a CPU cell, or a GPU cell where nvidia-smi showed none

    @property
    def short(self) -> str:
        """What tells this hardware apart in a verdict: the pool, else the GPU model, else the CPU model."""
        return f"pool {self.pool}" if self.pool else (self.gpu or self.cpu)

    @property
    def label(self) -> str:
        """ "pool h100 · AMD EPYC 7B13 · NVIDIA H100 80GB HBM3": everything the report knows about it."""
        return " · ".join(p for p in (f"pool {self.pool}" if self.pool else "", self.cpu, self.gpu) if p)


def hardware_of(c: Any) -> Hardware:
    """A cell's hardware: the pool from its matrix spec, the models from its fingerprint."""
    return Hardware(c.facts.spec.pool, cpu_model(c), gpu_model(c) or "")


def stack_key(c: Any) -> str:
    """Everything about a cell except its hardware, as one comparable text.

    The matrix's spec (TF, Keras, Python, base, requirements, env, preset, memory)
    without what only names or places the cell (and without ``KERAS_HOME``,
    which a jax/torch cell takes from its name); what the suite saw installed;
    the request (preset, benchmarks, suite hash, rounds) and the runner. Two
    cells with equal keys ran the same thing; only their hardware can differ.
    """
    spec = c.facts.spec.without(_NOT_STACK)
    if isinstance(spec.get("env"), dict):
        spec["env"] = {k: v for k, v in spec["env"].items() if k != "KERAS_HOME"}
    seen = {"tf": [c.tf, c.tf_installed], "keras": [c.keras_flavour, c.keras_version], "python": c.python,
            "target": c.target, "backend": c.backend, "preset": c.preset, "runner": c.runner,
            "suite": [c.suite_version, c.suite_hash], "request": c.doc.request}
    return json.dumps({"spec": spec, "seen": seen}, sort_keys=True, default=str)


@dataclass(frozen=True)
class HardwareGroup:
    """Cells that ran the same thing on at least two kinds of hardware, in report order (the first is the reference)."""

    label: str                              # what they ran: the first cell's label ("TF 2.0 · keras 2.3.1 · ...")
    cells: tuple[Any, ...]

    def pairs(self) -> list[tuple[Any, Any]]:
        """(reference, other) for every other cell on hardware other than the reference's."""
        ref = self.cells[0]
        return [(ref, c) for c in self.cells[1:] if hardware_of(c) != hardware_of(ref)]


def hardware_groups(cells: Sequence[Any]) -> list[HardwareGroup]:
    """Cells with results grouped by ``stack_key``; only groups measured on two or more kinds of hardware."""
    by_stack: dict[str, list[Any]] = {}
    for c in cells:
        if c.has_records:
            by_stack.setdefault(stack_key(c), []).append(c)
    return [HardwareGroup(group[0].label, tuple(group)) for group in by_stack.values()
            if len({hardware_of(c) for c in group}) > 1]


def same_hardware(cell: Any, candidates: Sequence[T]) -> T | None:
    """The first candidate measured on ``cell``'s hardware, else the first (the loud warning covers that); or None."""
    mine = hardware_of(cell)
    return next((c for c in candidates if hardware_of(c) == mine), candidates[0] if candidates else None)


def _groups(cells: Sequence[Any], model: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in cells:
        m = model(c)
        if m is not None:
            out.setdefault(m, []).append(c.name)
    return out


def mixed_hardware(cells: Sequence[Any], side_by_side: int = 0) -> list[str]:
    """One line per kind of hardware (CPU, GPU) whose model differs between the cells that ran.

    ``side_by_side``: how many cells the Hardware section compares across
    hardware; the line points there, or says how to get such a comparison.
    """
    if side_by_side:
        where = f"{HARDWARE_SECTION} shows side by side the {side_by_side} cells that differ only in hardware"
    else:
        where = ('to compare the hardware itself, make pool an axis (pool = ["a", "b"] in a [[product]]): '
                 f"{HARDWARE_SECTION} then shows each cell on each pool side by side")
    out = []
    for what, model in (("CPU", cpu_model), ("GPU", gpu_model)):
        groups = _groups(cells, model)
        if len(groups) > 1:
            listed = "; ".join(f"{m}: {', '.join(names)}" for m, names in sorted(groups.items()))
            out.append(f"Cells were measured on different {what} models, so comparisons across them measure the "
                       f"hardware as much as the versions: {listed}. Pin the cells to one hardware pool "
                       f"(pool = \"...\" in matrix.toml) to compare versions; {where}.")
    return out
