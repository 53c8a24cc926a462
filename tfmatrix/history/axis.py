"""The releases a bisection walks: TensorFlow's, Keras 3's on one TensorFlow, or JAX's / PyTorch's under one Keras 3.

All come from the one table that knows releases (``data/releases.toml``):
every TF row's ``patches``, ``[keras3] versions``, and each backend row's
``patches`` (``[[backend.jax.release]]``). A minor release given
alone ("2.1", "3.3") means its newest patch, as ``tf = "2.1"`` does in
matrix.toml. Minor releases are walked first (one probe per minor series,
at its newest patch); ``--patches`` then walks the patches between the two
releases the minors left (those of the minor where it changed).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from suite.schema import FRAMEWORKS, NO_TF_BACKENDS

from ..errors import UserError
from ..matrix.releases import Table, load_table
from ..versions import minor_series, version_key

AXES = ("tf", "keras", *NO_TF_BACKENDS)
TABLE_FILE = "tfmatrix/data/releases.toml"


@dataclass(frozen=True)
class Axis:
    """Every release on one axis (exact versions, oldest first) and how a probe's cell is asked for."""

    name: str                       # "tf" | "keras" | "jax" | "torch"
    versions: tuple[str, ...]
    tf: str = ""                    # the keras axis: the TF release every Keras runs on
    keras2: tuple[tuple[str, str], ...] = ()    # the tf axis: (minor, standalone Keras 2 it runs with)
    keras: str = ""                 # a backend axis: the Keras 3 release every backend release runs under

    @property
    def backend(self) -> str:
        """The Keras 3 backend every probe of this axis runs ("tensorflow" on the tf and keras axes)."""
        return self.name if self.name in NO_TF_BACKENDS else "tensorflow"

    @property
    def what(self) -> str:
        if self.name in NO_TF_BACKENDS:
            return f"{FRAMEWORKS[self.name]} (under Keras {self.keras})"
        return "TensorFlow" if self.name == "tf" else f"Keras (on TF {self.tf})"

    def exact(self, given: str, option: str) -> str:
        """``given`` as an exact release on the axis: a minor means its newest patch."""
        if given in self.versions:
            return given
        in_series = [v for v in self.versions if minor_series(v) == given]
        if in_series and given.count(".") == 1:
            return in_series[-1]
        minors = sorted({minor_series(v) for v in self.versions}, key=version_key)
        raise UserError(f"{option} {given}: no {self.what} release {given} in {TABLE_FILE}; "
                        f"use one of {minors[0]} ... {minors[-1]} (a minor means its newest patch) or an exact patch")

    def spec(self, version: str) -> dict[str, str]:
        """The probe's cell, as a matrix.toml [[cell]] table would ask for it (CPU: the timeline's device).

        A TF release that has a standalone Keras 2 beside its tf.keras (1.14 to
        2.1) gets it, so the claims comparing the two are answered there too.
        """
        if self.name == "tf":
            keras = dict(self.keras2).get(minor_series(version))
            return {"tf": version, "target": "cpu", **({"keras": keras} if keras else {})}
        if self.name in NO_TF_BACKENDS:
            return {"backend": self.name, "keras": self.keras, self.name: version, "target": "cpu"}
        return {"tf": self.tf, "keras": version, "target": "cpu"}


def tf_axis(table: Table) -> Axis:
    """Every TF patch; each minor with standalone Keras 2 releases pairs with the newest of them.

    The newest (2.3.1 for 1.14 to 2.1) rather than the seeds' pairs keeps Keras
    the same across those releases, so a change between them is TensorFlow's.
    """
    versions = sorted({p for r in table.final for p in r.patches}, key=version_key)      # no release candidate
    pairs = tuple((r.tf, max(r.keras2, key=version_key)) for r in table.final if r.keras2)
    return Axis("tf", tuple(versions), keras2=pairs)


