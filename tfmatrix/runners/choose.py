"""Which runner a run uses: Docker when an engine answers, else local virtualenvs; or a Ray cluster's.

Its own module so that execution never reaches the cluster runner: the
commands choose, the schedules run what they are given.
"""
from __future__ import annotations

from rich.console import Console

from ..errors import UserError
from .base import Runner
from .existing import WithExisting
from .local import local_runner

RUNNERS = ("auto", "docker", "venv", "ray")


def make_runner(kind: str, registry: str | None, console: Console, address: str | None = None,
                cluster_cpus: int = 2) -> Runner:
    """The runner to use: Docker when an engine answers (auto), else the venv runner; ray: a Ray cluster's. On this
    host, existing environments (``python = "/path"``) run in themselves beside it (``runners.existing``)."""
    if kind not in RUNNERS:
        raise UserError("--runner %r: choose one of %s" % (kind, ", ".join(RUNNERS)))
    if kind == "ray":
        from ..runners.cluster import connect_runner

        return connect_runner(address, registry, cluster_cpus)
    runner, note = local_runner(kind, registry)
    if note:
        console.print("\\[tfmatrix] " + note)
    return WithExisting(runner)       # existing environments (python = "/path") run as they are, whatever the runner
