"""The compatibility table: complete, consistent with TF's tested configurations, and well-formed."""
from __future__ import annotations

import re

import pytest

from tfmatrix.errors import UserError
from tfmatrix.matrix import PATTERNS, releases
from tfmatrix.matrix.releases import TABLE_PATH, load_table
from tfmatrix.versions import minor_series, version_key

TABLE = load_table()
ROWS = TABLE.releases
TBC_FILE = TABLE_PATH.parent / "tested_build_configurations.html.txt"


def _tbc() -> dict[str, tuple[str, str | None, str | None]]:
    """minor -> (python range text, cuDNN, CUDA), GPU rows winning for 1.x (they carry CUDA)."""
    out: dict[str, tuple[str, str | None, str | None]] = {}
    for line in TBC_FILE.read_text().splitlines():
        cells = re.findall(r"<td>(.*?)</td>", line)
        if not cells:
            continue
        m = re.fullmatch(r"tensorflow(?:_gpu)?-(\d+\.\d+)\.\d+", cells[0])
        if not m:
            continue
        cudnn, cuda = (cells[4], cells[5]) if len(cells) >= 6 else (None, None)
        prev = out.get(m.group(1))
        out[m.group(1)] = (cells[1], cudnn or (prev[1] if prev else None), cuda or (prev[2] if prev else None))
    return out


TBC = _tbc()


def _expand(python_range: str) -> set[str]:
    """ "2.7, 3.5-3.7" -> {"2.7", "3.5", "3.6", "3.7"}."""
    out: set[str] = set()
    for part in python_range.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-")
            major = lo.split(".")[0]
            out |= {f"{major}.{n}" for n in range(int(lo.split(".")[1]), int(hi.split(".")[1]) + 1)}
        else:
            out.add(part)
    return out


def test_every_minor_release_from_1_14_to_the_newest() -> None:
    expected = ["1.14", "1.15"] + [f"2.{n}" for n in range(0, 23)]
    assert [r.tf for r in ROWS] == expected
    assert TABLE.newest().tf == "2.22" and TABLE.newest().newest == "2.22.0rc0"       # a release candidate
    assert TABLE.final[-1].tf == "2.21" and TABLE.final[-1].newest == "2.21.0"
    assert TABLE.oldest().tf == "1.14"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.tf)
def test_patches_and_newest(row: releases.Release) -> None:
    assert row.newest in row.patches
    assert list(row.patches) == sorted(row.patches, key=version_key)
    assert row.patches[-1] == row.newest
    assert all(p.startswith(row.tf + ".") and PATTERNS["tf"].fullmatch(p) for p in row.patches)


@pytest.mark.parametrize("row", TABLE.final, ids=lambda r: r.tf)      # a candidate has no tested-build row yet
def test_python_cuda_cudnn_follow_the_tested_build_configurations(row: releases.Release) -> None:
    python_range, cudnn, cuda = TBC[row.tf]
    assert set(row.python) <= _expand(python_range), "only Pythons TF tested"
    assert not set(row.python) & {"2.7", "3.3", "3.4"}
    assert list(row.python) == sorted(row.python, key=version_key)
    assert row.default_python in row.python
    assert version_key(row.default_python) >= version_key(TABLE.suite_min_python)
    assert (row.cudnn, row.cuda) == (cudnn, cuda)
    assert "[TBC]" in row.source and "[PYPI]" in row.source


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.tf)
def test_packages(row: releases.Release) -> None:
    k = row.key
    if k < version_key("2.1"):
        assert row.gpu_package == "tensorflow-gpu"
    elif k < version_key("2.14"):
        assert row.gpu_package == "tensorflow"
    else:
        assert row.gpu_package == "tensorflow[and-cuda]"
        assert row.pip_cuda and row.gpu_base == "python"
    if k >= version_key("2.1"):
        assert row.cpu_package_for(row.newest) == "tensorflow-cpu"


def test_tensorflow_cpu_exists_for_1_15_0_only_in_1x() -> None:
    assert TABLE.release("1.14").cpu_package_for("1.14.0") == "tensorflow"
    r115 = TABLE.release("1.15")
    assert r115.cpu_package_for("1.15.0") == "tensorflow-cpu"
    assert r115.cpu_package_for("1.15.5") == "tensorflow"
    assert TABLE.release("2.0").cpu_package_for("2.0.4") == "tensorflow"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.tf)
def test_gpu_bases_still_exist(row: releases.Release) -> None:
    """No row may build FROM an nvidia/cuda tag NVIDIA deleted (7.0-10.2, 11.0-11.7.0)."""
    assert row.gpu_why
    refs = [row.tf_image.cpu, row.tf_image.gpu] + ([row.gpu_image] if row.gpu_image else [])
    for ref in refs:
        assert PATTERNS["image"].fullmatch(ref), ref
        m = re.match(r"nvidia/cuda:(\d+)\.(\d+)\.(\d+)", ref)
        if m:
            version = tuple(int(g) for g in m.groups())
            assert version >= (11, 7, 1) and not version[0] < 11, ref
    assert row.tf_image.os in TABLE.os
    if row.key <= version_key("2.1"):
        assert row.tf_image.gpu.endswith("-gpu-py3"), "2.1.0-gpu without -py3 is Python 2.7"
    if row.gpu_base == "nvidia-cuda":
        assert row.gpu_image and row.gpu_image_os in TABLE.os


