"""Host-side building blocks: interpreters, wheelhouse, results files, progress lines."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfmatrix.progress import Progress, fmt_duration, parse_suite_line
from tfmatrix.provision import interpreters, wheelhouse
from tfmatrix.results.store import (
    CellOutcome,
    cell_document,
    load_cell,
    reusable,
    suite_fingerprint,
    write_cell,
    write_json_atomic,
)
from tfmatrix.runners.common import LineReader


def test_finds_the_running_interpreter():
    minor = "%d.%d" % sys.version_info[:2]
    interp = interpreters.find(minor)
    assert interp is not None and interp.minor == minor
    assert interp.version[:2] == sys.version_info[:2]
    assert interpreters.find("2.5") is None


def test_inactive_pyenv_shims_are_not_interpreters(tmp_path):
    shim = tmp_path / "python3.99"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.99: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    assert interpreters.probe(shim) is None


def test_requirements_key_depends_on_python_and_pins():
    a = wheelhouse.requirements_key(["six==1.16.0"], "3.7")
    assert a == wheelhouse.requirements_key(["six==1.16.0"], "3.7")
    assert a != wheelhouse.requirements_key(["six==1.16.0"], "3.11")
    assert a != wheelhouse.requirements_key(["six==1.15.0"], "3.7")


@pytest.mark.slow
def test_wheelhouse_downloads_once_and_works_offline(tmp_path):
    """Real pip against the real index: a second resolution fetches nothing, offline works."""
    minor = "%d.%d" % sys.version_info[:2]
    logs: list[str] = []
    first = wheelhouse.ensure(["six==1.16.0"], minor, root=tmp_path, log=logs.append, offline=False)
    assert [f.name for f in first.files] == ["six-1.16.0-py2.py3-none-any.whl"]
    assert first.downloaded == 1 and first.how.startswith("interpreter")
    again = wheelhouse.ensure(["six==1.16.0"], minor, root=tmp_path, log=logs.append)
    assert again.how == "manifest" and again.downloaded == 0 and again.files == first.files
    (tmp_path / "manifests").rename(tmp_path / "old-manifests")
    offline = wheelhouse.ensure(["six==1.16.0"], minor, root=tmp_path, log=logs.append, offline=True)
    assert offline.downloaded == 0 and [f.name for f in offline.files] == ["six-1.16.0-py2.py3-none-any.whl"]
    with pytest.raises(wheelhouse.WheelhouseError, match="offline wheelhouse"):
        wheelhouse.ensure(["six==1.15.0"], minor, root=tmp_path, log=logs.append, offline=True)


def test_suite_progress_lines_parse():
    assert parse_suite_line("[suite 12/140] ok      training.answer[model=small]  median 3 ms") == (
        12, 140, "ok", "training.answer[model=small]")
    assert parse_suite_line("Using TensorFlow backend.") is None
    assert fmt_duration(3725) == "1:02:05" and fmt_duration(65) == "1:05"


def test_runner_output_reaches_the_log_in_whole_lines_whatever_the_chunks():
    got: list[str] = []
    lines = LineReader(got.append)
    for chunk in (b"[suite 1/", b"2] ok a  x\n[suite 2/2] ok b", b"  y\n\nlast, no newline \xff"):
        lines.feed(chunk)
    assert got == ["[suite 1/2] ok a  x", "[suite 2/2] ok b  y", ""]
    lines.close()
    lines.close()
    assert got[-1] == "last, no newline \ufffd" and len(got) == 4
    assert [parse_suite_line(line) for line in got[:2]] == [(1, 2, "ok", "a"), (2, 2, "ok", "b")]


def test_progress_prints_phases_and_every_tenth(capsys):
    from rich.console import Console

    console = Console(file=sys.stderr, force_terminal=False, width=200)
    p = Progress(2, console, live=False)
    p.start_cell("tf1.15-cpu", 1)
    p.phase("run")
    for i in range(1, 21):
        p.suite_output("[suite %d/20] ok      x[y=%d]" % (i, i))
    p.finish_cell("ok", None, 12.0)
    err = capsys.readouterr().err
    assert "(1/2) tf1.15-cpu: run" in err
    assert "benchmark 20 of 20" in err and "left in this cell" in err
    assert err.count("benchmark") <= 12   # every ~10%, not every line


def test_the_time_left_is_extrapolated_from_the_run_so_far_even_when_lines_come_in_a_burst(monkeypatch, capsys):
    """A window's records arrive together: 60 lines in a moment once said "~0:00 left" at benchmark 60 of 120."""
    from rich.console import Console

    from tfmatrix import progress as progress_module

    clock = [1000.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: clock[0])
    p = Progress(1, Console(file=sys.stderr, force_terminal=False, width=200), live=False)
    p.start_cell("tf2.15-cpu", 1)
    p.phase("run")
    clock[0] += 100.0                                 # import, build and sample the first window
    for i in range(1, 61):
        clock[0] += 0.001
        p.suite_output("[suite %d/120] ok      x[y=%d]" % (i, i))
    line = [ln for ln in capsys.readouterr().err.splitlines() if "benchmark 60 of 120" in ln][-1]
    assert "~1:40 left in this cell" in line          # 100 s for 60 runs: 100 s more for the other 60
    clock[0] += 100.0
    for i in range(61, 121):
        p.suite_output("[suite %d/120] ok      x[y=%d]" % (i, i))
    last = capsys.readouterr().err.splitlines()[-1]
    assert "benchmark 120 of 120" in last and "left in this cell" not in last


