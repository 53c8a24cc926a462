"""Render one Dockerfile + requirements.txt + cell.json per cell, deterministically.

Rendering is a pure function of the ``Cell`` and the templates in ``images/``:
no timestamps, no host paths, nothing sorted that has an order of its own, so
rendering twice gives identical bytes. The image tag is
``tfmatrix/<cell>:<12 hex>``, a sha256 over the rendered Dockerfile and
requirements.txt (cell.json is left out, so a new timeout never rebuilds an
image). The Dockerfile carries that hash as its ``org.tfmatrix.inputs-hash``
label; since a file cannot contain its own hash, it is taken over the text with
the label's value blank.

Every value is re-checked against ``tfmatrix.matrix.PATTERNS`` right here, so
even a ``Cell`` built by hand (not by ``matrix.load``) cannot put a newline or
shell metacharacter into a Dockerfile.

This module owns ``build/images/`` (``paths.RENDER_DIR``): the ``render`` command
writes there, and the Docker runner asks ``prepare`` for the cell it builds,
which writes the same files, so what was built can always be read back there.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from suite.schema import NO_TF_BACKENDS

from .. import paths
from ..matrix import PATTERNS, Cell
from ..matrix.releases import Backend, Release, Table, load_table
from ..versions import version_key

DOCKERFILE_TEMPLATE = "cell.Dockerfile.j2"
REQUIREMENTS_TEMPLATE = "requirements.txt.j2"
IMAGE_REPOSITORY = "tfmatrix"
TAG_HEX = 12
BENCH_UID = 10001
VENV = "/opt/tfmatrix/venv"
# Comments copied from the table into rendered files: one line, no control characters.
_COMMENT = re.compile(r"[^\x00-\x1f\x7f]{0,600}")


@dataclass(frozen=True)
class RenderedCell:
    """What ``render`` writes for one cell: file name -> text, and the image tag."""

    name: str
    files: dict[str, str]
    tag: str


class RenderError(ValueError):
    """A value that failed its pattern at render time (a bug or a hand-built Cell)."""


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(paths.IMAGES_DIR)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _gate(kind: str, value: str, what: str) -> str:
    pattern = _COMMENT if kind == "comment" else PATTERNS[kind]
    if not pattern.fullmatch(value):
        raise RenderError(f"refusing to render {what} {value!r}: it does not match the {kind} pattern")
    return value


def check_cell(cell: Cell) -> None:
    """Re-validate every value of ``cell`` that reaches a template (defence in depth)."""
    _gate("name", cell.name, "cell name")
    if cell.has_tf:
        _gate("tf", cell.tf, "TF version")
    elif cell.backend not in NO_TF_BACKENDS:
        raise RenderError(f"refusing to render backend {cell.backend!r}")
    _gate("python", cell.python, "Python version")
    if cell.target not in ("cpu", "gpu"):
        raise RenderError(f"refusing to render target {cell.target!r}")
    if cell.keras.version is not None:
        _gate("keras_version", cell.keras.version, "Keras version")
    if cell.keras.flavour not in ("tf.keras", "keras", "keras3", "tf_keras"):
        raise RenderError(f"refusing to render Keras flavour {cell.keras.flavour!r}")
    for value, kind in ((cell.cuda, "cuda"), (cell.cudnn, "cudnn")):
        if value is not None:
            _gate(kind, value, kind)
    ref, _, digest = cell.base.ref.partition("@")
    _gate("image", ref, "base image")
    _gate("image", cell.base.upstream, "base image")
    if digest:
        _gate("digest", digest, "base digest")
    for line in (*cell.bootstrap, *cell.requirements):
        _gate("requirement", line, "requirement")
    for key, value in cell.env:
        _gate("env_name", key, "environment variable")
        _gate("env_value", value, f"value of {key}")


def uv_version(cell: Cell, table: Table) -> str:
    """The uv release that installs this cell's wheels ("" for pip): a cell on a Python base (no pip bootstrap)
    with a Python uv's wheel supports (``[tooling] uv_min_python``). uv installs the same wheels from the same
    wheelhouse about twice as fast (``[tooling]`` has the figures)."""
    name, _, version = table.uv.partition("==")
    if name != "uv" or not version or cell.bootstrap:
        return ""
    if version_key(cell.python) < version_key(table.uv_min_python):
        return ""
    return _gate("keras_version", version, "uv version")


def build_requirements(cell: Cell, table: Table | None = None) -> tuple[str, ...]:
    """Every wheel an image build of ``cell`` needs from the wheelhouse: its installer's (uv), its pip bootstrap
    and its requirements. The one list the wheelhouse, the disk estimate and the build context are made from."""
    table = table or load_table()
    uv = uv_version(cell, table)
    return (*((f"uv=={uv}",) if uv else ()), *cell.bootstrap, *cell.requirements)


def base_why(cell: Cell, rel: Release) -> str:
    """One line for the Dockerfile header: why the cell builds FROM this base."""
    up = cell.base.upstream
    gpu = cell.target == "gpu"
    if up == f"python:{cell.python}-slim-bookworm":
        if gpu:
            return rel.gpu_why
        return "official slim Python image; bookworm for every Python so cells share layers"
    if gpu and up in (rel.gpu_image, rel.tf_image.gpu) and rel.gpu_base != "python":
        return rel.gpu_why
    if up in (rel.tf_image.cpu, rel.tf_image.gpu):
        return 'the release\'s official TensorFlow image (base = "tensorflow"); TF is reinstalled in a venv'
    return "named in matrix.toml (base = ...); its Python is installed from the OS archive if missing"


def backend_groups(cell: Cell, table: Table) -> list[tuple[str, list[str]]]:
    """requirements.txt groups of a jax/torch cell: Keras, its backend release's lines, the cell's pins."""
    assert table.keras3 is not None
    row = table.keras3.pinned[cell.backend].release(cell.backend_version)
    assert row is not None, f"{cell.backend} {cell.backend_version} is resolved from the table"
    lines = list(cell.requirements)
    user = list(cell.user_requirements)
    if user and lines[-len(user):] == user:
        lines = lines[:-len(user)]
    own = list(row.lines(cell.target, cell.backend_version))
    how = (f"with its CUDA {row.cuda} / cuDNN {row.cudnn} pip wheels" if cell.target == "gpu" else
           "for CPU" + (": PyPI's Linux torch is the CUDA build and cannot import without its nvidia-* wheels"
                        if cell.backend == "torch" else ""))
    groups = [(f"Keras {cell.keras.version}: no TensorFlow in this cell (KERAS_BACKEND={cell.backend})", lines[:1]),
              (f"{cell.backend} {cell.backend_version} {how} (releases.toml [[backend.{cell.backend}.release]] "
               f"{row.minor})", own)]
    rest = lines[1 + len(own):]
    if rest:
        groups.append(("extra pins from matrix.toml", rest))
    if user:
        groups.append(("[suite] requirements from matrix.toml: what your own benchmarks import", user))
    for comment, _ in groups:
        _gate("comment", comment, "comment")
    return groups


def requirement_groups(cell: Cell, rel: Release) -> list[tuple[str, list[str]]]:
    """requirements.txt as (comment, lines) groups, in the cell's order (pure).

    The comments say where each line comes from: the TF package rule, the CUDA
    wheels, the Keras pairing, each table pin's reason, the cell's own pins.
    """
    reasons = {p.requirement: p.reason for p in rel.pins}
    groups: list[tuple[str, list[str]]] = []
    tf_line, rest = cell.requirements[0], list(cell.requirements[1:])
    wheel_lines: list[str] = []
    while rest and rest[0].startswith("nvidia-"):  # the CUDA wheels follow the TF line
        wheel_lines.append(rest.pop(0))
    keras_lines = [r for r in (cell.keras.requirement,) if r]
    groups.append((f"TensorFlow {cell.tf} for {cell.target.upper()}", [tf_line]))
    if wheel_lines:
        groups.append((f"CUDA {cell.cuda} / cuDNN {cell.cudnn} as pip wheels (pinned as TF's and-cuda extra pins them)",
                       wheel_lines))
    user = list(cell.user_requirements)
    if user and rest[-len(user):] == user:
        rest = rest[:-len(user)]
    for line in rest:
        if line in keras_lines:
            groups.append((f"Keras: {cell.keras.flavour}", [line]))
        elif line in reasons:
            groups.append((reasons[line], [line]))
        elif cell.keras.flavour == "tf_keras" and line == f"keras=={rel.keras3}":
            groups.append((f"TF {rel.tf} depends on Keras 3 even when tf_keras serves tf.keras: pinned to the "
                           "release's default", [line]))
        elif groups and groups[-1][0] == "extra pins from matrix.toml":
            groups[-1][1].append(line)
        else:
            groups.append(("extra pins from matrix.toml", [line]))
    if user:
        groups.append(("[suite] requirements from matrix.toml: what your own benchmarks import", user))
    for comment, _ in groups:
        _gate("comment", comment, "comment")
    return groups


def template_context(cell: Cell, table: Table, inputs_hash: str) -> dict[str, Any]:
    """Everything the templates see; all strings already validated."""
    if not cell.has_tf:
        return _backend_context(cell, table, inputs_hash)
    rel = table.release(cell.tf)
    why = _gate("comment", base_why(cell, rel), "base reason")
    labels = [
        ("org.tfmatrix.cell", cell.name),
        ("org.tfmatrix.tf", cell.tf),
        ("org.tfmatrix.keras", cell.keras.label),
        ("org.tfmatrix.python", cell.python),
        ("org.tfmatrix.target", cell.target),
        ("org.tfmatrix.base", cell.base.upstream),
        ("org.tfmatrix.inputs-hash", inputs_hash),
    ]
    return {
        "cell": cell,
        "base_ref": cell.base.ref,
        "base_why": why,
        "python_exe": f"python{cell.python}",
        "install_python": not cell.python_from_base,
        "apt_packages": f"python{cell.python} python{cell.python}-venv",
        "os_packages": "", "os_packages_why": "",
        "bootstrap": list(cell.bootstrap),
        "uv": uv_version(cell, table),
        "env": list(cell.env),
        "labels": labels,
        "venv": VENV,
        "uid": BENCH_UID,
        "requirement_groups": requirement_groups(cell, rel),
        "cuda_note": f", CUDA {cell.cuda} / cuDNN {cell.cudnn}" if cell.target == "gpu" else "",
    }


def os_packages(backend: Backend) -> dict[str, str]:
    """The Debian packages a backend's image installs beside its wheels (a C++ compiler for torch.compile)."""
    names = [_gate("os_package", p, "OS package") for p in backend.os_packages]
    why = _gate("comment", backend.os_packages_why, "OS packages reason") if names else ""
    return {"os_packages": " ".join(names), "os_packages_why": why}