@pytest.mark.parametrize("row", [r for r in ROWS if r.pip_cuda], ids=lambda r: r.tf)
def test_cuda_wheels(row: releases.Release) -> None:
    major = row.cuda.split(".")[0]
    assert all(PATTERNS["requirement"].fullmatch(w) and w.startswith("nvidia-") for w in row.cuda_wheels)
    assert all(f"-cu{major}==" in w for w in row.cuda_wheels)
    cudnn = [w for w in row.cuda_wheels if w.startswith(TABLE.cudnn_wheel(row.cuda) + "==")]
    assert len(cudnn) == 1 and cudnn[0].split("==")[1].startswith(row.cudnn + ".")
    runtime = [w for w in row.cuda_wheels if w.startswith(f"nvidia-cuda-runtime-cu{major}==")]
    assert runtime[0].split("==")[1].startswith(row.cuda + ".")
    assert not any("tensorrt" in w for w in row.cuda_wheels)


def test_tf_2_14_does_not_use_the_and_cuda_extra() -> None:
    """Its extra requires tensorrt==8.5.3.1, an sdist that downloads from pypi.nvidia.com."""
    assert TABLE.release("2.14").and_cuda_extra is False
    assert all(r.and_cuda_extra for r in ROWS if r.key >= version_key("2.15"))


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.tf)
def test_keras_pairing(row: releases.Release) -> None:
    if row.key <= version_key("2.15"):
        assert row.keras == "tf.keras" and row.keras3 is None and row.tf_keras is None
    else:
        assert row.keras == "keras3"
        assert row.keras3 and row.keras3_min and version_key(row.keras3) >= version_key(row.keras3_min)
        if row.prerelease:      # a release candidate: no tf_keras of its minor yet; Keras from its own snapshot
            assert row.tf_keras is None and row.keras3_package == "keras-nightly" and ".dev" in row.keras3
        else:
            assert row.tf_keras and minor_series(row.tf_keras) == row.tf and row.keras3_package == "keras"
    assert ("2.2.5" in row.keras2) == (row.tf in ("1.14", "1.15"))
    assert ("2.3.1" in row.keras2) == (row.tf in ("1.14", "1.15", "2.0", "2.1"))


def _pins(minor: str) -> list[str]:
    return [p.requirement for p in TABLE.release(minor).pins]


def test_known_pins_cover_their_ranges() -> None:
    assert "protobuf<3.21" in _pins("1.14") and "protobuf<3.21" in _pins("2.8")
    assert "protobuf<3.21" not in _pins("2.9")
    assert "numpy<1.19" in _pins("1.15") and "numpy<1.19" in _pins("2.2") and "numpy<1.19" not in _pins("2.3")
    assert "numpy<2" in _pins("2.3") and "numpy<2" in _pins("2.17") and "numpy<2" not in _pins("2.18")
    assert _pins("1.14").count("gast==0.2.2") == 1 and "gast==0.2.2" not in _pins("1.15")
    assert "keras<2.7" in _pins("2.6") and "keras<2.7" not in _pins("2.7")
    assert _pins("2.21") == []


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.tf)
def test_pins_are_well_formed_and_explained(row: releases.Release) -> None:
    for pin in row.pins:
        assert PATTERNS["requirement"].fullmatch(pin.requirement)
        assert len(pin.reason) > 30 and "\n" not in pin.reason


def test_lookups() -> None:
    assert TABLE.release("1.15.5").tf == "1.15"
    assert TABLE.release("2.15.0.post1").tf == "2.15"
    with pytest.raises(KeyError):
        TABLE.release("1.13")
    assert version_key("2.15.0.post1") > version_key("2.15.0")
    assert version_key("2.10") > version_key("2.9")
    assert TABLE.cudnn_wheel("11.8") == "nvidia-cudnn-cu11"
    assert TABLE.cudnn_wheel("12.5") == "nvidia-cudnn-cu12"


def test_os_pythons_and_tooling() -> None:
    for osp in TABLE.os.values():
        assert osp.default in osp.pythons
    assert PATTERNS["requirement"].fullmatch(TABLE.os_python_pip)
    assert dict(TABLE.tf_keras.env) == {"TF_USE_LEGACY_KERAS": "1"}
    assert TABLE.tf_keras.cpu_package == "tensorflow"


def test_a_release_candidate_is_the_newest_row_and_never_on_a_timeline_axis() -> None:
    from tfmatrix.history.axis import keras_axis, tf_axis

    candidates = [r for r in ROWS if r.prerelease]
    assert [r.tf for r in candidates] == ["2.22"] and TABLE.newest().prerelease
    assert all("rc" in p for r in candidates for p in r.patches)
    assert TABLE.final == tuple(r for r in ROWS if not r.prerelease)
    assert "2.22.0rc0" not in tf_axis(TABLE).versions and tf_axis(TABLE).versions[-1] == TABLE.final[-1].newest
    assert keras_axis(TABLE, "2.21").tf == "2.21.0"
    with pytest.raises(UserError, match="release candidate"):
        keras_axis(TABLE, "2.22")
