"""Which runner a run uses: Docker when an engine answers, else local virtualenvs; or a Ray cluster's.

Its own module so that execution never reaches the cluster runner: the
commands choose, the schedules run what they are given.
"""
from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from ..errors import UserError
from ..matrix import Cell
from .base import Runner
from .existing import WithExisting
from .local import LOCAL, local_runner

RUNNERS = ("auto", *LOCAL, "ray")     # what --runner takes: this host's table, and a Ray cluster of them


def make_runner(kind: str, registry: str | None, console: Console, address: str | None = None,
                cluster_cpus: int = 2, cells: Sequence[Cell] | None = None) -> Runner:
    """The runner to use: Docker when an engine answers (auto), else the venv runner; ray: a Ray cluster's. On this
    host, existing environments (``python = "/path"``) run in themselves beside it (``runners.existing``).

    ``cells``: what will run; when every one is an existing environment, the fallback's note (venv: CPU cells
    only) says nothing about them and is not printed."""
    if kind not in RUNNERS:
        raise UserError("--runner %r: choose one of %s" % (kind, ", ".join(RUNNERS)))
    if kind == "ray":
        from .cluster import connect_runner

        return connect_runner(address, registry, cluster_cpus)
    runner, note = local_runner(kind, registry)
    if note and not (cells and all(c.existing for c in cells)):
        console.print("\\[tfmatrix] " + note)
    return WithExisting(runner)       # existing environments (python = "/path") run as they are, whatever the runner