def _backend_context(cell: Cell, table: Table, inputs_hash: str) -> dict[str, Any]:
    """A jax/torch cell's template values: the same image layout, no TensorFlow."""
    assert cell.python_from_base, "jax/torch cells build on the official Python image"
    assert table.keras3 is not None
    gpu = "; CUDA comes from the backend's nvidia-* pip wheels" if cell.target == "gpu" else ""
    labels = [
        ("org.tfmatrix.cell", cell.name),
        ("org.tfmatrix.keras", cell.keras.label),
        ("org.tfmatrix.backend", f"{cell.backend} {cell.backend_version}"),
        ("org.tfmatrix.python", cell.python),
        ("org.tfmatrix.target", cell.target),
        ("org.tfmatrix.base", cell.base.upstream),
        ("org.tfmatrix.inputs-hash", inputs_hash),
    ]
    return {
        "cell": cell, "base_ref": cell.base.ref,
        "base_why": _gate("comment", "official slim Python image; bookworm for every Python so cells share layers"
                          + gpu, "base reason"),
        "python_exe": f"python{cell.python}", "install_python": False, "apt_packages": "", "bootstrap": [],
        "uv": uv_version(cell, table),
        **os_packages(table.keras3.pinned[cell.backend]),
        "env": list(cell.env), "labels": labels, "venv": VENV, "uid": BENCH_UID,
        "requirement_groups": backend_groups(cell, table),
        "cuda_note": f", CUDA {cell.cuda} / cuDNN {cell.cudnn}" if cell.target == "gpu" else "",
    }


