"""Which hardware measured each cell, and the loud line when compared cells were measured on different models.

A cross-version comparison means something only on identical hardware. On one
host every cell shares it; on a cluster (``--runner ray``) cells land on
different nodes, and unless they are pinned to one hardware pool (``pool``
in matrix.toml) their CPU or GPU models may differ. The models come from the
suite's own host facts (measured inside the cell), else the host summary.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def cpu_model(c: Any) -> str:
    """The CPU model the cell ran on, as the suite (or else the host) saw it."""
    cpu = c.host_facts.get("cpu")
    model = cpu.get("model") if isinstance(cpu, dict) else None
    return str(model or (c.doc.host or {}).get("cpu") or "?")


def gpu_model(c: Any) -> str | None:
    """The GPU model(s) nvidia-smi showed inside a GPU cell, or None (CPU cell, or none seen)."""
    if c.target != "gpu":
        return None
    gpus = ((c.host_facts.get("nvidia_smi") or {}).get("gpus")) or []
    names = sorted({str(g.get("name")) for g in gpus if isinstance(g, dict) and g.get("name")})
    return " + ".join(names) or None


def _groups(cells: Sequence[Any], model: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in cells:
        m = model(c)
        if m is not None:
            out.setdefault(m, []).append(c.name)
    return out


def mixed_hardware(cells: Sequence[Any]) -> list[str]:
    """One line per kind of hardware (CPU, GPU) whose model differs between the cells that ran."""
    out = []
    for what, model in (("CPU", cpu_model), ("GPU", gpu_model)):
        groups = _groups(cells, model)
        if len(groups) > 1:
            listed = "; ".join(f"{m}: {', '.join(names)}" for m, names in sorted(groups.items()))
            out.append(f"Cells were measured on different {what} models, so comparisons across them measure the "
                       f"hardware as much as the versions: {listed}. Pin the cells to one hardware pool "
                       f"(pool = \"...\" in matrix.toml) to compare versions.")
    return out
