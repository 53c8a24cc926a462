"""The releases a bisection walks: TensorFlow releases, or Keras 3 releases on one TensorFlow.

Both come from the one table that knows releases (``data/releases.toml``):
every TF row's ``patches`` and ``[keras3] versions``. A minor release given
alone ("2.1", "3.3") means its newest patch, as ``tf = "2.1"`` does in
matrix.toml. Minor releases are walked first (one probe per minor series,
at its newest patch); ``--patches`` then walks the patches between the two
releases the minors left (those of the minor where it changed).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import UserError
from ..matrix.releases import Table, load_table
from ..versions import minor_series, version_key

AXES = ("tf", "keras")
TABLE_FILE = "tfmatrix/data/releases.toml"


@dataclass(frozen=True)
class Axis:
    """Every release on one axis (exact versions, oldest first) and how a probe's cell is asked for."""

    name: str                       # "tf" | "keras"
    versions: tuple[str, ...]
    tf: str = ""                    # the keras axis: the TF release every Keras runs on
    keras2: tuple[tuple[str, str], ...] = ()    # the tf axis: (minor, standalone Keras 2 it runs with)

    @property
    def what(self) -> str:
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


def release_axis(name: str, tf: str | None, keras_from: str) -> Axis:
    """The releases a command walks: TF's (``tf``), or Keras 3's from ``keras_from`` on TF ``tf`` (``keras``)."""
    table = load_table()
    if name == "keras":
        return keras_axis(table, tf, keras_from)
    if tf:
        raise UserError("--tf: only with --axis keras (the TF release the Keras versions run on)")
    return tf_axis(table)
