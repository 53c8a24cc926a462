"""Your own benchmarks on the host: [suite]/[report] validation, the content hash in the request, mounts."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from suite.schema import PLUGINS_ENV
from tfmatrix.cli import main
from tfmatrix.execution import dispatch as execution
from tfmatrix.execution.request import RunRequest
from tfmatrix.matrix import load
from tfmatrix.matrix.user_benchmarks import BENCH_MOUNT, files_hash
from tfmatrix.provision.render import render_cell
from tfmatrix.results.store import CellOutcome, load_cell
from tfmatrix.runners import docker as docker_runner
from tfmatrix.runners.base import Runner
from tfmatrix.runners.common import requirements_failure

CELLS = """
[[cell]]
tf = "2.15"
[[cell]]
tf = "2.21"
keras = "keras3"
"""


@pytest.fixture
def bench_dir(tmp_path: Path) -> Path:
    d = tmp_path / "benchmarks"
    d.mkdir()
    (d / "models.py").write_text("BENCHMARKS = []\n")
    return d


# --------------------------------------------------------------------------- matrix.toml


def test_suite_and_report_tables_are_read(load_snippet, bench_dir):
    m = load_snippet('[suite]\npaths = ["benchmarks/"]\nrequirements = ["six==1.16.0"]\n'
                     '[report]\ncompare = ["tf2.15-cpu", "tf2.21-cpu"]\n' + CELLS)
    assert m.settings.bench_paths == (bench_dir.resolve(),)
    assert m.settings.compare == ("tf2.15-cpu", "tf2.21-keras3-cpu")
    for cell in m.cells:
        assert cell.requirements[-1] == "six==1.16.0" and cell.user_requirements == ("six==1.16.0",)


@pytest.mark.parametrize("snippet, expected", [
    ('[suite]\npath = ["b/"]', "matrix.toml: [suite]: key 'path': unknown [suite] key; did you mean 'paths'?"),
    ('[suite]\npaths = "benchmarks/"', "matrix.toml: [suite]: key 'paths': expected an array of strings; "
                                       'write paths = ["benchmarks/"]'),
    ('[suite]\npaths = ["missing/"]', "matrix.toml: [suite]: key 'paths': missing/ does not exist"),
    ('[suite]\npaths = ["benchmarks/", "benchmarks"]', "key 'paths': 'benchmarks' is listed twice"),
    ('[suite]\nrequirements = ["transformers"]', "matrix.toml: [suite]: key 'requirements': 'transformers' is not "
                                                 "a requirement with a version specifier"),
    ('[suite]\nrequirements = ["x==1; rm -rf /"]', "key 'requirements'"),
    ('[report]\ncompare = ["tf2.15-cpu"]', "matrix.toml: [report]: key 'compare': expected two different cell "
                                           "names, got 1"),
    ('[report]\ncompare = ["tf2.15-cpu", "tf2.9-cpu"]', "matrix.toml: [report]: key 'compare': no cell named "
                                                        "'tf2.9-cpu'; did you mean"),
    ('[report]\ncompare = ["tf2.15-cpu", "tf2.15"]', "key 'compare': both names mean tf2.15-cpu"),
    ('[reports]\ncompare = []', "matrix.toml: top level: key 'reports': unknown table; did you mean 'report'?"),
])
def test_bad_suite_and_report_tables_are_one_line_errors(error_of, bench_dir, snippet, expected):
    assert expected in error_of(snippet + "\n" + CELLS)


def test_a_file_path_must_be_python(error_of, bench_dir):
    (bench_dir / "notes.txt").write_text("x")
    assert "notes.txt is not a .py file" in error_of('[suite]\npaths = ["benchmarks/notes.txt"]\n' + CELLS)


def test_requirements_change_the_image_tag_and_are_labelled(load_snippet):
    plain = load_snippet(CELLS).cells[0]
    extra = load_snippet('[suite]\nrequirements = ["six==1.16.0"]\n' + CELLS).cells[0]
    a, b = render_cell(plain), render_cell(extra)
    assert a.tag != b.tag
    text = b.files["requirements.txt"]
    assert text.endswith("# [suite] requirements from matrix.toml: what your own benchmarks import\nsix==1.16.0\n")
    assert requirements_failure(plain, "boom") == "boom"
    assert "[suite] requirements six==1.16.0" in requirements_failure(extra, "pip could not resolve")


def test_bench_path_on_the_command_line_is_checked_first(matrix_file, capsys):
    path = matrix_file(CELLS)
    assert main(["cell", "tf2.15-cpu", "--matrix", str(path), "--bench-path", "nowhere/"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tfmatrix: error: --bench-path nowhere/: nowhere/ does not exist") and "\n" not in err


# --------------------------------------------------------------------------- the hash decides


def test_files_hash_follows_content_not_mtime(bench_dir):
    h = files_hash([bench_dir])
    assert h and files_hash([bench_dir]) == h
    (bench_dir / "models.py").touch()
    assert files_hash([bench_dir]) == h
    (bench_dir / "__pycache__").mkdir()
    (bench_dir / "__pycache__" / "models.cpython-311.pyc").write_bytes(b"\0")
    assert files_hash([bench_dir]) == h
    (bench_dir / "helpers.py").write_text("X = 1\n")
    assert files_hash([bench_dir]) != h
    assert files_hash([]) == ""


class _Runner(Runner):
    name = "scripted"

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def inputs(self, cell: Any) -> str:
        return "inputs-v1"

    def skip_reason(self, cell: Any) -> str | None:
        return None

    def run_cell(self, job: Any, log: Any, progress: Any) -> CellOutcome:
        cell = job.cell
        from report_docs import noisy, record, results_doc

        self.calls.append(job)
        rec = record("own.sum", {"n": 10, "api": "tf", "mode": "eager"}, noisy(1e-3), seed="user")
        return CellOutcome(cell.name, "ok", None, {"name": "scripted", "inputs": "inputs-v1"}, {"run_s": 1.0},
                           results_doc([rec], tf="2.15.1", cell=cell.name))


class _Cell:
    name, target, preset, repeats, existing = "tf2.15-cpu", "cpu", "quick", None, False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tf": "2.15", "target": self.target, "preset": self.preset}


def test_an_edited_benchmark_file_re_runs_and_an_unchanged_one_is_kept(tmp_path, bench_dir):
    reports = tmp_path / "reports"

    def run() -> int:
        runner = _Runner()
        execution.execute([_Cell()], runner, RunRequest(bench_paths=(bench_dir,)).stamped(), reports, redo=False)
        return len(runner.calls)

    assert run() == 1
    doc = load_cell(reports / "cells" / "tf2.15-cpu.json")
    assert doc is not None and doc.request["bench"] == files_hash([bench_dir])
    assert run() == 0                                        # unchanged: kept
    (bench_dir / "models.py").write_text("BENCHMARKS = []  # edited\n")
    assert run() == 1                                        # edited: re-run
    assert run() == 0


def test_without_user_benchmarks_the_request_is_what_it_was():
    assert "bench" not in RunRequest().for_cell(_Cell()).to_json()
    assert RunRequest(bench_paths=(Path("/x"),), bench="abc").for_cell(_Cell()).to_json()["bench"] == "abc"


# --------------------------------------------------------------------------- where cells see the files


def test_docker_mounts_each_path_read_only_and_names_it_for_the_suite(load_snippet, bench_dir, tmp_path):
    single = tmp_path / "one.py"
    single.write_text("BENCHMARKS = []\n")
    cell = load_snippet(CELLS).cells[0]
    request = docker_runner.run_request(cell, "img", tmp_path, ["run"], [bench_dir, single])
    mounts = {m["Target"]: m for m in request["mounts"]}
    assert mounts[f"{BENCH_MOUNT}/0"]["Source"] == str(bench_dir) and mounts[f"{BENCH_MOUNT}/0"]["ReadOnly"]
    assert mounts[f"{BENCH_MOUNT}/1/one.py"]["Source"] == str(single) and mounts[f"{BENCH_MOUNT}/1/one.py"]["ReadOnly"]
    assert request["environment"][PLUGINS_ENV] == f"{BENCH_MOUNT}/0:{BENCH_MOUNT}/1/one.py"
    plain = docker_runner.run_request(cell, "img", tmp_path, ["run"])
    assert PLUGINS_ENV not in plain["environment"] and len(plain["mounts"]) == 2


def test_suite_paths_and_claims_outside_the_matrix_folder_are_one_warning_line_each(tmp_path, monkeypatch, capsys):
    """Allowed (a shared folder may live elsewhere), but said: ``paths = ["/etc"]`` mounts /etc into every cell."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "bench").mkdir(parents=True)
    (elsewhere / "claims.toml").write_text("")
    here = tmp_path / "project"
    (here / "benchmarks").mkdir(parents=True)
    (here / "claims.toml").write_text("")
    matrix = here / "matrix.toml"
    matrix.write_text('[suite]\npaths = ["benchmarks/", "../elsewhere/bench", "/etc"]\n'
                      'claims = ["claims.toml", "../elsewhere/claims.toml"]\n' + CELLS)
    monkeypatch.chdir(here)
    m = load(matrix, environ={})
    assert m.settings.bench_paths[2] == Path("/etc")          # accepted: a user may mean it
    folder = here.resolve()
    assert m.warnings == (
        f"matrix.toml: [suite]: key 'paths': '{elsewhere.resolve() / 'bench'}' is outside the matrix file's folder "
        f"({folder}); every cell mounts it read-only: move it beside the matrix file unless you mean it",
        f"matrix.toml: [suite]: key 'paths': '/etc' is outside the matrix file's folder ({folder}); every cell "
        "mounts it read-only: move it beside the matrix file unless you mean it",
        f"matrix.toml: [suite]: key 'claims': '{elsewhere.resolve() / 'claims.toml'}' is outside the matrix file's "
        f"folder ({folder}); the report reads and shows its claims: move it beside the matrix file unless you mean it")
    assert main(["validate", "--matrix", "matrix.toml"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and all(line.startswith("tfmatrix: warning: matrix.toml: [suite]: key '") for line in err)
    assert "'/etc' is outside the matrix file's folder" in err[1]


def test_suite_paths_inside_the_matrix_folder_warn_nothing(load_snippet, bench_dir):
    (bench_dir / "deeper").mkdir()
    assert load_snippet('[suite]\npaths = ["benchmarks/", "./benchmarks/deeper"]\n' + CELLS).warnings == ()
