"""Faults injected into real runs on a real Docker engine: nothing complete is lost, the run says what happened.

Each test starts ``python -m tfmatrix matrix`` on one small cell (tf1.15-cpu, the quick preset, the selfcheck
benchmark and one graph-mode variant: two slices a round, seconds each), injects one fault while it runs, and
checks what the fault cost: the slices that were complete before it are in the cell's file unchanged, and the run
finished (or stopped with one clear line).
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from e2e import MATRICES, ROOT, cell_docs, require, tfmatrix

from suite.schema import validate
from tfmatrix.execution.interleaved import JOURNAL_DIR
from tfmatrix.runners import docker as docker_runner
from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.docker
DOCKER_MATRIX = MATRICES / "docker.toml"
CELL = "tf1.15-cpu"


@pytest.fixture(scope="module")
def client() -> Any:
    c = docker_engine.engine()
    require(c is not None, "no Docker engine answers (scripts/host-setup installs and starts one)")
    return c


# Two slices a round (eager:tf.keras, graph:tf), so that a fault can land between a round's slices and a killed run
# has slices left to resume: since eager:tf shares eager:tf.keras's process, selfcheck alone is one slice a round.
BENCH = ("selfcheck*", "graphs.power*call=session*")


def _args(reports: Path, rounds: int = 3) -> list[str]:
    return ["matrix", "--matrix", str(DOCKER_MATRIX), "--runner", "docker", "--reports", str(reports), "--only", CELL,
            *(a for pattern in BENCH for a in ("--bench", pattern)), "--rounds", str(rounds), "--redo"]


def _start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tfmatrix", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _slices(journal: Path) -> dict[str, dict[str, Any]]:
    """The journal's complete slices (``r<round>-<slice>.json``) and their records."""
    out = {}
    for path in sorted(journal.glob(f"{CELL}/r*.json")):
        try:
            out[path.name] = {r["id"]: r for r in json.loads(path.read_text())["records"]}
        except (OSError, ValueError, KeyError):
            pass
    return out


def _wait(what: Any, proc: subprocess.Popen[str], limit: float = 900) -> None:
    deadline = time.monotonic() + limit
    while not what():
        assert proc.poll() is None, (proc.communicate()[1] or "")[-3000:]
        assert time.monotonic() < deadline, "the fault's moment never came"
        time.sleep(0.1)


def _remove_left(client: Any) -> None:
    """The cell's containers a stopped run left behind (one may be on its way out already)."""
    import docker

    for c in client.containers.list(filters={"label": f"{docker_engine.RUN_LABEL}={CELL}"}, ignore_removed=True):
        try:
            c.remove(force=True)
        except docker.errors.APIError:      # NotFound, or 409: its removal already in progress
            pass


def _kept(before: dict[str, dict[str, Any]], doc: dict[str, Any]) -> None:
    """Every process of every slice complete before the fault is in the cell's pooled records, as it was."""
    final = {r["id"]: r for r in doc["results"]["records"]}
    for name, recs in before.items():
        for vid, rec in recs.items():
            if rec["status"] == "ok":
                assert rec["per_process"][0] in final[vid]["per_process"], (name, vid)


