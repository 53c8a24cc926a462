"""matrix.toml: what a cell is given: names, bases and registries, requirements, env, settings, the default matrix."""
from __future__ import annotations

import sys

import pytest
from test_matrix import M, Snippet, one

from tfmatrix import paths
from tfmatrix.errors import UserError
from tfmatrix.matrix import KNOWN_PRESETS, PATTERNS, load, redirect

# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(("body", "name"), [
    ('tf = "1.15"', "tf1.15-cpu"),
    ('tf = "2.0"\ntarget = "gpu"', "tf2.0-gpu"),
    ('tf = "1.15.0"', "tf1.15.0-cpu"),
    ('tf = "1.14"\nkeras = "2.2.5"', "tf1.14-keras2.2.5-cpu"),
    ('tf = "2.0"\nkeras = "2.3.1"\ntarget = "gpu"', "tf2.0-keras2.3.1-gpu"),
    ('tf = "2.16"', "tf2.16-keras3-cpu"),
    ('tf = "2.16"\nkeras = "keras3"\ntarget = "gpu"', "tf2.16-keras3-gpu"),
    ('tf = "2.17"\nkeras = "3.4.1"', "tf2.17-keras3.4.1-cpu"),
    ('tf = "2.16"\nkeras = "tf_keras"', "tf2.16-tf_keras-cpu"),
    ('tf = "2.16"\nkeras = "tf_keras==2.16.0"', "tf2.16-tf_keras2.16.0-cpu"),
    ('tf = "2.15"\nkeras = "tf.keras"', "tf2.15-cpu"),
    ('tf = "1.15"\nname = "baseline"', "baseline"),
    ('tf = "2.9"\npython = "3.9"\nname = "{default}-py{python}"', "tf2.9-cpu-py3.9"),
    ('tf = "2.18"\ntarget = "gpu"\nname = "tf{release}-cudnn{cudnn}-{target}"', "tf2.18-cudnn9.3-gpu"),
])  # fmt: skip
def test_name_derivation(load_snippet: Snippet, body: str, name: str) -> None:
    cell = one(load_snippet, f"[[cell]]\n{body}\n")
    assert cell.name == name
    assert PATTERNS["name"].fullmatch(cell.name)


def test_names_are_docker_repository_components() -> None:
    for good in ("tf1.15-cpu", "tf2.16-tf_keras-gpu", "a", "a__b", "a--b", "x" * 63):
        assert PATTERNS["name"].fullmatch(good), good
    for bad in ("Tf1", "-a", "a-", "a..b", "a._b", "a b", "x" * 64, "a/b", "tf1.15\n", ""):
        assert not PATTERNS["name"].fullmatch(bad), bad


# --------------------------------------------------------------------------- bases, redirect


@pytest.mark.parametrize(("ref", "registry", "expected"), [
    ("python:3.7-slim-bookworm", "mirror.example.com", "mirror.example.com/library/python:3.7-slim-bookworm"),
    ("nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "mirror.example.com",
     "mirror.example.com/nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04"),
    ("tensorflow/tensorflow:2.9.3-gpu", "mirror.example.com", "mirror.example.com/tensorflow/tensorflow:2.9.3-gpu"),
    ("python:3.7-slim-bookworm", "tfmatrix.local", "tfmatrix.local/library/python:3.7-slim-bookworm"),
    ("docker.io/library/python:3.7", "m.example:5000/hub", "m.example:5000/hub/library/python:3.7"),
    ("docker.io/python:3.7", "m.example", "m.example/library/python:3.7"),
    ("python@sha256:" + "a" * 64, "m.example", "m.example/library/python@sha256:" + "a" * 64),
    ("nvcr.io/nvidia/tensorflow:23.10-tf2-py3", "m.example", "nvcr.io/nvidia/tensorflow:23.10-tf2-py3"),
    ("localhost:5000/x:1", "m.example", "localhost:5000/x:1"),
    ("python:3.7-slim-bookworm", None, "python:3.7-slim-bookworm"),
    ("python:3.7-slim-bookworm", "", "python:3.7-slim-bookworm"),
])  # fmt: skip
def test_redirect(ref: str, registry: str | None, expected: str) -> None:
    assert redirect(ref, registry) == expected


