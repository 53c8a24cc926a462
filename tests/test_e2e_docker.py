"""The Docker runner end to end: real engine, locally built bases, real TensorFlow in containers.

One matrix run (tests/matrices/docker.toml, quick preset) serves most tests: a
TF 1.15 and a TF 2.21 CPU cell that must succeed, a cell whose image cannot
build, a cell that cannot finish in its time limit, and a GPU cell on this
GPU-less machine. No registry is reachable here, so the runner builds its
base images itself (debootstrap + the host's CPython): the air-gapped path.
"""
from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from e2e import MATRICES, cell_docs, records, require, tfmatrix

from suite.schema import validate
from tfmatrix.matrix import load
from tfmatrix.runners import docker as docker_runner
from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.docker
DOCKER_MATRIX = MATRICES / "docker.toml"


@pytest.fixture(scope="session")
def client():
    c = docker_engine.engine()
    require(c is not None, "no Docker engine answers (scripts/host-setup installs and starts one)")
    return c


@pytest.fixture(scope="session")
def docker_run(client, tmp_path_factory):
    reports = tmp_path_factory.mktemp("docker-reports")
    t0 = time.monotonic()
    proc = tfmatrix("matrix", "--matrix", str(DOCKER_MATRIX), "--runner", "docker", "--reports", str(reports),
                    "--redo")
    return SimpleNamespace(proc=proc, reports=reports, docs=cell_docs(reports), seconds=time.monotonic() - t0)


@pytest.mark.parametrize("name", ["tf1.15-cpu", "tf2.21-keras3-cpu"])
def test_cpu_cells_produce_valid_results_through_docker(docker_run, name):
    doc = docker_run.docs[name]
    assert doc["status"] == "ok", doc["reason"]
    assert doc["runner"]["name"] == "docker" and doc["runner"]["image"].startswith("tfmatrix/%s:" % name)
    results = doc["results"]
    assert validate(results) == []
    assert results["preset"] == "quick" and results["cell"]["runner"] == "docker"
    assert results["cell"]["image"] == doc["runner"]["image"]
    recs = records(doc)
    assert len(recs) > 50
    errors = {i: r["reason"] for i, r in recs.items() if r["status"] in ("error", "timeout")}
    assert errors == {}
    # Isolation as seen from inside the container.
    sandbox = results["environment"]["host"]["sandbox"]
    assert sandbox["uid"] == 10001                       # not root
    assert sandbox["net_interfaces"] == ["lo"]           # no network
    assert int(sandbox["capabilities_bounding"], 16) == 0 and int(sandbox["capabilities_effective"], 16) == 0
    assert sandbox["no_new_privileges"] is True
    assert sandbox["pids_max"] == str(docker_runner.PIDS_LIMIT)
    assert sandbox["suite_writable"] is False            # suite mounted read-only
    assert sandbox["suite_dir"] == "/opt/tfmatrix/suite"
    tf = results["environment"]["tf"]["tensorflow"]["version"]
    assert tf == doc["cell"]["tf"]


def test_the_base_images_were_built_locally(client, docker_run):
    """No registry answers here: the runner fell back to bases made from this host."""
    doc = docker_run.docs["tf1.15-cpu"]
    assert doc["runner"]["base"] == "tfmatrix.local/library/python:3.7-slim-bookworm"
    assert docker_run.docs["tf2.21-keras3-cpu"]["runner"]["base"] == (
        "tfmatrix.local/library/python:3.11-slim-bookworm")
    client.images.get("tfmatrix.local/library/debian:bookworm-slim")


@pytest.mark.parametrize("name", ["tf1.15-cpu", "tf2.21-keras3-cpu"])
def test_no_wheel_is_a_layer_of_a_cell_image(client, docker_run, name):
    """The wheels reach the build from its own server on 127.0.0.1 (``engine.serve_wheels``): every layer's
    instruction is a RUN, ENV or the like, none a COPY of the wheelhouse, and the image holds no wheel file
    but the two its Python's ``ensurepip`` bundles."""
    image = client.images.get(docker_run.docs[name]["runner"]["image"])
    steps = [h.get("CreatedBy", "") for h in image.history()]
    assert not [s for s in steps if "wheels" in s and "COPY" in s], steps
    out = client.containers.run(image.id, ["sh", "-c", "find / -xdev -name '*.whl' -not -path '*/ensurepip/*' "
                                                       "2>/dev/null | head -5"], remove=True, network_mode="none")
    assert out.strip() == b""


def test_failed_build_and_timeout_are_reported_while_other_cells_succeed(docker_run):
    docs = docker_run.docs
    broken, slow = docs["broken-build"], docs["too-slow"]
    assert broken["status"] == "failed"
    assert broken["reason"].startswith("image build failed"), broken["reason"]
    assert "python3.7" in broken["log_tail"]
    assert slow["status"] == "timeout" and slow["reason"] == "the cell ran past its 8 s limit"
    assert docs["tf1.15-cpu"]["status"] == "ok" and docs["tf2.21-keras3-cpu"]["status"] == "ok"
    # Any failed cell makes the session fail, after every cell ran and the report was written.
    assert docker_run.proc.returncode == 1
    assert (docker_run.reports / "index.html").is_file()
    assert (docker_run.reports / "cells" / "too-slow.log").is_file()
    assert not list((docker_run.reports / "cells").glob("*.partial"))


