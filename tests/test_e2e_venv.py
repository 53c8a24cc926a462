"""The venv runner: CPU cells in nox-managed virtualenvs with the host's interpreters."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from e2e import cell_docs, tfmatrix
from rich.console import Console

from tfmatrix.execution import dispatch as execution
from tfmatrix.execution import estimates
from tfmatrix.execution.request import RunRequest
from tfmatrix.matrix import load
from tfmatrix.paths import DEFAULT_MATRIX, REPO_ROOT
from tfmatrix.provision import interpreters
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


@pytest.mark.slow
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


@pytest.mark.tf
def test_processes_reaches_the_suite_and_each_variant_runs_in_that_many_fresh_processes(venv_cell, tmp_path):
    venv_cell("tf1.15-cpu")           # the virtualenv exists (built once per session)
    proc = tfmatrix("cell", "tf1.15-cpu", "--runner", "venv", "--preset", "quick", "--bench", "selfcheck*",
                    "--processes", "2", "--rounds", "3", "--reports", str(tmp_path))
    doc = cell_docs(tmp_path)["tf1.15-cpu"]
    assert proc.returncode == 0 and doc["status"] == "ok", (doc["reason"], proc.stderr[-2000:])
    assert doc["request"]["processes"] == 2
    ok = [r for r in doc["results"]["records"] if r["status"] == "ok"]
    rounds = doc["results"]["config"]["rounds"]    # interleaved: each round runs the slice in 2 fresh processes
    assert rounds == 3 and ok and all(len(r["per_process"]) == 2 * rounds for r in ok)


def test_processes_is_part_of_the_request_and_the_suites_arguments_only_when_asked():
    from types import SimpleNamespace

    cell = SimpleNamespace(name="c", target="cpu", preset="seed", repeats=None)
    plain, three = RunRequest(), RunRequest(processes=3)
    assert "processes" not in plain.for_cell(cell).to_json() \
        and "--processes" not in plain.job(cell).suite_args("o", None, "v")
    assert three.for_cell(cell).to_json()["processes"] == 3
    args = three.job(cell).suite_args("o", None, "v")
    assert args[args.index("--processes") + 1] == "3"


def test_the_estimate_scales_with_the_processes_asked_for(tmp_path):
    cell = load(DEFAULT_MATRIX).cell("tf1.15-cpu")
    last = estimates.last_runs(tmp_path, [cell.name])
    one = estimates.cell_estimates([RunRequest().job(cell)], RunRequest(), last)["tf1.15-cpu"]
    three = estimates.cell_estimates([RunRequest(processes=3).job(cell)], RunRequest(processes=3), last)[
        "tf1.15-cpu"]
    assert three - estimates.ESTIMATE_SETUP_S == pytest.approx(3 * (one - estimates.ESTIMATE_SETUP_S))


def test_processes_out_of_range_is_one_line_and_exit_2(tmp_path):
    proc = tfmatrix("cell", "tf1.15-cpu", "--processes", "0", "--reports", str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "--processes" in proc.stderr


@pytest.mark.tf
def test_an_existing_environment_is_measured_as_it_is_fingerprinted_and_reused(venv_cell, tmp_path):
    """The tf1.15-cpu virtualenv taken as an environment someone already has (``cell NAME --python PATH``): the suite
    runs in it with real TensorFlow, its fingerprint says what is installed, and an unchanged one is reused."""
    venv_cell("tf1.15-cpu")           # the virtualenv exists (built once per session)
    python = REPO_ROOT / ".nox" / "cell-tf1.15-cpu" / "bin" / "python"
    args = ("cell", "prod", "--python", str(python), "--preset", "quick", "--bench", "selfcheck*", "--rounds", "2",
            "--reports", str(tmp_path))
    proc = tfmatrix(*args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = cell_docs(tmp_path)["prod"]
    assert doc["status"] == "ok", (doc["reason"], doc["log_tail"][-3000:])
    assert doc["runner"]["name"] == "existing" and doc["runner"]["interpreter"] == str(python)
    results = doc["results"]
    assert results["environment"]["tf"]["tensorflow"]["version"].startswith("1.15")
    assert results["environment"]["host"]["python"]["executable"] == str(python)
    assert any(r["status"] == "ok" for r in results["records"])
    assert doc["runner"]["inputs"].startswith("existing-")
    matrix = tmp_path / "matrix.toml"         # the same environment as a matrix cell: its results are kept
    matrix.write_text('[[cell]]\nname = "prod"\npython = "%s"\n' % python)
    written = (tmp_path / "cells" / "prod.json").stat().st_mtime_ns
    again = tfmatrix("matrix", "--matrix", str(matrix), "--preset", "quick", "--bench", "selfcheck*", "--rounds", "2",
                     "--reports", str(tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    assert (tmp_path / "cells" / "prod.json").stat().st_mtime_ns == written


@pytest.mark.tf
def test_a_budget_smaller_than_a_round_measures_round_1_and_says_which_lines_it_left_open(venv_cell, tmp_path):
    """A short loan, for real (``--budget``, as scripts/gpu_check.py runs it): the Keras 3 virtualenv as an existing
    environment, the claims' variants in sequential rounds within a budget of one second. Round 1 always runs
    whole; after it no time is left (whatever this host's speed), so every line stops after round 1: decided or
    the same at the look on the shipped prior (``analysis.runs.prior``), or, where it is still open (the quick
    preset's variants the prior does not know), with the budget as its why, in the cell file and the report; and
    nothing is measured again."""
    venv_cell("tf2.21-keras3-cpu")
    python = REPO_ROOT / ".nox" / "cell-tf2.21-keras3-cpu" / "bin" / "python"
    matrix = tmp_path / "matrix.toml"
    matrix.write_text('[[cell]]\nname = "loan"\npython = "%s"\n' % python)
    proc = tfmatrix("matrix", "--matrix", str(matrix), "--preset", "quick", "--variants", "claims", "--rounds",
                    "auto", "--budget", "1s", "--runner", "venv", "--reports", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "within 0:01 (round 1 whole, later rounds where they fit)" in proc.stderr
    doc = cell_docs(tmp_path)["loan"]
    seq = doc["results"]["config"]["schedule"]["sequential"]
    assert seq["budget_s"] == 1.0 and seq["lines"]
    whys = [row[5] for row in seq["lines"]]
    assert all(row[4] == 1 for row in seq["lines"]), seq["lines"]
    budget = [w for w in whys if w.startswith("still open after round 1: the budget left 0:00")]
    assert budget and all(w in budget or w == "decided after round 1" or w.endswith("after round 1: more rounds "
                                                                                      "would not change it")
                          for w in whys), whys
    assert doc["results"]["config"]["rounds"] == 1
    assert "round 2 measures 0 of" in proc.stderr
    assert "the budget left" in (tmp_path / "index.html").read_text()


SERIES_FILE = '''"""A user's own file: four NumPy cases, no claim names them."""
from suite.api import UserBenchmark


class Work(UserBenchmark):
    name = "mine.work"
    params = {"kind": ["sum", "sort"], "case": [0, 1]}
    apis = ("tf",)

    def setup(self, p, env):
        import numpy as np
        x = env.rng(p["case"]).rand(96, 96)
        work = {"sum": lambda: np.sum(x * x), "sort": lambda: np.sort(x, axis=None)}[p["kind"]]

        def step():
            for _ in range(10):
                work()
        return step


BENCHMARKS = [Work()]
'''


@pytest.mark.tf
def test_a_file_no_claim_names_takes_the_rounds_its_series_needs(venv_cell, tmp_path):
    """Issue 63, for real: a user's file of four cases and no claim, sequential rounds, three runs into one reports
    folder. The first two are the first runs of the series (fewer than two kept runs to judge a change against):
    three rounds each, said in the opening line and in each line's why. The third judges each case against its two
    kept runs: the opening line says so, and every line ends decided, the same or open (never the first's why)."""
    venv_cell("tf2.21-keras3-cpu")
    python = REPO_ROOT / ".nox" / "cell-tf2.21-keras3-cpu" / "bin" / "python"
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "mine.py").write_text(SERIES_FILE)
    matrix = tmp_path / "matrix.toml"
    matrix.write_text('[suite]\npaths = ["benchmarks/"]\n\n[[cell]]\nname = "mine"\npython = "%s"\n' % python)
    whys = []
    for run in range(3):
        proc = tfmatrix("matrix", "--matrix", str(matrix), "--preset", "quick", "--bench", "mine.*", "--rounds",
                        "auto", "--reports", str(tmp_path / "reports"), "--redo")
        assert proc.returncode == 0, proc.stderr[-3000:]
        opening = proc.stderr.splitlines()[0]
        seq = cell_docs(tmp_path / "reports")["mine"]["results"]["config"]["schedule"]["sequential"]
        assert {row[0] for row in seq["lines"]} == {"series"} and len(seq["lines"]) == 4
        whys.append([row[5] for row in seq["lines"]])
        if run < 2:
            assert f"the first runs of their series here ({run} kept), 3 rounds" in opening, opening
            assert all(w == "the first runs of its series: 3 rounds, for later runs to be compared with"
                       for w in whys[-1]), whys
            assert "4 the first runs of their series; done" in proc.stderr
        else:
            assert "each judged against its 2 kept runs" in opening, opening
            assert not any("first runs" in w for w in whys[-1]) and all(
                w.startswith(("decided after round", "still open after round")) or "within 10%" in w
                for w in whys[-1]), whys