def test_a_container_killed_mid_slice_costs_that_slice_once_and_loses_nothing(client: Any, tmp_path: Path) -> None:
    """`docker kill` of the cell's container while a slice of round 2 runs: the slice is measured again after the
    planned turns in a fresh container, the run finishes whole, every earlier slice is kept as it was."""
    reports = tmp_path / "reports"
    journal = reports / JOURNAL_DIR
    proc = _start(_args(reports))
    try:
        _wait(lambda: len(_slices(journal)) >= 2, proc)             # round 1 complete (two slices at least)
        _wait(lambda: client.containers.list(filters={"label": f"{docker_engine.RUN_LABEL}={CELL}"},
                                             ignore_removed=True), proc)
        before = _slices(journal)
        time.sleep(0.5)                                              # mid-slice: importing TensorFlow or measuring
        for c in client.containers.list(filters={"label": f"{docker_engine.RUN_LABEL}={CELL}"}, ignore_removed=True):
            host = c.attrs["HostConfig"]                             # least privilege, as the engine holds it
            assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
            assert host["PidsLimit"] == docker_runner.PIDS_LIMIT and host["NetworkMode"] == "none"
            assert c.attrs["Config"]["User"] == "10001:10001"
            c.kill()
        _out, err = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "Traceback" not in err, err[-3000:]
    assert "measuring again 1 slice(s) that failed" in err
    doc = cell_docs(reports)[CELL]
    assert doc["status"] == "ok" and validate(doc["results"]) == []
    assert doc["results"]["config"]["rounds"] == 3                           # whole: the lost slice measured again
    assert any("failed (" in w and "measured again after the planned turns" in w for w in doc["results"]["warnings"])
    _kept(before, doc)
    assert docker_engine.leftover_containers(client) == []