def keras_axis(table: Table, tf: str | None, oldest: str = "3.0") -> Axis:
    """Keras 3 releases on ``tf``; by default the newest TF whose Keras floor admits ``oldest`` (the older end)."""
    if table.keras3 is None or not table.keras3.versions:
        raise UserError(f"{TABLE_FILE}: [keras3] has no versions list; add every Keras 3 release (oldest first)")
    with_keras3 = [r for r in table.final if r.keras3]
    if tf is None:
        admits = [r for r in with_keras3
                  if version_key(minor_series(r.keras3_min or "3.0")) <= version_key(minor_series(oldest))]
        if not admits:
            raise UserError(f"Keras {oldest}: no TensorFlow release in {TABLE_FILE} accepts it "
                            "(Keras 3 needs TF 2.16+)")
        tf = max(admits, key=lambda r: r.key).newest
    else:
        try:
            row = table.release(tf)
        except KeyError:
            raise UserError(f"--tf {tf}: no TensorFlow release {tf} in {TABLE_FILE}") from None
        if row.prerelease:
            raise UserError(f"--tf {tf}: TF {row.tf} is a release candidate ({row.newest}); a timeline walks final "
                            "releases: pick one of " + ", ".join(r.tf for r in with_keras3))
        if not row.keras3:
            raise UserError(f"--tf {tf}: TF {row.tf} does not run Keras 3 (2.16 and later do); "
                            "pick one of " + ", ".join(r.tf for r in with_keras3))
        tf = tf if tf in row.patches else row.newest
    row = table.release(tf)
    floor = version_key(row.keras3_min or "3.0.0")
    return Axis("keras", tuple(v for v in table.keras3.versions if version_key(v) >= floor), tf)


def backend_axis(table: Table, name: str, keras: str | None, oldest: str | None) -> Axis:
    """Every release of backend ``name`` (its rows' patches) that Keras ``keras`` is tested on (its line's CI floor:
    a timeline makes no untested pairings); by default the newest Keras whose floor admits ``oldest`` (the older
    end; none given: the table's oldest release)."""
    k3 = table.keras3
    if k3 is None or name not in k3.pinned:
        raise UserError(f"{TABLE_FILE}: no [backend.{name}] releases")
    backend = k3.pinned[name]
    every = tuple(p for r in backend.releases for p in r.patches)

    def floor(version: str) -> str:
        line = k3.line(version)
        return (line.backend_min.get(name) if line else None) or every[0]

    if keras is None:
        start = backend.exact(oldest) if oldest and backend.release(oldest) else every[0]
        admits = [v for v in k3.versions if k3.line(v) and version_key(floor(v)) <= version_key(start)]
        if not admits:
            raise UserError(f"{FRAMEWORKS[name]} {start}: no Keras 3 release in {TABLE_FILE} is tested on it; "
                            f"start later (--from)")
        keras = max(admits, key=version_key)
    elif keras not in k3.versions or k3.line(keras) is None:
        raise UserError(f"--keras {keras}: not a Keras 3 release in {TABLE_FILE}; use an exact one like {k3.newest}")
    return Axis(name, tuple(v for v in every if version_key(v) >= version_key(floor(keras))), keras=keras)


def newest_per_minor(versions: Sequence[str]) -> list[str]:
    """The newest patch of each minor series, oldest first."""
    last: dict[str, str] = {}
    for v in sorted(versions, key=version_key):
        last[minor_series(v)] = v
    return sorted(last.values(), key=version_key)


def minor_steps(axis: Axis, good: str, bad: str) -> list[str]:
    """The ends and the newest patch of every minor strictly between their minors, from ``good`` to ``bad``."""
    lo, hi = sorted((good, bad), key=version_key)
    inner = [v for v in newest_per_minor(axis.versions)
             if version_key(minor_series(lo)) < version_key(minor_series(v)) < version_key(minor_series(hi))]
    steps = [lo, *inner, hi]
    return steps if good == lo else steps[::-1]


def patch_steps(axis: Axis, good: str, bad: str) -> list[str]:
    """The ends and every release strictly between them, from ``good`` to ``bad``."""
    lo, hi = sorted((good, bad), key=version_key)
    inner = [v for v in axis.versions if version_key(lo) < version_key(v) < version_key(hi)]
    steps = [lo, *inner, hi]
    return steps if good == lo else steps[::-1]


def release_axis(name: str, tf: str | None, keras_from: str, keras: str | None = None) -> Axis:
    """The releases a command walks: TF's (``tf``), Keras 3's from ``keras_from`` on TF ``tf`` (``keras``), or a
    backend's from ``keras_from`` under Keras ``keras`` (``jax``, ``torch``)."""
    table = load_table()
    if keras and name not in NO_TF_BACKENDS:
        raise UserError("--keras: only with --axis jax or torch (the Keras 3 release the backend releases run under)")
    if name in NO_TF_BACKENDS:
        if tf:
            raise UserError(f"--tf: a {name} cell installs no TensorFlow; use --keras for the Keras it runs under")
        return backend_axis(table, name, keras, keras_from or None)
    if name == "keras":
        return keras_axis(table, tf, keras_from)
    if tf:
        raise UserError("--tf: only with --axis keras (the TF release the Keras versions run on)")
    return tf_axis(table)