def test_gpu_cell_is_skipped_here_and_its_run_request_asks_for_gpus(docker_run, tmp_path):
    doc = docker_run.docs["tf1.15-gpu"]
    assert doc["status"] == "skipped"
    assert "NVIDIA runtime" in doc["reason"] and "never run on the CPU" in doc["reason"]
    cell = load(DOCKER_MATRIX).cell("tf1.15-gpu")
    request = docker_runner.run_request(cell, "tfmatrix/tf1.15-gpu:x", tmp_path, ["run"])
    (gpus,) = request["device_requests"]
    assert gpus.count == -1 and gpus.capabilities == [["gpu"]]
    cpu_request = docker_runner.run_request(load(DOCKER_MATRIX).cell("tf1.15-cpu"), "img", tmp_path, ["run"])
    assert "device_requests" not in cpu_request


def test_run_request_isolates_the_container(tmp_path):
    cell = load(DOCKER_MATRIX).cell("tf1.15-cpu")
    request = docker_runner.run_request(cell, "img", tmp_path, ["run"])
    assert request["network_mode"] == "none" and request["user"] == "10001:10001"
    suite, out = request["mounts"]
    assert suite["Target"] == "/opt/tfmatrix/suite" and suite["ReadOnly"] is True
    assert out["Target"] == "/out" and out["ReadOnly"] is False and out["Source"] == str(tmp_path)
    assert request["mem_limit"] == cell.memory == request["memswap_limit"]
    assert request["cap_drop"] == ["ALL"] and request["security_opt"] == ["no-new-privileges"]
    assert request["pids_limit"] == docker_runner.PIDS_LIMIT
    assert request["read_only"] is True and request["tmpfs"] == {"/tmp": docker_runner.TMPFS_OPTIONS}


def test_the_containers_root_is_read_only_its_tmp_in_memory_and_its_output_folder_private(client, docker_run):
    """Seen from inside a real container of the run's image: / mounted read-only, /tmp a writable tmpfs, /out
    writable by the container's user; on the host, /out's folder inside a parent only this user can enter."""
    import shutil
    import stat

    cell = load(DOCKER_MATRIX).cell("tf1.15-cpu")
    out = docker_runner.private_out_dir()
    try:
        assert stat.S_IMODE(out.parent.stat().st_mode) == 0o700 and stat.S_IMODE(out.stat().st_mode) == 0o777
        command = ["sh", "-c", "cat /proc/mounts; touch /tmp/ok && touch /out/ok; touch /etc/x 2>/dev/null "
                               "|| echo ROOT-READ-ONLY"]
        container = client.containers.run(**docker_runner.run_request(
            cell, docker_run.docs["tf1.15-cpu"]["runner"]["image"], out, command))
        try:
            container.wait(timeout=120)
            said = container.logs().decode()
        finally:
            container.remove(force=True)
        assert (out / "ok").is_file()
    finally:
        shutil.rmtree(out.parent)
    mounts = {f[1]: (f[2], f[3].split(",")) for f in (line.split() for line in said.splitlines()) if len(f) >= 4}
    assert "ro" in mounts["/"][1], said
    assert mounts["/tmp"][0] == "tmpfs" and "rw" in mounts["/tmp"][1]
    assert "ROOT-READ-ONLY" in said


def test_no_container_is_left_behind(client, docker_run):
    assert docker_engine.leftover_containers(client) == []


def test_second_run_does_not_rebuild_and_finished_cells_are_kept(docker_run, tmp_path):
    reports = tmp_path / "reports"
    args = ["--matrix", str(DOCKER_MATRIX), "--runner", "docker", "--reports", str(reports)]
    first = tfmatrix("cell", "tf1.15-cpu", "--bench", "selfcheck*", *args)
    assert first.returncode == 0, first.stderr[-2000:]
    doc = cell_docs(reports)["tf1.15-cpu"]
    assert doc["timings"]["build_s"] == 0.0          # the image from the matrix run is reused
    assert "not rebuilding" in Path(reports / "cells" / "tf1.15-cpu.log").read_text()
    # `matrix` keeps a finished cell's results (same request, same image) unless --redo ...
    kept = tfmatrix("matrix", "--only", "tf1.15-cpu", "--bench", "selfcheck*", *args)
    assert kept.returncode == 0 and "kept the results" in kept.stderr
    assert cell_docs(reports)["tf1.15-cpu"]["finished"] == doc["finished"]
    # ... but not for a different request.
    other = tfmatrix("matrix", "--only", "tf1.15-cpu", "--bench", "selfcheck*", "--repeats", "3", *args)
    assert other.returncode == 0 and "kept the results" not in other.stderr


