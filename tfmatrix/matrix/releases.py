"""The compatibility table: what each TensorFlow release needs, as frozen records.

All version knowledge lives in ``tfmatrix/data/releases.toml`` (with its sources);
this module only loads it into dataclasses and answers questions about it, so a
new TensorFlow release is one new table row, not a hunt for scattered ``if``s.
The table is trusted project data, but every requirement line and image
reference in it still goes through the same strict patterns as user input
(``tfmatrix.matrix.PATTERNS``) before it can reach a template.
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..versions import VersionKey, minor_series, version_key

TABLE_PATH = Path(__file__).resolve().parent.parent / "data" / "releases.toml"   # tfmatrix/data: package data

@dataclass(frozen=True)
class Pin:
    """An extra requirement a release needs, and why."""

    requirement: str
    reason: str
    checked: str = ""


@dataclass(frozen=True)
class TfImage:
    """The official ``tensorflow/tensorflow`` images of one release."""

    cpu: str
    gpu: str
    os: str
    python: str


@dataclass(frozen=True)
class OsPythons:
    """Which Pythons an Ubuntu base can provide (its own plus its archive's)."""

    name: str
    pythons: tuple[str, ...]
    default: str
    note: str


@dataclass(frozen=True)
class Release:
    """One row of the table: a TensorFlow minor release."""

    tf: str
    newest: str
    patches: tuple[str, ...]
    python: tuple[str, ...]
    default_python: str
    cuda: str
    cudnn: str
    cpu_package: str
    gpu_package: str
    keras: str
    keras2: tuple[str, ...]
    tf_image: TfImage
    gpu_base: str
    gpu_why: str
    source: str
    cpu_package_exceptions: Mapping[str, str] = field(default_factory=dict)
    keras3: str | None = None
    keras3_min: str | None = None
    tf_keras: str | None = None
    gpu_image: str | None = None
    gpu_image_os: str | None = None
    cuda_wheels: tuple[str, ...] = ()
    and_cuda_extra: bool = True
    pins: tuple[Pin, ...] = ()
    prerelease: bool = False                  # a release candidate: only in opt-in cells, never on a timeline
    keras3_package: str = "keras"             # what provides its Keras 3 ("keras-nightly": an RC's own dependency)

    @property
    def key(self) -> VersionKey:
        return version_key(self.tf)

    @property
    def pip_cuda(self) -> bool:
        """True when CUDA/cuDNN arrive as pip wheels (TF 2.14+), not from a base image."""
        return bool(self.cuda_wheels)

    def cpu_package_for(self, version: str) -> str:
        """PyPI name of the CPU wheel for one exact patch (tensorflow-cpu: 1.15.0 and 2.1+ only)."""
        return self.cpu_package_exceptions.get(version, self.cpu_package)


@dataclass(frozen=True)
class TfKerasRule:
    """How a tf_keras cell differs from the release's default (2.16+)."""

    env: tuple[tuple[str, str], ...]
    cpu_package: str
    pin_keras3: bool


@dataclass(frozen=True)
class KerasLine:
    """A range of Keras 3 minor releases: the Python floor and the oldest backends known to work."""

    releases: tuple[str, str]
    python_min: str
    backend_min: Mapping[str, str]        # "jax" -> "0.4.20", "torch" -> "2.1.0"
    source: str

    def covers(self, keras_version: str) -> bool:
        lo, hi = self.releases
        return version_key(lo) <= version_key(minor_series(keras_version)) <= version_key(hi)


@dataclass(frozen=True)
class BackendRelease:
    """One minor release of a Keras 3 backend (a ``[[backend.X.release]]`` row): its patches on PyPI (newest last),
    the Python range its wheels cover, the requirement lines a cell installs (``{version}``: the patch), the CUDA
    and cuDNN its GPU wheels resolve to, and where each fact came from."""

    minor: str
    patches: tuple[str, ...]
    python: tuple[str, str]               # (oldest, newest) Python with a wheel
    cpu: tuple[str, ...]
    gpu: tuple[str, ...]
    cuda: str
    cudnn: str
    source: str = ""

    @property
    def newest(self) -> str:
        return self.patches[-1]

    def lines(self, target: str, version: str) -> tuple[str, ...]:
        """The requirement lines of patch ``version`` for a ``target`` cell."""
        return tuple(x.replace("{version}", version) for x in (self.gpu if target == "gpu" else self.cpu))


@dataclass(frozen=True)
class Backend:
    """One Keras 3 backend other than TensorFlow: its releases, the one a cell installs when it names none
    (``version``), and the Debian packages its image needs beside the wheels."""

    name: str
    version: str
    releases: tuple[BackendRelease, ...]
    os_packages: tuple[str, ...] = ()         # a C++ compiler for torch.compile
    os_packages_why: str = ""

    def release(self, version: str) -> BackendRelease | None:
        """The row of a minor ("0.6") or of one of its patches ("0.6.1"); None when the table has neither."""
        row = next((r for r in self.releases if r.minor == minor_series(version)), None)
        return row if row is not None and (version == row.minor or version in row.patches) else None

    def exact(self, version: str) -> str:
        """A minor's newest patch; a patch as it is (``release`` must know it)."""
        row = self.release(version)
        assert row is not None, version
        return row.newest if version == row.minor else version

    @property
    def minors(self) -> tuple[str, ...]:
        return tuple(r.minor for r in self.releases)


@dataclass(frozen=True)
class Keras3Table:
    """``[keras3]`` and ``[backend.*]``: Keras 3 releases and the backends they run on."""

    newest: str
    default_python: str
    backends: tuple[str, ...]             # "tensorflow" first: the default
    lines: tuple[KerasLine, ...]
    pinned: Mapping[str, Backend]         # every backend but tensorflow
    versions: tuple[str, ...] = ()        # every Keras 3 release on PyPI, oldest first

    def line(self, keras_version: str) -> KerasLine | None:
        return next((ln for ln in self.lines if ln.covers(keras_version)), None)


@dataclass(frozen=True)
class Table:
    """The whole compatibility table."""

    releases: tuple[Release, ...]
    os: Mapping[str, OsPythons]
    cudnn_wheels: Mapping[str, str]
    cudnn_oldest: Mapping[str, str]           # "cu12" -> the oldest nvidia-cudnn-cu12 on PyPI
    suite_min_python: str
    os_python_pip: str
    tf_keras: TfKerasRule
    tested_build_configurations: str
    keras3: Keras3Table | None = None
    uv: str = ""                              # "uv==X": the installer of cells on Python bases (``[tooling]``)
    uv_min_python: str = "3.8"

    def release(self, tf_version: str) -> Release:
        """The row for "1.15" or an exact "1.15.5"; KeyError when unknown."""
        minor = minor_series(tf_version)
        for r in self.releases:
            if r.tf == minor:
                return r
        raise KeyError(tf_version)

    def newest(self) -> Release:
        return self.releases[-1]

    @property
    def final(self) -> tuple[Release, ...]:
        """The released rows, without release candidates (a timeline walks these)."""
        return tuple(r for r in self.releases if not r.prerelease)

    def oldest(self) -> Release:
        return self.releases[0]

    def cudnn_wheel(self, cuda: str) -> str:
        """The nvidia-cudnn wheel name for a CUDA version ("12.5" -> nvidia-cudnn-cu12)."""
        return self.cudnn_wheels[f"cu{cuda.split('.')[0]}"]

    def cudnn_installable(self, cuda: str, cudnn: str) -> str | None:
        """None when pip can install ``<wheel>==<cudnn>.*`` for this CUDA; else the oldest version there is."""
        oldest = self.cudnn_oldest.get(f"cu{cuda.split('.')[0]}")
        if oldest is None:
            return None
        given = cudnn.split(".")
        return None if version_key(cudnn) >= version_key(".".join(oldest.split(".")[:len(given)])) else oldest


def _pins_for(minor: str, rules: list[dict[str, Any]]) -> tuple[Pin, ...]:
    """The [[pin]] rules whose inclusive release range covers ``minor``, in table order."""
    k = version_key(minor)
    out = []
    for rule in rules:
        lo, hi = rule["releases"]
        if version_key(lo) <= k <= version_key(hi):
            out.append(Pin(rule["requirement"], rule["reason"], rule.get("checked", "")))
    return tuple(out)


def _release(row: dict[str, Any], pin_rules: list[dict[str, Any]]) -> Release:
    img = row["tf_image"]
    return Release(
        tf=row["tf"],
        newest=row["newest"],
        patches=tuple(row["patches"]),
        python=tuple(row["python"]),
        default_python=row["default_python"],
        cuda=row["cuda"],
        cudnn=row["cudnn"],
        cpu_package=row["cpu_package"],
        gpu_package=row["gpu_package"],
        keras=row["keras"],
        keras2=tuple(row.get("keras2", ())),
        tf_image=TfImage(img["cpu"], img["gpu"], img["os"], img["python"]),
        gpu_base=row["gpu_base"],
        gpu_why=row["gpu_why"],
        source=row["source"],
        cpu_package_exceptions=dict(row.get("cpu_package_exceptions", {})),
        keras3=row.get("keras3"),
        keras3_min=row.get("keras3_min"),
        tf_keras=row.get("tf_keras"),
        gpu_image=row.get("gpu_image"),
        gpu_image_os=row.get("gpu_image_os"),
        cuda_wheels=tuple(row.get("cuda_wheels", ())),
        and_cuda_extra=bool(row.get("and_cuda_extra", True)),
        pins=_pins_for(row["tf"], pin_rules),
        prerelease=bool(row.get("prerelease", False)),
        keras3_package=row.get("keras3_package", "keras"),
    )


def parse_table(doc: Mapping[str, Any]) -> Table:
    """Build the records from the parsed TOML (pure; ``load_table`` does the I/O)."""
    pin_rules = list(doc.get("pin", []))
    releases = tuple(sorted((_release(r, pin_rules) for r in doc["release"]), key=lambda r: r.key))
    os_map = {
        name: OsPythons(name, tuple(v["pythons"]), v["default"], v.get("note", "")) for name, v in doc["os"].items()
    }
    tk = doc["keras"]["tf_keras"]
    return Table(
        releases=releases,
        os=os_map,
        cudnn_wheels={k: v["cudnn"] for k, v in doc["cuda_wheels"].items()},
        cudnn_oldest={k: v["cudnn_oldest"] for k, v in doc["cuda_wheels"].items() if "cudnn_oldest" in v},
        suite_min_python=doc["suite"]["min_python"],
        os_python_pip=doc["tooling"]["os_python_pip"],
        tf_keras=TfKerasRule(tuple(tk["env"].items()), tk["cpu_package"], bool(tk["pin_keras3"])),
        tested_build_configurations=doc["meta"]["tested_build_configurations"],
        keras3=_keras3(doc) if "keras3" in doc else None,
        uv=str(doc["tooling"].get("uv", "")),
        uv_min_python=str(doc["tooling"].get("uv_min_python", "3.8")),
    )


def _keras3(doc: Mapping[str, Any]) -> Keras3Table:
    k3 = doc["keras3"]
    lines = tuple(KerasLine((r["releases"][0], r["releases"][1]), r["python_min"],
                            {b: r[f"{b}_min"] for b in k3["backends"] if f"{b}_min" in r}, r.get("source", ""))
                  for r in k3.get("release", []))
    pinned = {name: Backend(name, b["version"], tuple(_backend_release(r) for r in b.get("release", ())),
                            tuple(b.get("os_packages", ())), b.get("os_packages_why", ""))
              for name, b in doc.get("backend", {}).items()}
    return Keras3Table(k3["newest"], k3["default_python"], tuple(k3["backends"]), lines, pinned,
                       tuple(k3.get("versions", ())))


def _backend_release(r: Mapping[str, Any]) -> BackendRelease:
    return BackendRelease(r["minor"], tuple(r["patches"]), (r["python"][0], r["python"][1]), tuple(r["cpu"]),
                          tuple(r["gpu"]), r["cuda"], r["cudnn"], r.get("source", ""))


@functools.lru_cache(maxsize=4)
def load_table(path: Path = TABLE_PATH) -> Table:
    """The table from ``path`` (cached: it is read-only project data)."""
    with open(path, "rb") as f:
        return parse_table(tomllib.load(f))

