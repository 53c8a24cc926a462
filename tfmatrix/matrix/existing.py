"""An existing Python environment as a cell (asv's ``existing`` environment): measured as it is, nothing built.

``python = "/opt/conda/envs/tf/bin/python"`` in a ``[[cell]]`` (a path, where a
built cell names a version like "3.11") makes a cell of the environment a user
already runs: the suite runs in that interpreter (``runners.existing``) and its
fingerprint records what is there (TensorFlow, Keras, CUDA and cuDNN, the GPU),
like any cell's. Nothing is installed into it, so the keys that choose what a
built cell installs are refused with one line; ``jax = "0.6"`` / ``torch =
"2.6"`` say what it must hold (its runner refuses it, exit 2, when it holds
another release), and make it a Keras 3 cell of that backend. Pure: the path is checked for
its form here; whether it exists on the host that runs it is the runner's to
say (a cell it cannot run is skipped with the reason).
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from suite.schema import NO_TF_BACKENDS

from .cell_table import CellTable
from .checks import checked
from .names import resolve_name
from .records import BaseImage, Cell, KerasSpec

INSTALL_KEYS = ("tf", "keras", "keras3", "base", "cuda", "cudnn", "backend", "allow_untested")
AS_INSTALLED = KerasSpec(flavour="as installed", version=None, requirement=None)
EXISTING_BASE = BaseImage(kind="existing", ref="", upstream="", python=None, digest=None)


def default_name(interpreter: str, target: str) -> str:
    """``/opt/conda/envs/tf/bin/python`` -> ``tf-existing-cpu``: the environment's directory, then what it is."""
    path = PurePosixPath(interpreter)
    home = path.parent.parent if path.parent.name == "bin" else path.parent
    slug = re.sub(r"[^A-Za-z0-9]+", "-", home.name).strip("-").lower() or "python"
    return f"{slug}-existing-{target}"


def resolve_existing(t: CellTable, env: tuple[tuple[str, str], ...], origin: str, pool_axis: bool = False) -> Cell:
    """An existing environment's cell (``CellTable.existing``); the keys that would install something are one line
    each."""
    where, target, limits = t.where, t.target, t.limits
    interpreter = str(t.python)
    if not interpreter.startswith("/") or any(c in interpreter for c in " \t\n;$`'\"\\"):
        raise where.error("python", f"{interpreter!r} is not an absolute path to an interpreter",
                          'write python = "/path/to/env/bin/python" (an existing environment) or a version like '
                          '"3.11" (a cell tfmatrix builds)')
    for key in INSTALL_KEYS:
        if key in t.given:
            raise where.error(key, "an existing environment is measured as it is: tfmatrix installs nothing into it",
                              f'remove {key}, or make it a cell tfmatrix builds (python = "3.X" and tf = ...)')
    backend, release = _expected_backend(t)
    if backend != "tensorflow" and "KERAS_BACKEND" not in dict(env):
        env = (("KERAS_BACKEND", backend), *env)
    default = default_name(interpreter, target)
    name = resolve_name(t, {"tf": "", "release": "", "keras": "", "python": "", "target": target, "cuda": "",
                            "cudnn": "", "backend": "", "backend_release": release, "default": default}, pool_axis)
    return Cell(
        name=name, tf="", tf_release="", keras=AS_INSTALLED, python="", target=target, cuda=None, cudnn=None,
        base=EXISTING_BASE, requirements=(), env=env, preset=limits.preset, repeats=limits.repeats,
        timeout_s=limits.timeout_s, memory=limits.memory, allow_untested=False, untested=(), origin=origin,
        pool=limits.pool, interpreter=interpreter, backend=backend, backend_version=release,
    )  # fmt: skip


def _expected_backend(t: CellTable) -> tuple[str, str]:
    """(backend, release) an existing environment must hold: ("tensorflow", "") where the cell names none."""
    given = [(key, value) for key in NO_TF_BACKENDS if (value := t.backend_release(key)) is not None]
    if len(given) > 1:
        raise t.where.error(given[-1][0], "an existing environment holds one Keras 3 backend: name the release of one, "
                                          "jax or torch", f"remove {given[-1][0]} or {given[0][0]}")
    if not given:
        return "tensorflow", ""
    key, value = given[0]
    checked(t.where, key, value, "backend_release", f'a {key} release like "{"0.6" if key == "jax" else "2.6"}"',
            f'write {key} = "X.Y"')
    return key, value
