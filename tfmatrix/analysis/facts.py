"""A cell's facts, typed once where the cell is loaded: what the suite saw inside it, what the matrix asked, how it ran.

A cell file holds its facts as nested JSON objects: the suite's view of
TensorFlow, Keras and the host (``results.environment.tf``/``.host``), the
matrix's spec (``cell``), the runner's notes (``runner``) and the host
tfmatrix ran it from (``host``). ``CellFacts.of`` reads them once into the
frozen records below (pyperf's metadata is the model: typed at load,
displayed from the record), and ``analysis.cells.CellResult`` carries them as
``facts``; the report, the hardware and device groups and bisect read the
records' fields, never the dictionaries (``tests/test_facts.py`` checks that
no other module of tfmatrix/ reads them).

Each record's default for an absent key is what the report showed for it
before there were records: a value that is only printed is kept as its text
(``_shown``: None when absent or empty, as every reader treated a falsy value),
so the page reads the same bytes.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..results.archive import Testbed
from ..results.documents import CellDoc


def _obj(value: Any) -> Mapping[str, Any]:
    """A nested object of the facts, or an empty one (null, absent; ``results.shapes`` refused any other type)."""
    return value if isinstance(value, dict) else {}


def _shown(value: Any) -> str | None:
    """A fact the report only prints, as its text; None when absent or empty (every reader took those as absent)."""
    return str(value) if value else None


def _printed(value: Any) -> str | None:
    """A fact printed as it is, an empty one included; None only when absent (the page prints it "None")."""
    return None if value is None else str(value)


@dataclass(frozen=True)
class KerasFacts:
    """One Keras: the suite's view of ``tf.keras`` or the standalone ``keras``, or the one the matrix asked for.

    ``unavailable`` is why the suite could not import that API (the page
    shows it under "n/a"); the matrix's spec never has one.
    """

    flavour: str | None = None
    version: str | None = None
    unavailable: str | None = None

    @classmethod
    def of(cls, facts: Any) -> KerasFacts:
        keras = _obj(facts)
        return cls(keras.get("flavour"), keras.get("version"), _shown(keras.get("unavailable")))


@dataclass(frozen=True)
class BuildInfo:
    """What TensorFlow was built with (``tf.sysconfig.get_build_info``): the CUDA and cuDNN it expects, if any."""

    cuda_version: str | None = None
    cudnn_version: str | None = None
    is_cuda_build: bool = False

    @classmethod
    def of(cls, facts: Any) -> BuildInfo:
        build = _obj(facts)
        return cls(_shown(build.get("cuda_version")), _shown(build.get("cudnn_version")),
                   bool(build.get("is_cuda_build")))


@dataclass(frozen=True)
class Threads:
    """TensorFlow's thread pools as the cell ran them (0: TF's own choice); ``reported`` False for a TF without
    ``tf.config.threading`` (the page then shows nothing, not "intra None")."""

    reported: bool = False
    intra_op: str | None = None
    inter_op: str | None = None

    @classmethod
    def of(cls, facts: Any) -> Threads:
        threads = _obj(facts)
        return cls(bool(threads), _printed(threads.get("intra_op")), _printed(threads.get("inter_op")))


@dataclass(frozen=True)
class TfFacts:
    """What the suite saw of TensorFlow and Keras in the cell (``environment.tf``, ``results.shapes.TF_FACTS``)."""

    reported: bool = False                  # the suite reported TF facts at all
    version: str | None = None              # tensorflow.version: the TF installed
    git_version: str | None = None
    tf_keras: KerasFacts = KerasFacts()
    keras: KerasFacts = KerasFacts()        # the standalone keras package
    gpus_visible: tuple[str, ...] = ()
    gpu_error: str | None = None            # why TF saw no GPU
    backend: str | None = None              # Keras 3's backend, as the suite named it
    numpy: str | None = None                # numpy's version
    build: BuildInfo = BuildInfo()
    threads: Threads = Threads()
    onednn: bool | None = None              # oneDNN's custom ops on or off; None: not known for this TF
    packages: Mapping[str, str] = field(default_factory=dict)    # every installed distribution: its version

    @classmethod
    def of(cls, facts: Mapping[str, Any]) -> TfFacts:
        tf, keras, error = _obj(facts.get("tensorflow")), _obj(facts.get("keras")), facts.get("gpu_error")
        onednn = facts.get("onednn")
        return cls(bool(facts), tf.get("version"), tf.get("git_version"), KerasFacts.of(keras.get("tf.keras")),
                   KerasFacts.of(keras.get("keras")), tuple(str(g) for g in facts.get("gpus_visible") or []),
                   str(error) if error else None, _shown(_obj(facts.get("backend")).get("name")),
                   _shown(facts.get("numpy")), BuildInfo.of(facts.get("build_info")), Threads.of(facts.get("threads")),
                   None if onednn is None else bool(onednn),
                   {str(k): str(v) for k, v in _obj(facts.get("packages")).items()})

    @property
    def keras_seen(self) -> KerasFacts:
        """The Keras a cell's models ran on: the standalone package when it has a version, else tf.keras."""
        return self.keras if self.keras.version else self.tf_keras


