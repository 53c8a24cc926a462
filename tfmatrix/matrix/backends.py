"""The ``backend`` key: Keras 3 on TensorFlow (default), JAX or PyTorch.

A ``tensorflow`` cell is an ordinary TF cell (``resolve.resolve_cell``) that must
run Keras 3; this module only adds its environment. A ``jax``/``torch`` cell
installs Keras and one release of its backend (``jax = "0.6"``: that minor's
newest patch; none named: the table's ``version``) and no TensorFlow at all, so
it has no TF release: ``tf`` is an error there, ``Cell.tf`` is empty, and its
Python, CUDA and packages come from the ``[keras3]`` and ``[backend.*]`` tables
of releases.toml. Pure, like the rest of the resolution.
"""
from __future__ import annotations

from suite.schema import NO_TF_BACKENDS

from ..versions import minor_series, version_key
from .base_image import redirect
from .cell_table import CellTable
from .checks import Where, checked, gated_requirements
from .records import PATTERNS, BaseImage, KerasSpec
from .releases import BackendRelease, Keras3Table, Table

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


def check_no_release(t: CellTable, backend: str) -> None:
    """``jax``/``torch`` name a release of a Keras 3 cell's backend: on any other cell they are an error."""
    for key in NO_TF_BACKENDS:
        if key != backend and t.backend_release(key) is not None:
            raise t.where.error(key, f"{key} names a release of Keras 3's {key} backend; this cell runs "
                                     f"{backend if backend != 'tensorflow' else 'TensorFlow'}",
                                f'remove {key}, or set backend = "{key}" (and no tf)')


def resolve_release(t: CellTable, backend: str, k3: Keras3Table) -> tuple[BackendRelease, str, str]:
    """The backend release a jax/torch cell installs: (its row, the exact patch, what the name says: the release as
    written, "" when the table's default was taken)."""
    check_no_release(t, backend)
    kind = k3.pinned[backend]
    given = t.backend_release(backend)
    version = given or kind.version
    row = kind.release(version)
    if row is None:
        known = ", ".join(f"{r.minor} ({r.patches[0]}-{r.newest})" for r in kind.releases)
        if given is None:
            raise t.where.error("backend", f"the table's default {backend} {version} has no [[backend.{backend}."
                                           "release]] row", "fix tfmatrix/data/releases.toml")
        raise t.where.error(backend, f"{backend} {given} is not in the compatibility table (known: {known})",
                            f'use {backend} = "{kind.releases[-1].minor}" or another known release, or add a '
                            f"[[backend.{backend}.release]] row to tfmatrix/data/releases.toml")
    return row, kind.exact(version), given or ""


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


def resolve_python(t: CellTable, backend: str, keras: KerasSpec, k3: Keras3Table, table: Table,
                   release: tuple[BackendRelease, str]) -> str:
    """The Python: given or the table's default, at least what Keras, the backend release and the suite need and
    at most the newest the release has wheels for; a release under the Keras line's floor (its CI's oldest) is an
    untested pairing."""
    where, given = t.where, t.python
    if given is not None:
        checked(where, "python", given, "python", 'a Python version like "3.11"', 'write python = "3.X"')
    python = given or k3.default_python
    assert keras.version is not None
    line = k3.line(keras.version)
    assert line is not None
    row, version = release
    floors = [(line.python_min, f"Keras {keras.version}"), (row.python[0], f"{backend} {version}"),
              (table.suite_min_python, "the suite")]
    for floor, who in floors:
        if version_key(python) < version_key(floor):
            raise where.error("python", f"{who} needs Python >= {floor}, not {python}",
                              f'use python = "{max((f for f, _ in floors), key=version_key)}" or newer')
    if version_key(python) > version_key(row.python[1]):
        raise where.error("python", f"{backend} {version} has no wheels for Python {python} (its newest: "
                                    f"{row.python[1]})", f'use python = "{row.python[1]}" or an older one, or a newer '
                                                         f"{backend}")
    backend_min = line.backend_min.get(backend)
    if backend_min and version_key(version) < version_key(backend_min):
        where.not_tested(backend, f"Keras {keras.version}'s CI tests {backend} >= {backend_min}, not {version}",
                       f'use {backend} = "{minor_series(backend_min)}" or newer')
    return python


def resolve_base(t: CellTable, backend: str, python: str, registry: str | None) -> BaseImage:
    """The official slim Python image: CPU and GPU alike (CUDA comes as the backend's pip wheels)."""
    for key in ("base", "base_digest", "cuda", "cudnn"):
        if key in t.given:
            raise t.where.error(key, f"a {backend} cell builds on the slim Python image and takes CUDA/cuDNN from "
                                   f"the {backend} wheels the table pins", f"remove {key}")
    upstream = f"python:{python}-slim-bookworm"
    return BaseImage(kind="python", ref=redirect(upstream, registry), upstream=upstream, python=python, digest=None)


def requirements(t: CellTable, keras: KerasSpec, row: BackendRelease, version: str) -> tuple[str, ...]:
    """keras, then the backend release's lines for the target, then the cell's pins."""
    assert keras.requirement is not None
    lines = [keras.requirement, *row.lines(t.target, version), *t.pins]
    return gated_requirements(t.where, lines)
