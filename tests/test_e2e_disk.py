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
from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.docker
OURS, THEIRS = "tfmatrix/disk-test-unused:1", "tfmatrix/disk-test-theirs:1"


@pytest.fixture
def images(tmp_path: Path) -> Any:
    client = docker_engine.engine()
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


def test_a_damaged_wheel_is_fetched_again_before_a_build_uses_it(tmp_path: Path) -> None:
    """tf1.15-cpu's real wheel set copied into a wheelhouse of its own, one small wheel altered in place (same size,
    one byte: only its SHA-256 tells): `wheels` finds it, fetches it from PyPI again and says so; offline, the same
    damage is one line naming the wheel."""
    import shutil
    import subprocess
    import sys

    from e2e import ROOT

    from tfmatrix.matrix import load
    from tfmatrix.provision import wheelhouse

    cell = load(ROOT / "tests" / "matrices" / "docker.toml", environ={}).cell("tf1.15-cpu")
    reqs = (*cell.bootstrap, *cell.requirements)
    real = wheelhouse.ensure(reqs, cell.python, log=lambda line: None)      # the machine's cache (fetched if need be)
    own = tmp_path / "wheels"
    own.mkdir()
    for f in real.files:
        shutil.copy2(f, own / f.name)
    assert wheelhouse.ensure(reqs, cell.python, root=own, log=lambda line: None).downloaded == 0
    victim = min((own / f.name for f in real.files), key=lambda p: p.stat().st_size)
    good = victim.read_bytes()

    def damage() -> None:
        victim.write_bytes(good[:100] + bytes([good[100] ^ 0xFF]) + good[101:])

    def wheels(*extra: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, wheelhouse.WHEELHOUSE_ENV: str(own)}
        return subprocess.run([sys.executable, "-m", "tfmatrix", "wheels", "--matrix",
                               str(ROOT / "tests" / "matrices" / "docker.toml"), "--only", "tf1.15-cpu", *extra],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)

    damage()
    online = wheels()
    assert online.returncode == 0, online.stderr[-3000:]
    assert f"damaged and fetched again: {victim.name}" in online.stdout, online.stdout
    assert victim.read_bytes() == good
    damage()
    offline = wheels("--offline")
    assert offline.returncode == 1 and "Traceback" not in offline.stderr, offline.stderr[-3000:]
    lines = offline.stderr.strip().splitlines()
    assert len(lines) == 1 and victim.name in lines[0] and "is damaged" in lines[0], offline.stderr
