"""``disk``: what tfmatrix keeps, who uses it, what is pruned (pure, and the virtualenvs and wheels on a real
filesystem); the images on a real Docker engine, another program's image left alone, in ``test_e2e_disk.py``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tfmatrix.provision import hygiene
from tfmatrix.provision.wheelhouse import requirements_key
from tfmatrix.runners.docker import DockerRunner
from tfmatrix.runners.venv import VenvRunner


def _item(kind: str, name: str, size: int = 10, keys: tuple[str, ...] = ()) -> hygiene.Stored:
    return hygiene.Stored(kind, name, name, size, keys or (name,))


def test_what_no_user_names_is_prunable_and_each_used_thing_says_who_uses_it() -> None:
    uses = hygiene.Uses()
    uses.add("tfmatrix/tf2.15-cpu:abc", "matrix.toml: tf2.15-cpu")
    uses.add("tfmatrix/tf2.15-cpu:abc", "reports/cells (last run): tf2.15-cpu")
    uses.add("tfmatrix/tf2.15-cpu:abc", "matrix.toml: tf2.15-cpu")            # once
    stored = [_item(hygiene.IMAGE, "tfmatrix/tf2.15-cpu:abc", 2_000_000_000),
              _item(hygiene.IMAGE, "tfmatrix/tf2.15-cpu:old", 1_000_000_000),
              _item(hygiene.VENV, "/x/.nox/cell-gone", 300_000_000, ("cell-gone",))]
    entries = hygiene.plan(stored, uses)
    assert [(e.item.name, e.users, e.prunable) for e in entries] == [
        ("tfmatrix/tf2.15-cpu:abc", ("matrix.toml: tf2.15-cpu", "reports/cells (last run): tf2.15-cpu"), False),
        ("tfmatrix/tf2.15-cpu:old", (), True),
        ("/x/.nox/cell-gone", (), True)]
    assert hygiene.totals(entries) == (3_300_000_000, 1_300_000_000)
    lines = hygiene.table(entries)
    assert lines[1].split()[-1] == "unused" and "1.0 GB" in lines[1]
    base = hygiene.plan([_item(hygiene.BASE, "tfmatrix.local/library/python:3.11-slim-bookworm", 0)], uses)
    assert "  shared  " in hygiene.table(base)[0]          # every layer also a cell image's: nothing of its own


def _cell_doc(name: str, image: str, reqs: list[str], python: str) -> dict[str, Any]:
    return {"cell": {"name": name, "requirements": reqs, "python": python},
            "runner": {"name": "docker", "image": image, "inputs": image,
                       "base": "tfmatrix.local/library/python:3.11-slim-bookworm"}}


def test_a_kept_cell_file_uses_its_image_base_virtualenv_and_wheels(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    (reports / "releases" / "cells").mkdir(parents=True)
    doc = _cell_doc("tf2.1.4-keras2.3.1-cpu", "tfmatrix/tf2.1.4-keras2.3.1-cpu:1", ["tensorflow-cpu==2.1.4"], "3.7")
    (reports / "releases" / "cells" / "tf2.1.4-keras2.3.1-cpu.json").write_text(json.dumps(doc))
    key = requirements_key(["tensorflow-cpu==2.1.4"], "3.7")
    uses = hygiene.Uses()
    for path, who in hygiene.kept_cell_files(reports):
        loaded = hygiene.read_doc(path)
        assert loaded is not None
        hygiene.add_cell_doc(uses, loaded, f"{who}: {path.stem}", {key: ["tensorflow_cpu-2.1.4.whl"]})
    who = ["reports/releases/cells (bisect/timeline probe): tf2.1.4-keras2.3.1-cpu"]
    assert uses.by_key["tfmatrix/tf2.1.4-keras2.3.1-cpu:1"] == who
    assert uses.by_key["tfmatrix.local/library/python:3.11-slim-bookworm"] == who
    assert uses.by_key["cell-tf2.1.4-keras2.3.1-cpu"] == who
    assert uses.by_key["tensorflow_cpu-2.1.4.whl"] == who


def test_a_kept_cell_files_uv_built_wheel_set_counts_as_used(tmp_path: Path) -> None:
    """An image built with uv took its wheels from the set keyed with uv's wheel (``render.build_requirements``): a
    bisect probe's kept cell file keeps that set too, or `disk --prune` would remove the wheels its image needs."""
    from tfmatrix.matrix.releases import load_table

    doc = _cell_doc("tf2.15.1-cpu", "tfmatrix/tf2.15.1-cpu:1", ["tensorflow-cpu==2.15.1"], "3.11")
    uv_key = requirements_key([load_table().uv, "tensorflow-cpu==2.15.1"], "3.11")
    uses = hygiene.Uses()
    hygiene.add_cell_doc(uses, doc, "probe", {uv_key: ["uv-0.13.9.whl", "tensorflow_cpu-2.15.1.whl"]})
    assert uses.by_key["uv-0.13.9.whl"] == ["probe"] and uses.by_key["tensorflow_cpu-2.15.1.whl"] == ["probe"]