@dataclass(frozen=True)
class CpuFacts:
    """The CPU the suite saw inside the cell; ``reported`` False when the suite said nothing of it."""

    reported: bool = False
    model: str | None = None
    logical_cpus: str | None = None         # only printed: kept as its text
    flags: Mapping[str, bool] = field(default_factory=dict)     # the flags the suite asks about, each on or off

    @classmethod
    def of(cls, facts: Any) -> CpuFacts:
        cpu = _obj(facts)
        return cls(bool(cpu), _shown(cpu.get("model")), _shown(cpu.get("logical_cpus")),
                   {str(f): bool(on) for f, on in _obj(cpu.get("flags")).items()})


def _smi_line(smi: Any) -> str:
    """nvidia-smi's answer as the page prints it: "gpus=[...], driver_version=..., rc=0", or ""."""
    if isinstance(smi, dict):
        smi = ", ".join(f"{k}={v}" for k, v in smi.items())
    return str(smi or "")


@dataclass(frozen=True)
class HostFacts:
    """What the suite saw of the host inside the cell (``environment.host``, ``results.shapes.HOST_FACTS``)."""

    reported: bool = False                  # the suite reported host facts at all
    python: str | None = None               # python.version
    platform: str | None = None
    cpu: CpuFacts = CpuFacts()
    nvidia_smi: str = ""                    # what nvidia-smi said, as one line ("": absent)
    gpu_names: tuple[str, ...] = ()         # the GPU models nvidia-smi listed, in its order

    @classmethod
    def of(cls, facts: Mapping[str, Any]) -> HostFacts:
        smi = facts.get("nvidia_smi")
        gpus = _obj(smi).get("gpus") or []
        return cls(bool(facts), _obj(facts.get("python")).get("version"), _shown(facts.get("platform")),
                   CpuFacts.of(facts.get("cpu")), _smi_line(smi),
                   tuple(str(g["name"]) for g in (gpus if isinstance(gpus, list) else [])
                         if isinstance(g, dict) and g.get("name")))


@dataclass(frozen=True)
class HostSummary:
    """The host tfmatrix ran the cell from, or the cluster node it ran on (``store.host_summary``): seen from
    outside the cell, what the report falls back on where the suite saw nothing."""

    reported: bool = False
    hostname: str | None = None
    cpu: str | None = None
    cpus: str | None = None                 # only printed: kept as its text
    memory_gib: str | None = None           # whole GiB (a file from before it: None)
    os: str | None = None                   # "Linux Debian GNU/Linux 12 (bookworm)"; before it: None
    gpus: tuple[str, ...] | None = None     # the host's GPU models (None: a file from before the host said)

    @classmethod
    def of(cls, facts: Mapping[str, Any]) -> HostSummary:
        gpus = facts.get("gpus")
        return cls(bool(facts), _shown(facts.get("hostname")), _shown(facts.get("cpu")), _shown(facts.get("cpus")),
                   _shown(facts.get("memory_gib")), _shown(facts.get("os")),
                   tuple(str(g) for g in gpus) if isinstance(gpus, list) else None)