def test_registry_from_file_env_wins_and_digest_appends(load_snippet: Snippet) -> None:
    digest = "sha256:" + "0123456789abcdef" * 4
    body = f'[images]\nbase_registry = "mirror.example.com"\n[[cell]]\ntf = "1.15"\nbase_digest = "{digest}"\n'
    cell = one(load_snippet, body)
    assert cell.base.ref == f"mirror.example.com/library/python:3.7-slim-bookworm@{digest}"
    assert cell.base.upstream == "python:3.7-slim-bookworm" and cell.base.digest == digest
    cell = one(load_snippet, body, {"TFMATRIX_BASE_REGISTRY": "tfmatrix.local"})
    assert cell.base.ref == f"tfmatrix.local/library/python:3.7-slim-bookworm@{digest}"
    cell = one(load_snippet, body, {"TFMATRIX_BASE_REGISTRY": ""})  # empty env switches the mirror off
    assert cell.base.ref == f"python:3.7-slim-bookworm@{digest}"


@pytest.mark.parametrize(("body", "kind", "upstream", "python", "base_python", "bootstrap"), [
    ('tf = "1.15"', "python", "python:3.7-slim-bookworm", "3.7", "3.7", ()),
    ('tf = "1.15"\ntarget = "gpu"', "tensorflow", "tensorflow/tensorflow:1.15.0-gpu-py3", "3.7", "3.6", ("pip==24.0",)),
    ('tf = "2.1"\ntarget = "gpu"', "tensorflow", "tensorflow/tensorflow:2.1.0-gpu-py3", "3.7", "3.6", ("pip==24.0",)),
    ('tf = "2.2"\ntarget = "gpu"', "tensorflow", "tensorflow/tensorflow:2.2.0-gpu", "3.8", "3.6", ("pip==24.0",)),
    ('tf = "2.9"\ntarget = "gpu"', "tensorflow", "tensorflow/tensorflow:2.9.0-gpu", "3.8", "3.8", ("pip==24.0",)),
    ('tf = "2.12"\ntarget = "gpu"', "nvidia-cuda", "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "3.10", None,
     ("pip==24.0",)),
    ('tf = "2.15"\ntarget = "gpu"', "python", "python:3.11-slim-bookworm", "3.11", "3.11", ()),
    ('tf = "2.9"\nbase = "tensorflow"', "tensorflow", "tensorflow/tensorflow:2.9.0", "3.8", "3.8", ("pip==24.0",)),
    ('tf = "2.9"\nbase = "python"\npython = "3.9"', "python", "python:3.9-slim-bookworm", "3.9", "3.9", ()),
    ('tf = "2.9"\nbase = "example.com/img:1"', "custom", "example.com/img:1", "3.10", None, ("pip==24.0",)),
])  # fmt: skip
def test_base_and_python_choice(load_snippet: Snippet, body: str, kind: str, upstream: str, python: str,
                                base_python: str | None, bootstrap: tuple[str, ...]) -> None:
    cell = one(load_snippet, f"[[cell]]\n{body}\n")
    assert (cell.base.kind, cell.base.upstream, cell.python, cell.base.python, cell.bootstrap) == (
        kind, upstream, python, base_python, bootstrap)
    assert cell.base.ref == upstream  # no registry configured


# --------------------------------------------------------------------------- requirements, env


