"""The venv runner: CPU cells in nox-managed virtualenvs with the host's interpreters."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from e2e import cell_docs, tfmatrix
from rich.console import Console

from tfmatrix import execution, interpreters
from tfmatrix.matrix import load
from tfmatrix.paths import DEFAULT_MATRIX, REPO_ROOT
from tfmatrix.runners.common import RunRequest
from tfmatrix.runners.venv import VenvRunner


@pytest.mark.tf
@pytest.mark.parametrize("name", ["tf1.15-cpu", "tf2.21-keras3-cpu"])
def test_venv_runner_produces_results_for_old_and_new_tf(venv_cell, name):
    doc = venv_cell(name)
    assert doc["status"] == "ok"
    runner = doc["runner"]
    assert runner["name"] == "venv" and runner["network"].startswith("host")
    assert Path(runner["venv"]) == REPO_ROOT / ".nox" / ("cell-" + name)
    assert Path(runner["interpreter"]).name == "python" + doc["cell"]["python"]
    results = doc["results"]
    assert results["cell"]["runner"] == "venv"
    assert results["environment"]["host"]["python"]["version"].startswith(doc["cell"]["python"])
    installed = results["environment"]["tf"]["packages"]
    # exactly the cell's pins
    for req in doc["cell"]["requirements"]:
        if "==" in req:
            pkg, version = req.split("==")
            assert installed[re.sub(r"[-_.]+", "-", pkg.split("[")[0]).lower()] == version, req
    assert (Path(runner["venv"]) / "tfmatrix-cell.json").is_file()


def test_gpu_cell_is_skipped_by_the_venv_runner(tmp_path):
    proc = tfmatrix("cell", "tf1.15-gpu", "--runner", "venv", "--reports", str(tmp_path))
    assert proc.returncode == 1                    # the one cell asked for did not run: say so, last
    assert proc.stderr.strip().splitlines()[-1].startswith("tfmatrix: error: cell tf1.15-gpu was skipped, nothing ran")
    doc = cell_docs(tmp_path)["tf1.15-gpu"]
    assert doc["status"] == "skipped" and "CPU cells only" in doc["reason"]
    assert doc["results"] is None and (tmp_path / "index.html").is_file()


def test_a_cell_without_an_interpreter_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(interpreters, "find", lambda minor: None)
    cell = load(DEFAULT_MATRIX).cell("tf1.15-cpu")
    (outcome,) = execution.execute([cell], VenvRunner(), RunRequest(), tmp_path,
                                   console=Console(file=io.StringIO()))
    assert outcome.status == "skipped" and outcome.reason.startswith("no CPython 3.7 on this host")
    doc = cell_docs(tmp_path)["tf1.15-cpu"]
    assert doc["status"] == "skipped" and doc["runner"]["name"] == "venv"
