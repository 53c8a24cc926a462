"""The ``backend`` key: Keras 3 on TensorFlow (default), JAX or PyTorch.

A ``tensorflow`` cell is an ordinary TF cell (``resolve.resolve_cell``) that must
run Keras 3; this module only adds its environment. A ``jax``/``torch`` cell
installs Keras and the backend's pinned wheels and no TensorFlow at all, so it
has no TF release: ``tf`` is an error there, ``Cell.tf`` is empty, and its
Python, CUDA and packages come from the ``[keras3]`` and ``[backend.*]`` tables
of releases.toml. Pure, like the rest of the resolution.
"""
from __future__ import annotations

from ..versions import version_key
from .base_image import redirect
from .cell_table import CellTable
from .checks import Where, checked, gated_requirements
from .records import PATTERNS, BaseImage, KerasSpec
from .releases import Keras3Table, Table

DEFAULT_BACKEND = "tensorflow"
KERAS_HOME_ROOT = "/home/bench/.keras-cells"   # KERAS_HOME = <root>/<cell>: no cell reads another's keras.json


def keras3_table(where: Where, table: Table) -> Keras3Table:
    if table.keras3 is None:
        raise where.error("backend", "the compatibility table has no [keras3] section",
                          "add it to tfmatrix/data/releases.toml")
    return table.keras3


def backend_of(t: CellTable, table: Table) -> tuple[str, bool]:
    """-> (backend, whether matrix.toml named it); unknown names are an error."""
    where, given = t.where, t.backend
    if given is None:
        return DEFAULT_BACKEND, False
    known = keras3_table(where, table).backends
    if given not in known:
        raise where.error("backend", f"{given!r} is not a Keras 3 backend", "use one of: " + ", ".join(known))
    return given, True


def check_tensorflow_keras(where: Where, keras: KerasSpec, tf_release: str) -> None:
    """``backend = "tensorflow"`` written out: only Keras 3 has backends."""
    if keras.flavour != "keras3":
        raise where.error("backend", f"backends are a Keras 3 feature; this cell runs {keras.flavour} on TF "
                                     f"{tf_release}", 'remove backend, or use keras = "keras3" with TF >= 2.16')


def backend_env(backend: str, cell_name: str) -> tuple[tuple[str, str], ...]:
    """KERAS_BACKEND and a KERAS_HOME of the cell's own, baked into the image."""
    return (("KERAS_BACKEND", backend), ("KERAS_HOME", f"{KERAS_HOME_ROOT}/{cell_name}"))


def resolve_keras(t: CellTable, backend: str, k3: Keras3Table) -> tuple[KerasSpec, str]:
    """A jax/torch cell's Keras: "keras3" (the table's newest) or an exact 3.x version."""
    where = t.where
    if t.tf is not None:
        raise where.error("tf", f"a {backend} cell installs no TensorFlow (Keras 3 runs on {backend})",
                          'remove tf, or set backend = "tensorflow"')
    given = t.keras or "keras3"
    if given != "keras3" and not (given.startswith("3.") and PATTERNS["keras_version"].fullmatch(given)):
        raise where.error("backend", f"backend {backend} needs Keras 3, not keras = {given!r}",
                          'use keras = "keras3" or a 3.x version like "3.15.1", or remove backend')
    version = k3.newest if given == "keras3" else given
    if k3.line(version) is None:
        ranges = ", ".join(f"{ln.releases[0]}-{ln.releases[1]}" for ln in k3.lines)
        raise where.error("keras", f"Keras {version} is not in the compatibility table (known: {ranges})",
                          "pick a known release or add a [[keras3.release]] row to tfmatrix/data/releases.toml")
    part = "keras3" if given == "keras3" else f"keras{version}"
    return KerasSpec("keras3", version, f"keras=={version}"), part


def resolve_python(t: CellTable, backend: str, keras: KerasSpec, k3: Keras3Table, table: Table) -> str:
    """The Python: given or the table's default, at least what Keras, the backend and the suite need."""
    where, given = t.where, t.python
    if given is not None:
        checked(where, "python", given, "python", 'a Python version like "3.11"', 'write python = "3.X"')
    python = given or k3.default_python
    assert keras.version is not None
    line = k3.line(keras.version)
    assert line is not None
    pinned = k3.pinned[backend]
    floors = [(line.python_min, f"Keras {keras.version}"), (pinned.python_min, f"{backend} {pinned.version}"),
              (table.suite_min_python, "the suite")]
    for floor, who in floors:
        if version_key(python) < version_key(floor):
            raise where.error("python", f"{who} needs Python >= {floor}, not {python}",
                              f'use python = "{max((f for f, _ in floors), key=version_key)}" or newer')
    backend_min = line.backend_min.get(backend)
    if backend_min and version_key(pinned.version) < version_key(backend_min):
        raise where.error("backend", f"Keras {keras.version} needs {backend} >= {backend_min}; the table pins "
                                     f"{pinned.version}", "fix [backend] in tfmatrix/data/releases.toml")
    return python


def resolve_base(t: CellTable, backend: str, python: str, registry: str | None) -> BaseImage:
    """The official slim Python image: CPU and GPU alike (CUDA comes as the backend's pip wheels)."""
    for key in ("base", "base_digest", "cuda", "cudnn"):
        if key in t.given:
            raise t.where.error(key, f"a {backend} cell builds on the slim Python image and takes CUDA/cuDNN from "
                                   f"the {backend} wheels the table pins", f"remove {key}")
    upstream = f"python:{python}-slim-bookworm"
    return BaseImage(kind="python", ref=redirect(upstream, registry), upstream=upstream, python=python, digest=None)


def requirements(t: CellTable, backend: str, keras: KerasSpec, k3: Keras3Table) -> tuple[str, ...]:
    """keras, then the backend's pinned lines for the target, then the cell's pins."""
    assert keras.requirement is not None
    pinned = k3.pinned[backend]
    lines = [keras.requirement, *(pinned.gpu if t.target == "gpu" else pinned.cpu), *t.pins]
    return gated_requirements(t.where, lines)