def test_results_are_written_atomically_and_reused_only_when_identical(tmp_path):
    path = tmp_path / "cells" / "c.json"
    request = {"preset": "quick", "only": [], "repeats": None, "suite": suite_fingerprint()}
    doc = cell_document({"name": "c"}, CellOutcome("c", "ok", runner={"name": "venv", "inputs": "abc"}), request)
    write_cell(path, doc)
    assert [p.name for p in path.parent.iterdir()] == ["c.json"]   # no temp file left behind
    loaded = load_cell(path)
    assert loaded is not None and loaded.status == "ok"
    assert reusable(loaded, request, "abc")
    assert not reusable(loaded, dict(request, preset="standard"), "abc")
    assert not reusable(loaded, request, "other-inputs")
    failed = dataclasses.replace(loaded, status="failed")
    assert not reusable(failed, request, "abc")


def test_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "x.json"
    write_json_atomic(path, {"v": 1})

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        write_json_atomic(path, {"v": 2})
    assert json.loads(path.read_text()) == {"v": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


def test_suite_fingerprint_changes_with_the_suite(tmp_path, monkeypatch):
    import tfmatrix.results.store as results

    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(results, "SUITE_DIR", tmp_path)
    one = results.suite_fingerprint()
    (tmp_path / "a.py").write_text("x = 2\n")
    assert results.suite_fingerprint() != one


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="Linux only")
@pytest.mark.slow
def test_python_m_tfmatrix_is_importable():
    proc = subprocess.run([sys.executable, "-c", "import tfmatrix.execution.dispatch, tfmatrix.runners.venv, "
                           "tfmatrix.runners.docker, tfmatrix.provision.base_images"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert proc.returncode == 0, proc.stderr


def test_only_containers_of_dead_tfmatrix_processes_are_leftovers():
    """A second tfmatrix (another checkout, a test) must not remove the containers of one running now."""
    import os
    import subprocess

    from tfmatrix.runners import engine as docker_engine

    dead = subprocess.Popen(["true"])
    dead.wait()
    key = docker_engine.OWNER_LABEL
    assert not docker_engine.is_leftover({key: docker_engine.owner()})            # this process's own
    assert not docker_engine.is_leftover({key: docker_engine.owner(os.getppid())})  # another live tfmatrix
    assert docker_engine.is_leftover({key: docker_engine.owner(dead.pid)})         # killed hard: remove
    assert docker_engine.is_leftover({})                                         # an older tfmatrix's
    assert not docker_engine.is_leftover({key: "another-host:1"})                # not ours to judge