@pytest.mark.parametrize(("body", "expected"), [
    ('tf = "1.15"', ["tensorflow==1.15.5", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ('tf = "1.15.0"', ["tensorflow-cpu==1.15.0", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ('tf = "1.15"\ntarget = "gpu"', ["tensorflow-gpu==1.15.5", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ('tf = "1.14"\nkeras = "2.2.5"',
     ["tensorflow==1.14.0", "keras==2.2.5", "protobuf<3.21", "numpy<1.19", "h5py<3", "gast==0.2.2"]),
    ('tf = "2.0"\nkeras = "2.3.1"\ntarget = "gpu"',
     ["tensorflow-gpu==2.0.4", "keras==2.3.1", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ('tf = "2.1"', ["tensorflow-cpu==2.1.4", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ('tf = "2.1"\ntarget = "gpu"', ["tensorflow==2.1.4", "protobuf<3.21", "numpy<1.19", "h5py<3"]),
    ('tf = "2.6"', ["tensorflow-cpu==2.6.5", "protobuf<3.21", "numpy<2", "keras<2.7", "tensorflow-estimator<2.7",
                    "tensorboard<2.7"]),
    ('tf = "2.9"', ["tensorflow-cpu==2.9.3", "numpy<2"]),
    ('tf = "2.13"\ntarget = "gpu"', ["tensorflow==2.13.1", "numpy<2"]),
    ('tf = "2.16"\nkeras = "tf_keras"', ["tensorflow==2.16.2", "tf-keras==2.16.0", "keras==3.3.3", "numpy<2"]),
    ('tf = "2.16"', ["tensorflow-cpu==2.16.2", "keras==3.3.3", "numpy<2"]),
    ('tf = "2.20"', ["tensorflow-cpu==2.20.0", "keras==3.10.0", "protobuf<7"]),
    ('tf = "2.21"', ["tensorflow-cpu==2.21.0", "keras==3.12.0"]),
    ('tf = "2.21"\npins = ["h5py==3.14.0", "numpy<2.3"]', ["tensorflow-cpu==2.21.0", "keras==3.12.0",
                                                           "h5py==3.14.0", "numpy<2.3"]),
])  # fmt: skip
def test_requirements(load_snippet: Snippet, body: str, expected: list[str]) -> None:
    assert list(one(load_snippet, f"[[cell]]\n{body}\n").requirements) == expected


def test_pip_cuda_requirements(load_snippet: Snippet) -> None:
    r215 = one(load_snippet, '[[cell]]\ntf = "2.15"\ntarget = "gpu"\n').requirements
    assert r215[0] == "tensorflow[and-cuda]==2.15.1"
    assert "nvidia-cudnn-cu12==8.9.4.25" in r215 and "nvidia-cuda-runtime-cu12==12.2.140" in r215
    assert r215[-1] == "numpy<2"
    r214 = one(load_snippet, '[[cell]]\ntf = "2.14"\ntarget = "gpu"\n').requirements
    assert r214[0] == "tensorflow==2.14.1"  # [and-cuda] would pull the tensorrt sdist
    assert "nvidia-cudnn-cu11==8.7.0.84" in r214 and not any("tensorrt" in r for r in r214)
    r221 = one(load_snippet, '[[cell]]\ntf = "2.21"\ntarget = "gpu"\ncudnn = "9.3"\n').requirements
    assert r221[0] == "tensorflow[and-cuda]==2.21.0" and "nvidia-cudnn-cu12==9.3.0.75" in r221
    # An explicit CUDA image carries CUDA itself: no wheels.
    cell = one(load_snippet, '[[cell]]\ntf = "2.18"\ntarget = "gpu"\n'
                             'base = "nvidia/cuda:12.5.1-cudnn-runtime-ubuntu22.04"\n')
    assert cell.requirements[0] == "tensorflow==2.18.1" and not any(r.startswith("nvidia-") for r in cell.requirements)


def test_env(load_snippet: Snippet) -> None:
    cell = one(load_snippet, '[[cell]]\ntf = "2.16"\nkeras = "tf_keras"\nenv = { TF_CPP_MIN_LOG_LEVEL = "2", N = 3 }\n')
    assert cell.env == (("TF_USE_LEGACY_KERAS", "1"), ("TF_CPP_MIN_LOG_LEVEL", "2"), ("N", "3"))
    assert one(load_snippet, '[[cell]]\ntf = "2.16"\n').env == ()


def test_settings_and_defaults(load_snippet: Snippet) -> None:
    matrix = load_snippet("""
        [matrix]
        preset = "standard"
        timeout = "90m"
        memory = "4g"
        repeats = 3
        rounds = 2
        [[cell]]
        tf = "2.1"
        [[cell]]
        tf = "1.15"
        timeout = 60
        preset = "quick"
    """)
    a, b = matrix.cells
    assert (a.preset, a.timeout_s, a.memory, a.repeats) == ("standard", 5400, "4g", 3)
    assert (b.preset, b.timeout_s) == ("quick", 60)
    assert matrix.settings.baseline == "tf1.15-cpu"  # default: the oldest cell
    assert matrix.settings.rounds == 2
    bad = '[matrix]\nrounds = 0\n[[cell]]\ntf = "1.15"\n'
    with pytest.raises(UserError, match="key 'rounds': 0 is not a number of rounds; use an integer from 1 to 20"):
        load_snippet(bad)
    assert matrix.baseline is b
    assert matrix.select(["tf2.*"]) == (a,) and matrix.select([]) == matrix.cells


def test_cell_to_dict_is_json_able(load_snippet: Snippet) -> None:
    import json

    cell = one(load_snippet, '[[cell]]\ntf = "2.16"\nkeras = "tf_keras"\ntarget = "gpu"\n')
    doc = json.loads(json.dumps(cell.to_dict()))
    assert doc["name"] == "tf2.16-tf_keras-gpu" and doc["keras"]["flavour"] == "tf_keras"
    assert doc["env"] == {"TF_USE_LEGACY_KERAS": "1"} and doc["requirements"] == list(cell.requirements)
    assert doc["base"]["upstream"] == "python:3.11-slim-bookworm" and doc["origin"] == f"{M}: cell[0]"


def test_known_presets_mirror_the_suite() -> None:
    sys.path.insert(0, str(paths.REPO_ROOT))
    try:
        from suite.definitions import PRESETS
    finally:
        sys.path.remove(str(paths.REPO_ROOT))
    assert set(KNOWN_PRESETS) == set(PRESETS)


# --------------------------------------------------------------------------- the default matrix


def test_default_matrix_tells_the_whole_story() -> None:
    matrix = load(environ={})
    names = [c.name for c in matrix.cells]
    for stem in ("tf1.14-keras2.2.5", "tf1.15", "tf2.0-keras2.3.1", "tf2.1", "tf2.9", "tf2.15", "tf2.16-keras3",
                 "tf2.16-tf_keras", "tf2.21-keras3"):
        assert f"{stem}-cpu" in names and f"{stem}-gpu" in names, stem
    for backend in ("tensorflow", "jax", "torch"):        # the same newest Keras 3 on every backend
        assert {matrix.cell(f"keras3-{backend}-{t}").keras.version for t in ("cpu", "gpu")} == {"3.15.1"}
    assert matrix.settings.baseline == "tf1.14-keras2.2.5-cpu"
    assert matrix.warnings == ()
    from tfmatrix.matrix.releases import load_table

    assert any(c.tf == load_table().newest().newest and c.opt_in for c in matrix.cells)    # the candidate, opt-in
    assert any(c.tf == load_table().final[-1].newest and not c.opt_in for c in matrix.cells)
    cpu_python = {c.tf_release: c.python for c in matrix.cells if c.target == "cpu" and c.has_tf}
    assert cpu_python == {"1.14": "3.7", "1.15": "3.7", "2.0": "3.7", "2.1": "3.7", "2.9": "3.8", "2.15": "3.11",
                          "2.16": "3.11", "2.21": "3.11", "2.22": "3.11"}
