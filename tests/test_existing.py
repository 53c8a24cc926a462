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
    name, slots, interleaves, builds_at_once = "docker", 1, True, 1

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
@pytest.mark.slow
def test_a_gpu_environment_runs_on_its_gpu_or_fails_loudly(tmp_path: Path, gpus: int, status: str) -> None:
    """``cell NAME --python PATH --target gpu`` end to end through the CLI, on the stand-in TensorFlow with one fake
    GPU (no GPU on this machine): the fingerprint names the device; without it the cell is an error, never a CPU
    result."""
    python = _fake_interpreter(tmp_path, "tensorflow==2.99.0\n", gpus=gpus)
    reports = tmp_path / "reports"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TFMATRIX_")}
    proc = subprocess.run([sys.executable, "-m", "tfmatrix", "cell", "mine", "--python", str(python), "--target",
                           "gpu", "--bench", "faults.ok1", "--rounds", "1", "--reports", str(reports), "--preset",
                           "quick", "--runner", "venv"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    doc = json.loads((reports / "cells" / "mine.json").read_text())
    assert doc["status"] == status, (proc.stderr[-3000:], doc.get("reason"))
    opening = next(line for line in proc.stderr.splitlines() if "to run," in line)
    assert opening == ("[tfmatrix] 1 existing environment (1 GPU) beside 0 cells of the venv runner, interleaved in "
                       "1 round; 1 to run, time unknown (1 existing environment never run here)")
    assert doc["runner"]["name"] == "existing" and doc["cell"]["interpreter"] == str(python)
    if gpus:
        assert doc["results"]["gpu"]["visible"] and doc["results"]["gpu"]["ok"]
    else:
        assert "GPU" in (doc["reason"] or "")


# -- the words a run and its report say of existing environments ---------------------------------------------------

def test_the_opening_line_counts_existing_environments_apart_from_the_runners_cells(
        tmp_path: Path, load_snippet: Callable[..., Matrix]) -> None:
    from tfmatrix.execution.dispatch import cells_text, unknown_estimates
    from tfmatrix.execution.request import RunRequest

    two = load_snippet('[[cell]]\npython = "/opt/a/bin/python"\ntarget = "gpu"\nname = "a"\n'
                       '[[cell]]\npython = "/opt/b/bin/python"\ntarget = "gpu"\nname = "b"\n').cells
    assert cells_text(two, "docker") == "2 existing environments (2 GPU) beside 0 cells of the docker runner"
    built = load_snippet('[[cell]]\ntf = "2.15"\n').cells
    assert cells_text(built, "docker") == "1 cell (1 CPU) with the docker runner"
    assert cells_text([*two[:1], *built], "venv") == "1 existing environment (1 GPU) beside 1 cell (1 CPU) of the " \
                                                     "venv runner"
    assert unknown_estimates([RunRequest(preset="quick").job(c) for c in (*two, *built)], {}) == ["a", "b"]


def test_the_venv_fallback_note_is_not_said_when_only_existing_environments_run(
        monkeypatch: pytest.MonkeyPatch, load_snippet: Callable[..., Matrix]) -> None:
    import io

    from rich.console import Console

    from tfmatrix.runners import choose as dispatch
    from tfmatrix.runners.local import NO_ENGINE

    monkeypatch.setattr(dispatch, "local_runner", lambda kind, registry: (_Built(), NO_ENGINE))
    gpu_envs = load_snippet('[[cell]]\npython = "/opt/a/bin/python"\ntarget = "gpu"\n').cells
    built = load_snippet('[[cell]]\ntf = "2.15"\n').cells
    for cells, said in ((gpu_envs, False), (built, True), (None, True)):
        out = io.StringIO()
        dispatch.make_runner("auto", None, Console(file=out, width=300), cells=cells)
        assert ("CPU cells only" in out.getvalue()) is said


def _jax_gpu_cell(tmp_path: Path) -> Any:
    """A JAX environment asked for the GPU that saw none, as the suite writes it."""
    from report_docs import cell_doc, results_doc, write

    from tfmatrix.analysis.cells import load_file

    results = results_doc([], tf="2.15.1", target="gpu", gpus=[])
    results["environment"]["tf"].update(tensorflow=None, backend={"name": "jax", "version": "0.4.30"})
    doc = cell_doc("keras3-jax-h200", "", status="failed", target="gpu", results=results, reason="no GPU")
    return load_file(write(tmp_path, doc))


def test_a_gpu_cell_without_a_gpu_names_its_framework_and_its_tf_column_is_a_dash(tmp_path: Path) -> None:
    from tfmatrix.report.environment_view import env_row

    cell = _jax_gpu_cell(tmp_path)
    assert cell.gpu_problem == "GPU cell keras3-jax-h200 ran WITHOUT a GPU: JAX saw none"
    assert not cell.has_tf and cell.label.startswith("no TF, Keras 3 on jax")
    assert env_row(cell)["tf"] == "-"


def test_a_gpu_cell_skipped_for_want_of_a_gpu_runtime_names_the_existing_environment_way(
        monkeypatch: pytest.MonkeyPatch, load_snippet: Callable[..., Matrix]) -> None:
    from tfmatrix.runners import engine as docker
    from tfmatrix.runners.venv import VenvRunner

    class _Engine:
        def info(self) -> dict[str, Any]:
            return {"Runtimes": {"runc": {}}}

    monkeypatch.setattr(docker.shutil, "which", lambda name: None)
    why = docker.gpu_support(_Engine())
    assert why is not None and why.startswith("the Docker engine has no NVIDIA runtime")
    assert "--python /path/to/env/bin/python --target gpu" in why and 'target = "gpu" in a [[cell]]' in why
    gpu_cell = load_snippet('[[cell]]\ntf = "2.15"\ntarget = "gpu"\n').cells[0]
    assert "--target gpu" in (VenvRunner().skip_reason(gpu_cell) or "")


def test_an_environment_that_holds_another_backend_release_is_refused_before_it_runs(
        load_snippet: Callable[..., Matrix]) -> None:
    """``jax = "0.6"`` on an existing environment: what it holds is read from the interpreter itself (this one holds
    no jax), and a mismatch is one line naming the cell, the key and the fix."""
    from tfmatrix.errors import UserError
    from tfmatrix.runners.existing import check_release

    cell = load_snippet(f'[[cell]]\npython = "{sys.executable}"\njax = "0.6"\n').cells[0]
    assert (cell.backend, cell.backend_version) == ("jax", "0.6") and dict(cell.env)["KERAS_BACKEND"] == "jax"
    with pytest.raises(UserError) as e:
        ExistingRunner().inputs(cell)
    assert str(e.value) == (f"matrix.toml: cell[0]: key 'jax': the existing environment {sys.executable} holds no jax, "
                            f"not jax 0.6; remove jax, or point python at an environment that holds jax 0.6")
    held = "3.11.7\njax==0.6.1\njaxlib==0.6.1\nkeras==3.10.0"
    check_release(cell, held)                                     # any 0.6 patch holds "0.6"
    with pytest.raises(UserError, match="holds jax 0.10.2, not jax 0.6"):
        check_release(cell, held.replace("0.6.1", "0.10.2"))


@pytest.mark.slow
def test_the_command_refuses_an_environment_that_holds_another_release_with_exit_2(tmp_path: Path) -> None:
    """The same through ``tfmatrix matrix``: one line naming the file, the cell and the key, exit 2, nothing run."""
    from e2e import tfmatrix

    (tmp_path / "m.toml").write_text(f'[[cell]]\npython = "{sys.executable}"\njax = "0.6"\nname = "mine"\n')
    done = tfmatrix("matrix", "--matrix", str(tmp_path / "m.toml"), "--reports", str(tmp_path / "reports"),
                    "--bench", "tensor_ops.*")
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (
        f"tfmatrix: error: {tmp_path / 'm.toml'}: cell[0]: key 'jax': the existing environment {sys.executable} "
        "holds no jax, not jax 0.6; remove jax, or point python at an environment that holds jax 0.6")
    assert not (tmp_path / "reports" / "cells" / "mine.json").exists()
