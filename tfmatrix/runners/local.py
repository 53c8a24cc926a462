"""The one table of this host's runners: Docker when an engine answers, else virtualenvs.

``runners.choose.make_runner`` (the head) and ``node.node_runner`` (a Ray node)
both choose here, so a node falls back exactly as a single host does.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import UserError
from ..paths import SUITE_DIR
from .base import Runner
from .common import WheelsSource

LOCAL_RUNNERS = ("auto", "docker", "venv")
NO_ENGINE = "no Docker engine answers: using the venv runner (CPU cells only; `bash scripts/host-setup` " \
            "installs and starts Docker for containers)"


def local_runner(kind: str, registry: str | None = None, gpu_ids: Sequence[str] | None = None,
                 suite_dir: Path = SUITE_DIR, wheels: WheelsSource | None = None,
                 venv_root: Path | None = None) -> tuple[Runner, str | None]:
    """(runner, what to tell the user): ``auto`` is Docker when an engine answers, else the venv runner."""
    from . import docker
    from .engine import engine
    from .venv import VenvRunner

    if kind not in LOCAL_RUNNERS:
        raise UserError("--runner %r: choose one of %s" % (kind, ", ".join(LOCAL_RUNNERS)))
    if kind in ("auto", "docker"):
        client = engine()
        if client is not None:
            return docker.DockerRunner(client, registry, gpu_ids, suite_dir, wheels), None
        if kind == "docker":
            raise UserError("--runner docker: no Docker engine answers (is dockerd running? DOCKER_HOST?)")
        return VenvRunner(wheels, venv_root), NO_ENGINE
    return VenvRunner(wheels, venv_root), None