def _interrupt_when_running(client, args, cell, sig, ready=None):
    """Start ``python -m tfmatrix ARGS``, send ``sig`` once ``cell``'s container runs (and ``ready()`` holds);
    (exit code, stderr). The child gets SIGINT at its default disposition whatever this process inherited (a
    background job of a non-interactive shell ignores it), as a user's terminal would give it."""
    import signal
    import subprocess
    import sys

    from e2e import ROOT

    proc = subprocess.Popen([sys.executable, "-m", "tfmatrix", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 1800
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            running = client.containers.list(filters={"label": f"{docker_engine.RUN_LABEL}={cell}"},
                                             ignore_removed=True)
            if running and (ready is None or ready()):
                time.sleep(1.0)               # mid-cell: the suite is importing TensorFlow or measuring
                proc.send_signal(sig)
                break
            time.sleep(0.2)
        _out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


def _leftovers(cells_dir):
    return sorted(p.name for p in cells_dir.iterdir() if p.name.endswith(".partial") or p.name.startswith(".tmp-"))


@pytest.mark.parametrize(("sig_name", "schedule"), [("SIGINT", "sequential"), ("SIGTERM", "sequential"),
                                                   ("SIGINT", "interleaved")])
def test_an_interrupted_matrix_keeps_finished_cells_leaves_nothing_behind_and_resumes(client, docker_run, tmp_path,
                                                                                       sig_name, schedule):
    """Issue 12's done-when, with real Docker: Ctrl-C (SIGINT) or SIGTERM mid-cell leaves no container and no
    half-written cell file, keeps every finished cell (interleaved: every finished slice) and the results an
    attempt did not replace, and the next `matrix` run does only what is missing."""
    import signal

    from tfmatrix.execution.interleaved import JOURNAL_DIR

    sig = getattr(signal, sig_name)
    reports = tmp_path / "reports"
    cells_dir = reports / "cells"
    journal = reports / JOURNAL_DIR
    args = ["matrix", "--matrix", str(DOCKER_MATRIX), "--runner", "docker", "--reports", str(reports),
            "--only", "tf1.15-cpu", "--only", "tf2.21-keras3-cpu", "--bench", "selfcheck*", "--schedule", schedule]
    if schedule == "sequential":     # one round: a cell that finished is whole (one of two rounds would be run again)
        args += ["--rounds", "1"]
    slices = lambda: sorted(p.name for p in journal.glob("*/r*.json"))  # noqa: E731
    code, err = _interrupt_when_running(client, args, "tf2.21-keras3-cpu", sig,
                                        ready=(lambda: len(slices()) >= 2) if schedule == "interleaved" else None)
    assert code == 130 and "Traceback" not in err, err[-3000:]
    assert docker_engine.leftover_containers(client) == []
    assert _leftovers(cells_dir) == []
    docs = cell_docs(reports)
    if schedule == "sequential":
        assert docs["tf1.15-cpu"]["status"] == "ok"                               # finished before: kept
    else:
        done = slices()                                                            # every complete slice, kept
        assert len(done) >= 2 and docs["tf1.15-cpu"]["reason"] == "interrupted"
    assert (docs["tf2.21-keras3-cpu"]["status"], docs["tf2.21-keras3-cpu"]["reason"]) == ("failed", "interrupted")

    resumed = tfmatrix(*args)                                                      # the next run resumes
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    if schedule == "sequential":
        assert "kept the results" in resumed.stderr
    else:
        assert "resuming the interrupted run" in resumed.stderr and not journal.exists()
        assert resumed.stderr.count("== turn") == 0                                # the log, not the console
        log = (cells_dir / "tf1.15-cpu.log").read_text()
        assert log.count("resumed: round") >= 1                                    # not measured again
    docs = cell_docs(reports)
    assert docs["tf2.21-keras3-cpu"]["status"] == "ok"
    complete = docs["tf2.21-keras3-cpu"]

    # A re-run of a cell with complete results, interrupted: the results stay, the attempt is recorded beside them.
    again = ["cell", "tf2.21-keras3-cpu", "--matrix", str(DOCKER_MATRIX), "--runner", "docker", "--reports",
             str(reports), "--bench", "selfcheck*"]
    code, err = _interrupt_when_running(client, again, "tf2.21-keras3-cpu", sig)
    assert code == 130 and "Traceback" not in err, err[-3000:]
    assert docker_engine.leftover_containers(client) == [] and _leftovers(cells_dir) == []
    kept = cell_docs(reports)["tf2.21-keras3-cpu"]
    attempt = kept.pop("last_attempt")
    assert kept == complete and attempt["reason"] == "interrupted"
    assert (cells_dir / "tf2.21-keras3-cpu.attempt.log").is_file()
    report = tfmatrix("report", "--cells", str(cells_dir), "--out", str(reports), "--matrix", str(DOCKER_MATRIX))
    assert report.returncode == 0
    assert f"showing the results of {complete['finished']}" in (reports / "index.html").read_text()
