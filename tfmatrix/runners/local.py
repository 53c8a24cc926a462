"""The one table of this host's runners (``LOCAL``): Docker when an engine answers, else virtualenvs.

A row is how to make the runner here (None where it cannot run: no engine
answers), what ``--runner NAME`` says when it cannot, and what ``auto`` says
when it falls back past it. ``runners.choose.make_runner`` (the head),
``node.node_runner`` (a Ray node) and ``disk`` (what each runner keeps) all
read it, so a node falls back exactly as a single host does and ``disk``
lists every runner's environments. A new runner is a module and a row.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..paths import SUITE_DIR
from .base import Runner
from .common import WheelsSource

NO_ENGINE = "no Docker engine answers: using the venv runner (CPU cells only; `bash scripts/host-setup` " \
            "installs and starts Docker for containers)"


@dataclass(frozen=True)
class Here:
    """What a runner of this host is made with."""

    registry: str | None = None
    gpu_ids: Sequence[str] | None = None
    suite_dir: Path = SUITE_DIR
    wheels: WheelsSource | None = None
    venv_root: Path | None = None


@dataclass(frozen=True)
class Row:
    make: Callable[[Here], Runner | None]    # None: it cannot run on this host now
    missing: str = ""                          # ``--runner NAME`` when it cannot: why, and what to check
    passed: str = ""                           # ``auto`` going past it to the next row: the note printed


def _docker(here: Here) -> Runner | None:
    from .docker import DockerRunner
    from .engine import engine

    client = engine()
    return None if client is None else DockerRunner(client, here.registry, here.gpu_ids, here.suite_dir, here.wheels)


def _venv(here: Here) -> Runner:
    from .venv import VenvRunner

    return VenvRunner(here.wheels, here.venv_root)


LOCAL: dict[str, Row] = {
    "docker": Row(_docker, "no Docker engine answers (is dockerd running? DOCKER_HOST?)", NO_ENGINE),
    "venv": Row(_venv),
}
"""This host's runners, in the order ``auto`` tries them."""


def local_runner(kind: str, registry: str | None = None, gpu_ids: Sequence[str] | None = None,
                 suite_dir: Path = SUITE_DIR, wheels: WheelsSource | None = None,
                 venv_root: Path | None = None) -> tuple[Runner, str | None]:
    """(runner, what to tell the user): ``auto`` is the first row that can run here, else the named row's."""
    here = Here(registry, gpu_ids, suite_dir, wheels, venv_root)
    if kind != "auto" and kind not in LOCAL:
        raise UserError("--runner %r: choose one of %s" % (kind, ", ".join(("auto", *LOCAL))))
    note = None
    for name, row in LOCAL.items() if kind == "auto" else [(kind, LOCAL[kind])]:
        runner = row.make(here)
        if runner is not None:
            return runner, note
        if kind != "auto":
            raise UserError("--runner %s: %s" % (name, row.missing))
        note = row.passed
    raise UserError("no runner can run cells on this host")     # the last row (venv) always can


def local_runners(registry: str | None = None) -> list[Runner]:
    """Every runner of this host that can run now (``disk`` asks each what it keeps)."""
    here = Here(registry)
    return [r for r in (row.make(here) for row in LOCAL.values()) if r is not None]