def inputs_hash(dockerfile: str, requirements: str) -> str:
    """First 12 hex of sha256 over the Dockerfile (hash label blank) and requirements.txt."""
    h = hashlib.sha256()
    for name, text in (("Dockerfile", dockerfile), ("requirements.txt", requirements)):
        data = text.encode("utf-8")
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:TAG_HEX]


def render_cell(cell: Cell, table: Table | None = None) -> RenderedCell:
    """Render one cell (pure: same Cell and templates, same bytes)."""
    table = table or load_table()
    check_cell(cell)
    env = _environment()
    docker_t = env.get_template(DOCKERFILE_TEMPLATE)
    req_t = env.get_template(REQUIREMENTS_TEMPLATE)
    requirements = req_t.render(template_context(cell, table, ""))
    unhashed = docker_t.render(template_context(cell, table, ""))
    digest = inputs_hash(unhashed, requirements)
    dockerfile = docker_t.render(template_context(cell, table, digest))
    tag = f"{IMAGE_REPOSITORY}/{cell.name}:{digest}"
    doc = {**cell.to_dict(), "tag": tag, "inputs_hash": digest}
    cell_json = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return RenderedCell(cell.name, {"Dockerfile": dockerfile, "requirements.txt": requirements,
                                    "cell.json": cell_json}, tag)


def render_cells(cells: Iterable[Cell]) -> list[RenderedCell]:
    table = load_table()
    return [render_cell(c, table) for c in cells]


def write_rendered(rendered: RenderedCell, out_dir: Path) -> Path:
    """Write ``<out_dir>/<cell>/{Dockerfile,requirements.txt,cell.json}``; returns the cell directory.

    Files are written as UTF-8 bytes (no newline translation) and only when their
    content changed, so an unchanged cell keeps its mtimes.
    """
    _gate("name", rendered.name, "cell name")
    target = Path(out_dir) / rendered.name
    target.mkdir(parents=True, exist_ok=True)
    for name, text in rendered.files.items():
        path = target / name
        data = text.encode("utf-8")
        try:
            if path.read_bytes() == data:
                continue
        except FileNotFoundError:
            pass
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    return target


def prepare(cell: Cell) -> RenderedCell:
    """``cell`` rendered and written to ``paths.RENDER_DIR``: what the Docker runner builds its image from."""
    rendered = render_cell(cell)
    write_rendered(rendered, paths.RENDER_DIR)
    return rendered