@dataclass(frozen=True)
class RunnerInfo:
    """How the runner ran the cell (the cell file's ``runner``): its name, the image or interpreter, the base."""

    name: str | None = None
    image: str | None = None
    image_id: str | None = None
    base: str | None = None
    interpreter: str | None = None          # an existing environment's Python
    inputs: str | None = None               # what the environment was made from (its fingerprint): a change of it
    #                                         is a change of what was measured (the series reads it)

    @classmethod
    def of(cls, facts: Mapping[str, Any]) -> RunnerInfo:
        return cls(facts.get("name"), facts.get("image"), facts.get("image_id"), facts.get("base"),
                   facts.get("interpreter"), _shown(facts.get("inputs")))


@dataclass(frozen=True)
class CellSpec:
    """The matrix's cell as the cell file holds it (``Cell.to_dict``): what was asked, before what the suite saw.

    ``_raw`` keeps every key: ``hardware.stack_key`` compares two cells on
    their whole spec, keys the report never reads by name included
    (requirements, bootstrap, memory, ...), so that comparison alone reads it,
    through ``without``.
    """

    name: str | None = None
    tf: str | None = None
    tf_release: str | None = None
    python: str | None = None
    target: str | None = None
    preset: str | None = None
    image: str | None = None
    backend: str | None = None              # Keras 3's backend, as the matrix named it
    backend_version: str | None = None      # its release, exact ("0.6.2"); an existing environment's: as asked
    keras: KerasFacts = KerasFacts()
    cuda: str | None = None
    cudnn: str | None = None
    base_ref: str | None = None             # the base image's reference
    env: Mapping[str, str] = field(default_factory=dict)        # the environment variables the cell was given
    pool: str = ""                          # the hardware pool ("": none)
    _raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> CellSpec:
        env = spec.get("env")
        return cls(name=spec.get("name"), tf=spec.get("tf"), tf_release=spec.get("tf_release"),
                   python=spec.get("python"), target=spec.get("target"), preset=spec.get("preset"),
                   image=spec.get("image"), backend=_shown(spec.get("backend")),
                   backend_version=_shown(spec.get("backend_version")), keras=KerasFacts.of(spec.get("keras")),
                   cuda=_shown(spec.get("cuda")), cudnn=_shown(spec.get("cudnn")),
                   base_ref=_obj(spec.get("base")).get("ref"),
                   env={str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
                   pool=str(spec.get("pool") or ""), _raw=dict(spec))

    def without(self, keys: Collection[str]) -> dict[str, Any]:
        """Every key of the spec but ``keys``, as the file holds them (a fresh dict: the caller may change it)."""
        return {k: v for k, v in self._raw.items() if k not in keys}


@dataclass(frozen=True)
class CellFacts:
    """Every fact of one cell file, typed once (``of``): the one place that reads those parts of the file."""

    tf: TfFacts = TfFacts()
    host: HostFacts = HostFacts()
    spec: CellSpec = CellSpec()
    runner: RunnerInfo = RunnerInfo()
    host_summary: HostSummary = HostSummary()

    @property
    def testbed(self) -> Testbed:
        """The machine the cell ran on, as far as its file says: the host's summary first (seen from outside the
        cell: a GPU cell and its CPU twin share it), what the suite saw inside where the host said nothing."""
        host, inside = self.host_summary, self.host
        gpus = host.gpus if host.gpus is not None else inside.gpu_names
        return Testbed(host.cpu or inside.cpu.model or "?", host.cpus or inside.cpu.logical_cpus or "?",
                       host.memory_gib or "?", tuple(gpus), host.os or (inside.platform or "?").split("-")[0])

    @classmethod
    def of(cls, doc: CellDoc) -> CellFacts:
        results = doc.results
        return cls(TfFacts.of(results.tf_facts if results else {}), HostFacts.of(results.host_facts if results else {}),
                   CellSpec.of(doc.cell), RunnerInfo.of(doc.runner), HostSummary.of(doc.host))