class _Images:
    def __init__(self) -> None:
        self.removed: list[str] = []

    def remove(self, image: str, noprune: bool = False) -> None:
        if image == "busy":
            raise RuntimeError("conflict: unable to remove repository reference (must force) - container 1 is using")
        self.removed.append(image)


class _Containers:
    def list(self, **_: Any) -> list[Any]:
        return []


class _Client:
    def __init__(self, images: list[dict[str, Any]]) -> None:
        self.images = _Images()
        self.containers = _Containers()
        self._df = {"Images": images, "LayersSize": 0}

    def df(self) -> dict[str, Any]:
        return self._df


def test_only_labelled_images_are_listed_and_a_busy_one_is_kept_with_its_reason(tmp_path: Path) -> None:
    client = _Client([
        {"Id": "sha256:cell", "RepoTags": ["tfmatrix/tf1.15-cpu:1"], "Labels": {hygiene.CELL_LABEL: "tf1.15-cpu"},
         "Size": 900, "SharedSize": 200},
        {"Id": "busy", "RepoTags": ["tfmatrix/victim:1"], "Labels": {hygiene.CELL_LABEL: "victim"},
         "Size": 900, "SharedSize": 200},
        {"Id": "sha256:theirs", "RepoTags": ["tfmatrix/looks-like-ours:1"], "Labels": {}, "Size": 5, "SharedSize": 0},
        {"Id": "sha256:base", "RepoTags": ["tfmatrix.local/library/python:3.7-slim-bookworm"],
         "Labels": {hygiene.BASE_LABEL: "local"}, "Size": 199, "SharedSize": 100},
    ])
    images, venvs = DockerRunner(client), VenvRunner(root=tmp_path / ".nox")      # disk asks each runner
    stored = images.kept()
    assert [(s.kind, s.name, s.size) for s in stored] == [
        (hygiene.IMAGE, "tfmatrix/tf1.15-cpu:1", 700), (hygiene.IMAGE, "tfmatrix/victim:1", 700),
        (hygiene.BASE, "tfmatrix.local/library/python:3.7-slim-bookworm", 99)]
    venv = tmp_path / ".nox" / "cell-old"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_bytes(b"x" * 5000)
    wheels = tmp_path / "wheels"
    (wheels / "manifests").mkdir(parents=True)
    (wheels / "old-1.0-py3-none-any.whl").write_bytes(b"w" * 100)
    (wheels / "kept-1.0-py3-none-any.whl").write_bytes(b"w" * 100)
    (wheels / "manifests" / "k1.json").write_text(json.dumps({"files": ["old-1.0-py3-none-any.whl"]}))
    (wheels / "manifests" / "k2.json").write_text(json.dumps({"files": ["kept-1.0-py3-none-any.whl"]}))
    uses = hygiene.Uses()
    uses.add("kept-1.0-py3-none-any.whl", "matrix.toml: x")
    uses.add("tfmatrix.local/library/python:3.7-slim-bookworm", "matrix.toml: x")
    stored += venvs.kept() + hygiene.wheel_stored(wheels)
    entries = hygiene.plan(stored, uses)
    owners = {item.ref: runner for runner in (images, venvs) for item in runner.kept()}
    gone, kept = hygiene.remove(entries, lambda item: owners[item.ref].remove(item), wheels)
    assert client.images.removed == ["sha256:cell"]                          # never "theirs"
    assert len(kept) == 1 and kept[0].startswith("image tfmatrix/victim:1: kept (RuntimeError: conflict")
    assert not venv.exists()
    assert sorted(p.name for p in wheels.iterdir()) == ["kept-1.0-py3-none-any.whl", "manifests"]
    assert [p.name for p in (wheels / "manifests").iterdir()] == ["k2.json"]   # a manifest whose files went
    assert {e.item.name for e in gone} == {"tfmatrix/tf1.15-cpu:1", str(venv), "old-1.0-py3-none-any.whl"}