def test_sigkill_of_the_host_process_mid_round_resumes_without_measuring_a_complete_slice_twice(
        client: Any, tmp_path: Path) -> None:
    """The tfmatrix process killed with SIGKILL (no handler runs): the same command resumes from the journal; the
    slices complete before the kill are pooled as they were, none measured again, and the file has every round."""
    reports = tmp_path / "reports"
    journal = reports / JOURNAL_DIR
    args = _args(reports)
    proc = _start(args)
    try:
        _wait(lambda: len(_slices(journal)) >= 3, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = _slices(journal)
    _remove_left(client)              # what the dead process left running (a later run's start removes them too)
    again = tfmatrix(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming the interrupted run" in again.stderr
    log = (reports / "cells" / f"{CELL}.log").read_text()
    assert log.count("resumed: round") == len(before)                        # each complete slice taken, not re-run
    doc = cell_docs(reports)[CELL]
    assert doc["status"] == "ok" and doc["results"]["config"]["rounds"] == 3
    _kept(before, doc)


MEMORY_PLUGIN = Path(__file__).resolve().parent / "suite_plugins" / "memory"


def test_a_variant_that_runs_out_of_memory_is_that_variants_error_and_its_slice_goes_on(client: Any,
                                                                                        tmp_path: Path) -> None:
    """A 700 MB cell whose benchmark asks for 3 GB in one variant: that variant is "out of memory (limit 0.7 GB)",
    the variant beside it in the same process is measured, and the cell is ok."""
    matrix = tmp_path / "matrix.toml"
    matrix.write_text('[matrix]\npreset = "quick"\nrounds = 1\n\n[[cell]]\ntf = "1.15"\ntarget = "cpu"\n'
                      'memory = "700m"\n')
    reports = tmp_path / "reports"
    ran = tfmatrix("matrix", "--matrix", str(matrix), "--runner", "docker", "--reports", str(reports), "--bench-path",
                   str(MEMORY_PLUGIN), "--bench", "memory.*", "--redo")
    assert ran.returncode == 0, ran.stderr[-3000:]
    doc = cell_docs(reports)[CELL]
    assert doc["status"] == "ok", doc.get("reason")
    recs = {r["params"]["appetite_mb"]: r for r in doc["results"]["records"]}
    assert recs[4]["status"] == "ok"
    assert recs[3000]["status"] == "error"
    assert recs[3000]["reason"].startswith("out of memory (limit 0.7 GB)"), recs[3000]["reason"]


def test_the_docker_engine_restarted_mid_run_is_waited_for_and_the_run_goes_on(client: Any, tmp_path: Path) -> None:
    """dockerd stopped while a slice runs and started again once the run says it is waiting for it: the cut slice
    is a failed slice (measured again later), the next one waited for the engine (said on screen), the run is whole."""
    reports = tmp_path / "reports"
    journal = reports / JOURNAL_DIR
    screen = tmp_path / "stderr.txt"
    with screen.open("w") as err_file:
        proc = subprocess.Popen([sys.executable, "-m", "tfmatrix", *_args(reports)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=err_file, text=True)
    try:
        _wait(lambda: len(_slices(journal)) >= 2, proc)
        _wait(lambda: client.containers.list(filters={"label": f"{docker_engine.RUN_LABEL}={CELL}"},
                                             ignore_removed=True), proc)
        before = _slices(journal)
        subprocess.run(["pkill", "-x", "dockerd"], check=False)
        _wait(lambda: "the Docker engine does not answer" in screen.read_text(), proc, limit=120)   # said on screen
        subprocess.run(["bash", str(ROOT / "scripts" / "host-setup")], check=True, capture_output=True,
                       timeout=300)
        proc.wait(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
        if subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True).returncode != 0:
            subprocess.run(["bash", str(ROOT / "scripts" / "host-setup")], check=False, capture_output=True)
    err = screen.read_text()
    assert proc.returncode == 0 and "Traceback" not in err, err[-3000:]
    assert "the Docker engine answers again" in (reports / "cells" / f"{CELL}.log").read_text()
    doc = cell_docs(reports)[CELL]
    assert doc["status"] == "ok" and doc["results"]["config"]["rounds"] == 3
    _kept(before, doc)


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A 64 MB tmpfs: a disk that a test can fill."""
    where = tmp_path / "small"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)], capture_output=True,
                             text=True)
    require(mounted.returncode == 0, "cannot mount a tmpfs here (root needed): " + mounted.stderr.strip())
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_disk_that_fills_mid_run_stops_with_every_complete_slice_kept(client: Any, small_disk: Path) -> None:
    """The reports directory's disk filled while round 2 runs: the run stops with one line that says to free space
    and run the same command again; after that, the same command resumes and every earlier slice is kept."""
    reports = small_disk / "reports"
    journal = reports / JOURNAL_DIR
    args = _args(reports)
    proc = _start(args)
    filler = small_disk / "filler"
    try:
        _wait(lambda: len(_slices(journal)) >= 2, proc)
        before = _slices(journal)
        with filler.open("wb") as f:                     # every free byte taken
            try:
                while True:
                    f.write(b"\0" * (1 << 20))
                    f.flush()
            except OSError:
                pass
        _out, err = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1 and "Traceback" not in err, err[-3000:]
    said = [line for line in err.splitlines() if line.startswith("tfmatrix: error:")]
    assert len(said) == 1 and "the disk is full" in said[0] and "run the same command again" in said[0], err[-3000:]
    assert _slices(journal).keys() >= before.keys()
    filler.unlink()
    _remove_left(client)
    again = tfmatrix(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming the interrupted run" in again.stderr
    doc = cell_docs(reports)[CELL]
    assert doc["status"] == "ok" and doc["results"]["config"]["rounds"] == 3
    _kept(before, doc)


def test_a_run_whose_environments_cannot_fit_stops_before_building_with_one_line(small_disk: Path) -> None:
    """Virtualenvs to be made on a 64 MB disk (``TFMATRIX_VENV_ROOT``): the run compares what they will take with the
    free space and stops before making anything, in one line that says how much, where, and what to do."""
    import os

    reports = small_disk / "reports"
    env = {**os.environ, "TFMATRIX_VENV_ROOT": str(small_disk / "venvs")}
    ran = subprocess.run([sys.executable, "-m", "tfmatrix", "matrix", "--matrix", str(DOCKER_MATRIX), "--runner",
                          "venv", "--reports", str(reports), "--only", CELL, "--bench", "selfcheck*", "--rounds", "1"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in ran.stderr.splitlines() if line.startswith("tfmatrix: error:")]
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert len(lines) == 1 and "the virtualenvs of 1 cell(s) not built yet need ~" in lines[0], ran.stderr
    assert "free in " + str(small_disk) in lines[0] and "tfmatrix disk --prune" in lines[0]
    assert not (small_disk / "venvs").exists()                   # nothing made
