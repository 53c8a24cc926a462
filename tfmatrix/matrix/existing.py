"""An existing Python environment as a cell (asv's ``existing`` environment): measured as it is, nothing built.

``python = "/opt/conda/envs/tf/bin/python"`` in a ``[[cell]]`` (a path, where a
built cell names a version like "3.11") makes a cell of the environment a user
already runs: the suite runs in that interpreter (``runners.existing``) and its
fingerprint records what is there (TensorFlow, Keras, CUDA and cuDNN, the GPU),
like any cell's. Nothing is installed into it, so the keys that choose what a
built cell installs are refused with one line. Pure: the path is checked for
its form here; whether it exists on the host that runs it is the runner's to
say (a cell it cannot run is skipped with the reason).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from .checks import Limits, Where
from .names import resolve_name
from .records import BaseImage, Cell, KerasSpec

INSTALL_KEYS = ("tf", "keras", "keras3", "base", "cuda", "cudnn", "backend", "allow_untested")
AS_INSTALLED = KerasSpec(flavour="as installed", version=None, requirement=None)
EXISTING_BASE = BaseImage(kind="existing", ref="", upstream="", python=None, digest=None)


def is_existing(values: Mapping[str, Any]) -> bool:
    """The cell names an interpreter by its path (``python = "/..."``), not a Python version."""
    python = values.get("python")
    return isinstance(python, str) and "/" in python


def default_name(interpreter: str, target: str) -> str:
    """``/opt/conda/envs/tf/bin/python`` -> ``tf-existing-cpu``: the environment's directory, then what it is."""
    path = PurePosixPath(interpreter)
    home = path.parent.parent if path.parent.name == "bin" else path.parent
    slug = re.sub(r"[^A-Za-z0-9]+", "-", home.name).strip("-").lower() or "python"
    return f"{slug}-existing-{target}"


def resolve_existing(where: Where, values: Mapping[str, Any], target: str, limits: Limits,
                     env: tuple[tuple[str, str], ...], origin: str, pool_axis: bool = False) -> Cell:
    """An existing environment's cell; the keys that would install something are one line each."""
    interpreter = str(values["python"])
    if not interpreter.startswith("/") or any(c in interpreter for c in " \t\n;$`'\"\\"):
        raise where.error("python", f"{interpreter!r} is not an absolute path to an interpreter",
                          'write python = "/path/to/env/bin/python" (an existing environment) or a version like '
                          '"3.11" (a cell tfmatrix builds)')
    for key in INSTALL_KEYS:
        if key in values:
            raise where.error(key, "an existing environment is measured as it is: tfmatrix installs nothing into it",
                              f'remove {key}, or make it a cell tfmatrix builds (python = "3.X" and tf = ...)')
    default = default_name(interpreter, target)
    name = resolve_name(where, values, {"tf": "", "release": "", "keras": "", "python": "", "target": target,
                                        "cuda": "", "cudnn": "", "backend": "", "default": default},
                        limits.pool, pool_axis)
    return Cell(
        name=name, tf="", tf_release="", keras=AS_INSTALLED, python="", target=target, cuda=None, cudnn=None,
        base=EXISTING_BASE, requirements=(), env=env, preset=limits.preset, repeats=limits.repeats,
        timeout_s=limits.timeout_s, memory=limits.memory, allow_untested=False, untested=(), origin=origin,
        pool=limits.pool, interpreter=interpreter,
    )  # fmt: skip
