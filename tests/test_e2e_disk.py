"""``disk`` and ``disk --prune`` on a real Docker engine: what it lists, what it frees, what it never touches.

Two small images built here FROM scratch (a 20 MB file each, so their layers are their own): one carries tfmatrix's
cell label and is used by nothing, the other is another program's (no label) under a tag that looks like ours.
``--only`` keeps the test to them (the machine's real cells are left alone).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from e2e import require, tfmatrix

from tfmatrix.provision.hygiene import CELL_LABEL
from tfmatrix.runners import docker as docker_runner

pytestmark = pytest.mark.docker
OURS, THEIRS = "tfmatrix/disk-test-unused:1", "tfmatrix/disk-test-theirs:1"


@pytest.fixture
def images(tmp_path: Path) -> Any:
    client = docker_runner.engine()
    require(client is not None, "no Docker engine answers (scripts/host-setup installs and starts one)")
    for tag, labels in ((OURS, {CELL_LABEL: "disk-test-unused"}), (THEIRS, {})):
        ctx = tmp_path / tag.split("/")[1].split(":")[0]
        ctx.mkdir()
        (ctx / "blob").write_bytes(os.urandom(20 * 10**6))
        (ctx / "Dockerfile").write_text("FROM scratch\nCOPY blob /blob\n")
        client.images.build(path=str(ctx), tag=tag, labels=labels, rm=True)
    yield client
    for tag in (OURS, THEIRS):
        try:
            client.images.remove(tag, force=True)
        except Exception:
            pass


def _tags(client: Any) -> set[str]:
    return {t for img in client.images.list() for t in img.tags}


def test_prune_frees_what_it_said_and_never_another_programs_image(images: Any, tmp_path: Path) -> None:
    args = ["--only", "tfmatrix/disk-test-*", "--reports", str(tmp_path / "reports")]
    listed = tfmatrix("disk", *args)
    assert listed.returncode == 0, listed.stderr[-2000:]
    [line] = [ln for ln in listed.stdout.splitlines() if OURS in ln]
    assert line.split()[0] == "image" and line.rstrip().endswith("unused") and "20 MB" in line
    assert THEIRS not in listed.stdout                                  # not ours: never listed
    pruned = tfmatrix("disk", "--prune", *args)
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr[-2000:]
    said = re.search(r"pruned 1 of 1: freed (\d+) MB \(listed as (\d+) MB", pruned.stdout)
    assert said is not None, pruned.stdout
    freed, listed_mb = int(said.group(1)), int(said.group(2))
    assert listed_mb == 20 and 19 <= freed <= 22                        # freed what it said
    tags = _tags(images)
    assert OURS not in tags and THEIRS in tags
