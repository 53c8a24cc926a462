"""Where a cell may run on a Ray cluster: what it asks of a node, which live nodes can ever serve it, and how many
cells the cluster runs at once.

Pure functions of the cell and ``ray.nodes()``'s table, apart from the runner that submits and follows the tasks
(``cluster.py``): the checks that keep a cell no node can serve from queueing forever, and the opening estimate's
width, are tested without a cluster.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..matrix import Cell

POOL_SHARE = 0.001          # what a cell asks of its pool's resource: any number of cells may share a node


@dataclass(frozen=True)
class Needs:
    """What one cell asks of a Ray node."""

    num_cpus: float
    num_gpus: int = 0
    resources: Mapping[str, float] = field(default_factory=dict)

    def as_resources(self) -> dict[str, float]:
        """As Ray names them in a node's resource table."""
        out = {"CPU": self.num_cpus, **self.resources}
        if self.num_gpus:
            out["GPU"] = float(self.num_gpus)
        return {k: v for k, v in out.items() if v}

    def describe(self) -> str:
        parts = ["%g CPU" % self.num_cpus]
        if self.num_gpus:
            parts.append("%d GPU" % self.num_gpus)
        parts += ["pool %r" % k for k in self.resources]
        return " + ".join(parts)

    def options(self) -> dict[str, Any]:
        """Ray task options: resources, no automatic retry (``run_cell`` retries once, itself)."""
        return {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus, "resources": dict(self.resources),
                "max_retries": 0, "retry_exceptions": False}


def needs(cell: Cell, cpus: int) -> Needs:
    """A GPU cell: one GPU (and a CPU to feed it); a CPU cell: ``cpus``. Plus its pool, if any."""
    pool = {cell.pool: POOL_SHARE} if cell.pool else {}
    if cell.target == "gpu":
        return Needs(1, 1, pool)
    return Needs(cpus, 0, pool)


def unserved(need: Needs, nodes: Sequence[Mapping[str, Any]]) -> str | None:
    """Why no live node can ever serve ``need`` (from ``ray.nodes()``), or None when one can."""
    alive = [n for n in nodes if n.get("Alive")]
    wanted = need.as_resources()
    for node in alive:
        total = node.get("Resources") or {}
        if all(total.get(k, 0) >= v for k, v in wanted.items()):
            return None
    have = "; ".join(sorted({_node_summary(n) for n in alive})) or "no live nodes"
    return "no node of the Ray cluster can serve it: it needs %s, the live nodes have %s" % (need.describe(), have)


def capacity(cell_needs: Sequence[Needs], nodes: Sequence[Mapping[str, Any]]) -> int:
    """How many of these cells the live nodes can run at once (for the ETA; pools are not told apart)."""
    alive = [n.get("Resources") or {} for n in nodes if n.get("Alive")]
    cpu = [x for x in cell_needs if not x.num_gpus]
    gpu = [x for x in cell_needs if x.num_gpus]
    slots = 0
    if cpu:
        per = max(x.num_cpus for x in cpu)
        slots += min(len(cpu), sum(int(r.get("CPU", 0) // per) for r in alive if per))
    if gpu:
        slots += min(len(gpu), sum(int(r.get("GPU", 0)) for r in alive))
    return max(1, slots)


def _node_summary(node: Mapping[str, Any]) -> str:
    res = node.get("Resources") or {}
    parts = ["%g CPU" % res.get("CPU", 0)]
    if res.get("GPU"):
        parts.append("%g GPU" % res["GPU"])
    parts += sorted(k for k in res if k not in ("CPU", "GPU", "memory", "object_store_memory")
                    and not k.startswith("node:") and not k.startswith("accelerator_type:"))
    return " + ".join(parts)
