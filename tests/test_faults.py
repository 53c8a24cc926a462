"""Fault paths of the runners and the run loop, without a fault to inject (the real faults, on a real Docker
engine, are ``test_e2e_faults.py``): an engine that stops answering, a suite command whose engine went away."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tfmatrix.runners import docker as docker_runner
from tfmatrix.runners import engine as docker_engine
from tfmatrix.runners.base import SuiteExit
from tfmatrix.runners.whole import judge

ROOT = Path(__file__).resolve().parent.parent


class _Engine:
    def __init__(self, down_for: int) -> None:
        self.down_for = down_for
        self.pings = 0

    def ping(self) -> bool:
        self.pings += 1
        if self.pings <= self.down_for:
            raise ConnectionError("Connection aborted: [Errno 111] Connection refused")
        return True


def test_an_engine_that_comes_back_is_waited_for_and_one_that_does_not_is_one_reason() -> None:
    said: list[str] = []
    assert docker_engine.wait_for_engine(_Engine(down_for=2), 10, said.append, poll_s=0.01) is None
    assert said[0].startswith("the Docker engine does not answer (Connection aborted") and "up to 10 s" in said[0]
    assert said[-1].startswith("the Docker engine answers again after ")
    gone = docker_engine.wait_for_engine(_Engine(down_for=10**6), 0.05, said.append, poll_s=0.01)
    assert gone == "the Docker engine did not answer for 0 s (Connection aborted: [Errno 111] Connection refused)"


class _Api:
    def exec_create(self, *args: Any, **kwargs: Any) -> dict[str, str]:
        raise ConnectionError("('Connection aborted.', RemoteDisconnected('Remote end closed connection'))")


class _Client:
    api = _Api()


class _Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str) -> None:
        self.lines.append(text)

    def tail(self) -> str:
        return "\n".join(self.lines)


def test_a_suite_command_whose_engine_went_away_is_a_lost_environment_not_a_crash(tmp_path: Path) -> None:
    cell: Any = type("C", (), {"name": "tf1.15-cpu", "memory": "8g", "timeout_s": 60})()
    env = docker_runner.DockerCellEnv(_Client(), type("K", (), {"id": "c1"})(), cell, tmp_path, {"name": "docker"},
                                      {})
    log = _Log()
    ran = env.run_suite(["slice"], log, 10)     # type: ignore[arg-type]
    assert ran.returncode is None and ran.lost is not None and ran.lost.startswith("the Docker engine: ")
    outcome = judge(cell, env, ran, "r1.json", log, {})     # type: ignore[arg-type]
    assert outcome.status == "failed" and outcome.reason is not None
    assert outcome.reason.startswith("its environment failed under it: the Docker engine: ('Connection aborted.'")
    assert SuiteExit(0).lost is None


def test_a_damaged_wheel_is_found_by_its_size_or_its_hash_and_offline_it_is_one_line(tmp_path: Path) -> None:
    import pytest

    from tfmatrix.provision import wheelhouse

    reqs, name = ["six==1.16.0"], "six-1.16.0-py2.py3-none-any.whl"
    wheelhouse.store(reqs, "3.11", [(name, b"x" * 1000)], root=tmp_path)
    assert wheelhouse.cached(reqs, "3.11", root=tmp_path) is not None
    wheel = tmp_path / name
    wheel.write_bytes(b"x" * 500)                                   # a copy cut short: its size says so
    assert wheelhouse.cached(reqs, "3.11", root=tmp_path) is None
    said: list[str] = []
    with pytest.raises(wheelhouse.WheelhouseError, match=f"wheel {name} in the offline wheelhouse .* is damaged"):
        wheelhouse.ensure(reqs, "3.11", offline=True, root=tmp_path, log=said.append)
    assert not wheel.exists() and said == [f"wheel {name} in the wheelhouse is damaged (not the file that was "
                                           "fetched): fetching it again"]
    wheelhouse.store(reqs, "3.11", [(name, b"x" * 1000)], root=tmp_path)
    wheel.write_bytes(b"y" * 1000)                                  # the same size, other bytes: only the hash sees it
    assert wheelhouse.cached(reqs, "3.11", root=tmp_path) is not None
    with pytest.raises(wheelhouse.WheelhouseError, match="is damaged"):
        wheelhouse.ensure(reqs, "3.11", offline=True, root=tmp_path, log=said.append, verify=True)


def test_a_full_disk_is_one_line_that_says_how_to_resume(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    import errno

    from tfmatrix import cli
    from tfmatrix.report import build as report_build

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "reports" / "index.html"))

    monkeypatch.setattr(report_build, "build", full)
    code = cli.main(["report", "--out", str(tmp_path / "reports"), "--matrix", str(tmp_path / "none.toml")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1
    assert err[0].startswith("tfmatrix: error: the disk is full (") and "run the same command again" in err[0]


def test_a_worker_the_memory_limit_killed_is_out_of_memory_with_the_limit(tmp_path: Path) -> None:
    """The suite reads its container's cgroup: an OOM kill during a worker is "out of memory (limit 8.0 GB)"."""
    import signal

    from suite.isolation import _describe_exit, memory_limit, oom_kills

    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 3\noom_kill 3\n")
    (v2 / "memory.max").write_text("8000000000\n")
    assert oom_kills(str(v2)) == 3 and memory_limit(str(v2)) == "8.0 GB"
    assert _describe_exit(-signal.SIGKILL, oom=True, cgroup=str(v2)) == (
        "out of memory (limit 8.0 GB): the kernel killed the worker")
    assert _describe_exit(-signal.SIGKILL) == "worker died with SIGKILL (killed: likely out of memory)"
    v1 = tmp_path / "v1" / "memory"
    v1.mkdir(parents=True)
    (v1 / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712\n")          # no limit
    assert oom_kills(str(tmp_path / "v1")) == 1 and memory_limit(str(tmp_path / "v1")) is None
    assert oom_kills(str(tmp_path / "none")) is None


def test_a_run_whose_builds_cannot_fit_on_the_disk_stops_before_provisioning_with_one_line(tmp_path: Path) -> None:
    import io

    import pytest
    from rich.console import Console

    from tfmatrix.errors import UserError
    from tfmatrix.execution import dispatch
    from tfmatrix.execution.request import RunRequest
    from tfmatrix.matrix import load
    from tfmatrix.provision import hygiene
    from tfmatrix.runners.base import DiskRoom

    class Full:
        name, slots, interleaves = "fake", 1, True
        prepared: list[str] = []

        def skip_reason(self, cell: Any) -> None:
            return None

        def built(self, cell: Any) -> bool:
            return False

        def width(self, cells: Any) -> int:
            return 1

        def disk_room(self, cells: Any) -> DiskRoom:
            return DiskRoom(12_400_000_000, 3_100_000_000, "/var/lib/docker", "the images of 4 cell(s) not built yet")

        def prepare(self, *args: Any) -> Any:
            self.prepared.append("x")
            raise AssertionError("provisioned on a full disk")

    cell = next(c for c in load(ROOT / "matrix.toml", environ={}).cells if c.name == "tf2.15-cpu")
    with pytest.raises(UserError) as caught:
        dispatch.execute([cell], Full(), RunRequest(rounds=1), tmp_path,   # type: ignore[arg-type]
                         console=Console(file=io.StringIO()))
    assert str(caught.value) == ("the images of 4 cell(s) not built yet need ~12.4 GB, 3.1 GB free in /var/lib/docker: "
                                 "remove what nothing uses with `python -m tfmatrix disk --prune` (nox -s prune), or "
                                 "select fewer cells (--only)")
    assert hygiene.build_estimate(["torch==2.5.1"], None) > hygiene.build_estimate(["tensorflow-cpu==2.15.1"], None)
    assert hygiene.build_estimate(["x"], 310_000_000) == 1_470_000_000                 # tf2.15-cpu: 1.48 GB here
    assert hygiene.build_estimate(["torch==2.14.1"], 3_060_000_000) == 6_970_000_000    # keras3-torch-cpu: 6.43 GB
