"""Existing environments as cells (``python = "/path/bin/python"``, ``cell NAME --python PATH``): resolved, listed,
routed to the existing runner whatever ``--runner`` says, reused only while their packages are unchanged, and a GPU
cell proven on its GPU (a fake one here: the stand-in TensorFlow with one fake GPU; no GPU on this machine)."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tfmatrix.matrix import Matrix
from tfmatrix.runners.existing import ExistingRunner, WithExisting

ROOT = Path(__file__).resolve().parent.parent
FAKE_TF = ROOT / "tests" / "fake_tf"
FAULTS = ROOT / "tests" / "suite_plugins" / "faults.py"


def test_a_cell_naming_an_interpreter_path_is_an_existing_environment(load_snippet: Callable[..., Matrix]) -> None:
    m = load_snippet('[[cell]]\npython = "/opt/conda/envs/prod/bin/python"\n[[cell]]\ntf = "2.15"\n')
    cell = m.cells[0]
    assert cell.existing and cell.interpreter == "/opt/conda/envs/prod/bin/python"
    assert cell.name == "prod-existing-cpu" and cell.requirements == () and cell.tf == ""
    assert m.settings.baseline == "tf2.15-cpu"                 # never an environment whose TF is unknown
    named = load_snippet('[[cell]]\npython = "/usr/bin/python3"\nname = "system"\ntarget = "gpu"\n').cells[0]
    assert (named.name, named.target, named.to_dict()["interpreter"]) == ("system", "gpu", "/usr/bin/python3")


@pytest.mark.parametrize(("body", "message"), [
    ('[[cell]]\npython = "/opt/env/bin/python"\ntf = "2.15"\n',
     "matrix.toml: cell[0]: key 'tf': an existing environment is measured as it is: tfmatrix installs nothing into "
     "it; remove tf, or make it a cell tfmatrix builds (python = \"3.X\" and tf = ...)"),
    ('[[cell]]\npython = "envs/tf/bin/python"\n',
     "matrix.toml: cell[0]: key 'python': 'envs/tf/bin/python' is not an absolute path to an interpreter; write "
     "python = \"/path/to/env/bin/python\" (an existing environment) or a version like \"3.11\" (a cell tfmatrix "
     "builds)"),
])  # fmt: skip
def test_what_an_existing_environment_cannot_take_is_one_line(error_of: Callable[..., str], body: str,
                                                               message: str) -> None:
    assert error_of(body) == message


class _Built:
    name, slots, interleaves = "docker", 1, True

    def skip_reason(self, cell: Any) -> str | None:
        return None

    def inputs(self, cell: Any) -> str:
        return "image"


def _fake_interpreter(tmp_path: Path, packages: str, gpus: int = 0) -> Path:
    """An "environment" whose python is a wrapper: the host's Python with the stand-in TensorFlow on its path."""
    listing = tmp_path / "packages.txt"
    listing.write_text(packages)
    script = tmp_path / "env" / "bin" / "python"
    script.parent.mkdir(parents=True)
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "-c" ] && [ "${{2#import sys}}" != "$2" ]; then echo 3.11.2; cat {listing}; exit 0; fi\n'
        f'PYTHONPATH="{FAKE_TF}:$PYTHONPATH" TFMATRIX_FAKE_GPUS={gpus} TFMATRIX_SUITE_PLUGINS={FAULTS} '
        f'exec {sys.executable} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_existing_cells_go_to_the_existing_runner_and_are_reused_while_their_packages_are_the_same(
        tmp_path: Path, load_snippet: Callable[..., Matrix]) -> None:
    python = _fake_interpreter(tmp_path, "tensorflow==2.99.0\n")
    m = load_snippet(f'[[cell]]\npython = "{python}"\nname = "mine"\n[[cell]]\ntf = "2.15"\n')
    runner = WithExisting(_Built())      # type: ignore[arg-type]
    mine, built = m.cells
    assert runner.inputs(built) == "image" and runner.inputs(mine).startswith("existing-")
    before = ExistingRunner().inputs(mine)
    (tmp_path / "packages.txt").write_text("tensorflow==2.99.1\n")
    assert ExistingRunner().inputs(mine) != before                       # an upgrade in place: measured again
    gone = load_snippet('[[cell]]\npython = "/nowhere/bin/python"\n').cells[0]
    assert runner.skip_reason(gone) == ("the existing environment's interpreter /nowhere/bin/python is not an "
                                        "executable file on this host")


@pytest.mark.parametrize(("gpus", "status"), [(1, "ok"), (0, "failed")])
def test_a_gpu_environment_runs_on_its_gpu_or_fails_loudly(tmp_path: Path, gpus: int, status: str) -> None:
    """``cell NAME --python PATH --target gpu`` end to end through the CLI, on the stand-in TensorFlow with one fake
    GPU (no GPU on this machine): the fingerprint names the device; without it the cell is an error, never a CPU
    result."""
    python = _fake_interpreter(tmp_path, "tensorflow==2.99.0\n", gpus=gpus)
    reports = tmp_path / "reports"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TFMATRIX_")}
    proc = subprocess.run([sys.executable, "-m", "tfmatrix", "cell", "mine", "--python", str(python), "--target",
                           "gpu", "--only", "faults.ok1", "--rounds", "1", "--reports", str(reports), "--preset",
                           "quick", "--runner", "venv"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    doc = json.loads((reports / "cells" / "mine.json").read_text())
    assert doc["status"] == status, (proc.stderr[-3000:], doc.get("reason"))
    assert doc["runner"]["name"] == "existing" and doc["cell"]["interpreter"] == str(python)
    if gpus:
        assert doc["results"]["gpu"]["visible"] and doc["results"]["gpu"]["ok"]
    else:
        assert "GPU" in (doc["reason"] or "")
