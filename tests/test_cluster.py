"""The ray runner without a cluster: [cluster] config, what a cell asks of Ray, who serves it, retries, report."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tfmatrix.analysis.facts import CellFacts, HostFacts
from tfmatrix.analysis.hardware import mixed_hardware
from tfmatrix.errors import UserError
from tfmatrix.matrix import load
from tfmatrix.progress.board import ClusterProgress
from tfmatrix.results.cell_log import CellLog
from tfmatrix.results.documents import CellRequest
from tfmatrix.results.store import CellOutcome
from tfmatrix.runners import docker as docker_runner
from tfmatrix.runners import node
from tfmatrix.runners.cluster import NodeLost, RayRunner, connect_runner
from tfmatrix.runners.job import CellJob
from tfmatrix.runners.placement import Needs, needs, unserved

MATRICES = Path(__file__).resolve().parent / "matrices"

# --------------------------------------------------------------------------- [cluster] and pool


def test_cluster_table_and_pools_load(load_snippet):
    m = load_snippet("""
        [cluster]
        address = "ray://head.example.com:10001"
        pool = "epyc"
        cpus = 4
        [[cell]]
        tf = "1.15"
        [[cell]]
        tf = "2.21"
        pool = "h100"
        target = "gpu"
    """)
    assert (m.settings.cluster_address, m.settings.cluster_pool, m.settings.cluster_cpus) == (
        "ray://head.example.com:10001", "epyc", 4)
    assert [c.pool for c in m.cells] == ["epyc", "h100"]
    assert m.cells[1].to_dict()["pool"] == "h100"


def test_a_pool_axis_gives_the_same_cell_on_each_hardware_pool_named_after_it(load_snippet):
    m = load_snippet("""
        [[product]]
        tf = ["1.15", "2.21"]
        pool = ["epyc", "Xeon_8481C"]
        exclude = [ { tf = "2.21", pool = "Xeon_8481C" } ]
    """)
    assert [(c.name, c.pool) for c in m.cells] == [
        ("tf1.15-cpu-epyc", "epyc"), ("tf1.15-cpu-xeon_8481c", "Xeon_8481C"), ("tf2.21-keras3-cpu-epyc", "epyc")]
    assert m.cells[1].to_dict()["pool"] == "Xeon_8481C"           # the Ray resource keeps its case; the name is lower
    assert m.cells[0].requirements == m.cells[1].requirements     # the same cell, two pools
    assert m.cells[0].origin == "matrix.toml: product[0] tf=1.15,pool=epyc"


def test_a_pool_axis_names_backend_cells_and_their_keras_home_per_pool(load_snippet):
    m = load_snippet('[[product]]\nbackend = "jax"\npool = ["a", "b"]\n')
    assert [c.name for c in m.cells] == ["keras3-jax-cpu-a", "keras3-jax-cpu-b"]
    homes = [dict(c.env)["KERAS_HOME"] for c in m.cells]
    assert homes[0].endswith("/keras3-jax-cpu-a") and homes[1].endswith("/keras3-jax-cpu-b")


def test_a_single_pool_keeps_the_default_name(load_snippet):
    m = load_snippet("""
        [cluster]
        pool = "epyc"
        [[cell]]
        tf = "1.15"
        [[product]]
        tf = ["2.1"]
        pool = "h100"
        [[product]]
        tf = "2.0"
        pool = ["h100"]
    """)
    assert [(c.name, c.pool) for c in m.cells] == [("tf1.15-cpu", "epyc"), ("tf2.1-cpu", "h100"),
                                                   ("tf2.0-cpu-h100", "h100")]


def test_a_name_template_on_a_pool_axis_needs_the_pool(load_snippet, error_of):
    snippet = '[[product]]\ntf = "1.15"\npool = ["a", "b"]\nname = "{default}-x"\n'
    assert error_of(snippet) == (
        "matrix.toml: product[0] pool=b: cell 'tf1.15-cpu-x' has the same name as product[0] pool=a; put {pool} in "
        "the name template (name = \"{default}-{pool}\"), so each pool's cell has its own name")
    named = load_snippet(snippet.replace("-x", "-on-{pool}"))
    assert [c.name for c in named.cells] == ["tf1.15-cpu-on-a", "tf1.15-cpu-on-b"]


@pytest.mark.parametrize(("snippet", "expected"), [
    ('[[product]]\ntf = "1.15"\npool = ["a_", "b"]\n',
     "product[0] pool=a_: key 'pool': pool 'a_' cannot end a cell name ('tf1.15-cpu-a_'), where the pool axis puts "
     "it; rename the pool (letters and digits, single - or _ between them) or give the cells a name = \"...\" "
     "template"),
    ('[[product]]\ntf = "1.15"\npool = ["h 100"]\n',
     "product[0] pool=h 100: key 'pool': 'h 100' is not a pool name; write a Ray custom resource name"),
    ('[[product]]\ntf = "1.15"\npool = []\n',
     "product[0]: key 'pool': an axis needs at least one value; give pool one or more values"),
    ('[[cell]]\ntf = "1.15"\npool = ["a", "b"]\n',
     "cell[0]: key 'pool': expected one pool name, got an array; arrays are axes and belong in [[product]] tables, "
     "where pool = [\"a\", \"b\"] gives one cell per pool"),
])
def test_bad_pool_axes_are_one_line_errors(error_of, snippet, expected):
    assert error_of(snippet).startswith(f"matrix.toml: {expected}")


def test_a_bad_pool_axis_exits_2_from_the_command_line(matrix_file, capsys):
    from tfmatrix.cli import main

    path = matrix_file('[[product]]\ntf = "1.15"\npool = ["a_", "b"]\n')
    assert main(["validate", "--matrix", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "key 'pool': pool 'a_' cannot end a cell name" in err[0]


def test_without_a_pool_nothing_changes_in_the_cell_document(load_snippet):
    cell = load_snippet('[[cell]]\ntf = "1.15"\n').cells[0]
    assert cell.pool is None and "pool" not in cell.to_dict()


@pytest.mark.parametrize(("snippet", "expected"), [
    ('[cluster]\naddress = "http://head:80"\n', "[cluster]: key 'address': 'http://head:80' is not a Ray cluster "
                                                "address; write \"ray://head.example.com:10001\""),
    ('[cluster]\nadress = "auto"\n', "[cluster]: key 'adress': unknown [cluster] key; did you mean 'address'?"),
    ('[cluster]\npool = "h 100"\n', "[cluster]: key 'pool': 'h 100' is not a pool name"),
    ('[cluster]\ncpus = 0\n', "[cluster]: key 'cpus': 0 is not a CPU count; use an integer from 1 to 1024"),
    ('[cluster]\ncpus = true\n', "[cluster]: key 'cpus': True is not a CPU count"),
    ("cluster = 3\n", "[cluster] must be a table"),
])
def test_bad_cluster_settings_are_one_line_errors(error_of, snippet, expected):
    message = error_of(snippet + '[[cell]]\ntf = "1.15"\n')
    assert message.startswith("matrix.toml: ") and expected in message


def test_a_bad_cell_pool_names_the_cell_and_the_fix(error_of):
    message = error_of('[[cell]]\ntf = "1.15"\npool = 3\n')
    assert message.startswith("matrix.toml: cell[0]: key 'pool': 3 is not a pool name; write a Ray custom resource")


def test_ray_runner_needs_an_address(tmp_path):
    with pytest.raises(UserError, match="no cluster address; pass --address"):
        connect_runner(None, None, 2)
    with pytest.raises(UserError, match="'http://x:1' is not a Ray cluster address"):
        connect_runner("http://x:1", None, 2)
    made = connect_runner("head:6379", "mirror", 3, factory=lambda *a: a)
    assert made == ("head:6379", "mirror", 3)


def test_matrix_with_ray_runner_and_no_address_is_a_one_line_error(capsys):
    from tfmatrix.cli import main

    code = main(["matrix", "--matrix", str(MATRICES / "docker.toml"), "--runner", "ray", "--only", "tf1.15-cpu"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["tfmatrix: error: --runner ray: no cluster address; pass --address "
                                 "ray://HEAD:10001 (or HOST:6379, or auto) or set [cluster] address in matrix.toml"]


def test_without_ray_installed_the_ray_runner_is_a_one_line_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)      # import ray -> ImportError
    with pytest.raises(UserError, match=r"^--runner ray: Ray is not installed in this environment; `nox -s matrix"):
        RayRunner("127.0.0.1:6379")


def test_the_nox_sessions_install_ray_at_the_hosts_version_for_the_ray_runner():
    import noxfile

    assert noxfile._wants_ray(["--runner", "ray", "--address", "auto"]) and noxfile._wants_ray(["--runner=ray"])
    assert not noxfile._wants_ray(["--only", "ray", "--runner", "docker"])
    assert noxfile._ray_requirement("2.60.0") == "ray[default]==2.60.0"
    assert noxfile._ray_requirement(None).startswith("ray[default]>=")


# --------------------------------------------------------------------------- what a cell asks, who can serve it

def _cell(target: str = "cpu", pool: str | None = None, name: str = "c") -> Any:
    return SimpleNamespace(name=name, target=target, pool=pool)


def test_cpu_cells_ask_for_their_cpus_and_gpu_cells_for_one_gpu():
    assert needs(_cell(), 2).options() == {"num_cpus": 2, "num_gpus": 0, "resources": {}, "max_retries": 0,
                                           "retry_exceptions": False}
    gpu = needs(_cell("gpu", "h100"), 2)
    assert (gpu.num_cpus, gpu.num_gpus, dict(gpu.resources)) == (1, 1, {"h100": 0.001})
    assert gpu.as_resources() == {"CPU": 1, "GPU": 1.0, "h100": 0.001}
    assert gpu.describe() == "1 CPU + 1 GPU + pool 'h100'"


def _node(alive: bool = True, **resources: float) -> dict[str, Any]:
    return {"Alive": alive, "NodeID": "n", "Resources": {"memory": 1e9, "node:10.0.0.1": 1.0, **resources}}


def test_a_cell_no_live_node_can_serve_is_skipped_with_the_reason():
    nodes = [_node(CPU=2), _node(CPU=8, GPU=2, h100=1), _node(alive=False, CPU=8, GPU=8, a100=1)]
    assert unserved(needs(_cell(), 2), nodes) is None
    assert unserved(needs(_cell("gpu", "h100"), 2), nodes) is None
    assert unserved(needs(_cell(), 16), nodes) == (
        "no node of the Ray cluster can serve it: it needs 16 CPU, the live nodes have 2 CPU; 8 CPU + 2 GPU + h100")
    assert "needs 1 CPU + 1 GPU + pool 'a100'" in unserved(needs(_cell("gpu", "a100"), 2), nodes)   # dead node
    assert unserved(needs(_cell("gpu"), 2), []).endswith("the live nodes have no live nodes")


# --------------------------------------------------------------------------- the GPU request

def test_gpu_cells_get_exactly_the_assigned_devices(tmp_path):
    m = load(MATRICES / "docker.toml")
    gpu = m.cell("tf1.15-gpu")
    (request,) = docker_runner.run_request(gpu, "img", tmp_path, ["run"], gpu_ids=["1", "3"])["device_requests"]
    assert request.device_ids == ["1", "3"] and request.count == 0 and request.capabilities == [["gpu"]]
    (every,) = docker_runner.run_request(gpu, "img", tmp_path, ["run"])["device_requests"]
    assert every.count == -1 and not every.device_ids
    assert node.device_request(gpu, ["2"]) == {"Driver": "", "Count": 0, "DeviceIDs": ["2"],
                                               "Capabilities": [["gpu"]], "Options": {}}
    assert node.device_request(m.cell("tf1.15-cpu"), []) is None


def test_node_events_are_batched_lines_between_phases():
    import queue

    q: queue.Queue = queue.Queue()
    for e in [("line", "a"), ("line", "b"), ("phase", "run"), ("line", "c")]:
        q.put(e)
    assert node._drain(q) == [("lines", ["a", "b"]), ("phase", "run"), ("lines", ["c"])]


# --------------------------------------------------------------------------- retry once, then fail

class FakeCluster(RayRunner):
    """The ray runner with scripted attempts instead of Ray tasks."""

    def __init__(self, attempts: list[Any], nodes: list[list[dict[str, Any]]]) -> None:
        super().__init__("fake:6379", connect=False)
        self.attempts = attempts
        self.views = nodes
        self.submitted = 0

    def nodes(self) -> list[dict[str, Any]]:
        return self.views[min(self.submitted, len(self.views) - 1)]

    def inputs(self, cell: Any) -> str:
        return "tag"

    def _submit(self, job: Any, need: Needs) -> Iterator[Any]:
        cell = job.cell
        script = self.attempts[self.submitted]
        self.submitted += 1

        def events() -> Iterator[Any]:
            yield ("start", {"host": "h%d" % self.submitted, "node_id": "abcdef123456", "ip": "10.0.0.%d"
                             % self.submitted, "gpu_ids": []})
            if script == "lost":
                raise NodeLost("node h%d/abcdef12 was lost mid-cell (NodeDiedError)" % self.submitted)
            yield ("lines", ["[suite] hello"])
            yield ("outcome", CellOutcome(cell.name, "ok", None, {"name": "ray"}, {"run_s": 1.0}, {"status": "ok"}))
        return events()


def _run(runner: RayRunner, tmp_path: Path) -> tuple[CellOutcome, str]:
    log = CellLog(tmp_path / "c.log")
    outcome = runner.run_cell(CellJob(_cell(), CellRequest()), log, None)  # type: ignore[arg-type]
    log.close()
    return outcome, (tmp_path / "c.log").read_text()


def test_a_cell_whose_node_dies_is_retried_once_and_can_succeed(tmp_path):
    runner = FakeCluster(["lost", "ok"], [[_node(CPU=2)]])
    outcome, text = _run(runner, tmp_path)
    assert outcome.status == "ok" and runner.submitted == 2
    assert outcome.runner["attempts"] == 2 and outcome.runner["lost"] == [
        "node h1/abcdef12 was lost mid-cell (NodeDiedError)"]
    assert "on node h1/abcdef12 (10.0.0.1)" in text and "attempt 1 lost" in text and "on node h2/abcdef12" in text


def test_a_cell_lost_twice_is_failed_with_both_reasons(tmp_path):
    runner = FakeCluster(["lost", "lost", "ok"], [[_node(CPU=2)]])
    outcome, _ = _run(runner, tmp_path)
    assert outcome.status == "failed" and runner.submitted == 2
    assert outcome.reason == ("node h1/abcdef12 was lost mid-cell (NodeDiedError); node h2/abcdef12 was lost "
                              "mid-cell (NodeDiedError); retried once on another node, lost again")


def test_a_lost_cell_with_no_node_left_to_take_it_fails_without_queueing(tmp_path):
    runner = FakeCluster(["lost", "ok"], [[_node(CPU=2)], [_node(alive=False, CPU=2)]])
    outcome, _ = _run(runner, tmp_path)
    assert outcome.status == "failed" and runner.submitted == 1
    assert "no other node can take it: no node of the Ray cluster can serve it" in outcome.reason


def test_a_cell_no_node_can_serve_is_skipped_before_anything_is_submitted(tmp_path):
    runner = FakeCluster(["ok"], [[_node(CPU=1)]])
    outcome, _ = _run(runner, tmp_path)
    assert (outcome.status, runner.submitted) == ("skipped", 0)
    assert outcome.reason == "no node of the Ray cluster can serve it: it needs 2 CPU, the live nodes have 1 CPU"


def test_ray_errors_are_sorted_into_lost_cancelled_and_the_tasks_own():
    import ray.exceptions as rex

    from tfmatrix.runners.cluster import classify

    assert classify(rex.TaskCancelledError()) == "cancelled"
    assert classify(rex.WorkerCrashedError()) == "lost"
    assert classify(rex.NodeDiedError("gone")) == "lost"
    assert classify(rex.RayTaskError("f", "tb", ValueError("x"))) == "error"
    assert classify(ValueError("x")) == "error"


# --------------------------------------------------------------------------- progress and report

def test_cluster_progress_says_what_runs_where_done_and_left(capsys):
    from rich.console import Console

    board = ClusterProgress(3, Console(stderr=True, width=300, highlight=False))
    a, b = board.view("a"), board.view("b")
    a.start_cell("a", 1)
    b.start_cell("b", 2)
    a.placed("h1/1234")
    assert board.tally() == "1 running: a@h1/1234; 1 queued; 0 done; 3 left"
    a.finish_cell("ok", None, 60.0)
    b.placed("h2/5678")
    assert board.tally() == "1 running: b@h2/5678; 1 done; 2 left; ~2:00 left"
    err = capsys.readouterr().err
    assert "a: on h1/1234" in err and "ok a on h1/1234 in 1:00" in err


def _result(name: str, cpu: str, target: str = "cpu", gpu: str | None = None) -> Any:
    host = HostFacts.of({"cpu": {"model": cpu}, "nvidia_smi": {"gpus": [{"name": gpu}] if gpu else []}})
    return SimpleNamespace(name=name, target=target, facts=CellFacts(host=host))


def test_the_report_says_loudly_when_cells_ran_on_different_cpu_or_gpu_models():
    same = [_result("a", "EPYC 7B13"), _result("b", "EPYC 7B13")]
    assert mixed_hardware(same) == []
    lines = mixed_hardware([*same, _result("c", "Xeon 8481C"), _result("g1", "EPYC 7B13", "gpu", "H100"),
                            _result("g2", "EPYC 7B13", "gpu", "A100")])
    assert lines[0].startswith("Cells were measured on different CPU models") and "Xeon 8481C: c" in lines[0]
    assert "A100: g2; H100: g1" in lines[1] and "pool" in lines[1]


# --------------------------------------------------------------------------- a Ray Client server not ready yet

class _FakeRay:
    """``ray.init`` failing as a busy head's client server does, ``fails`` times, then joining."""

    def __init__(self, fails: int, error: BaseException) -> None:
        self.fails, self.error, self.calls, self.shutdowns = fails, error, 0, 0

    def init(self, **kwargs: Any) -> None:
        self.calls += 1
        if self.calls <= self.fails:
            raise self.error

    def shutdown(self) -> None:
        self.shutdowns += 1


def _join(monkeypatch: pytest.MonkeyPatch, fake: _FakeRay, address: str, wait_s: float) -> RayRunner:
    import sys

    import tfmatrix.runners.cluster as cluster_mod

    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr(cluster_mod, "CLIENT_RETRY_S", 0.01)
    runner = RayRunner(address, connect=False)
    runner.client_wait_s = wait_s
    runner._connect()
    return runner


def test_a_ray_client_server_that_is_not_ready_yet_is_waited_for(monkeypatch, capsys):
    fake = _FakeRay(2, ConnectionAbortedError("Initialization failure from server:\nTraceback ..."))
    _join(monkeypatch, fake, "ray://127.0.0.1:10001", wait_s=30.0)
    assert fake.calls == 3 and fake.shutdowns == 2
    err = capsys.readouterr().err
    assert err.count("not ready yet") == 1 and "waiting up to 30 s" in err


def test_waiting_for_the_ray_client_server_is_bounded_and_ends_in_one_line(monkeypatch):
    fake = _FakeRay(10**6, ConnectionAbortedError("Initialization failure from server:"))
    with pytest.raises(UserError) as e:
        _join(monkeypatch, fake, "ray://127.0.0.1:10001", wait_s=0.05)
    assert "cannot join the Ray cluster at ray://127.0.0.1:10001 (Initialization failure from server:)" in str(e.value)
    assert fake.calls >= 2


def test_a_wrong_address_fails_at_once(monkeypatch):
    fake = _FakeRay(10**6, ConnectionError("ray client connection timeout"))
    with pytest.raises(UserError):
        _join(monkeypatch, fake, "ray://127.0.0.1:1", wait_s=30.0)
    assert fake.calls == 1


# --------------------------------------------------------------------------- token authentication

@pytest.mark.parametrize(("address", "environ", "warned"), [
    ("head.example.com:6379", {}, True),
    ("ray://10.0.0.5:10001", {}, True),
    ("10.0.0.5:6379", {"RAY_AUTH_MODE": "disabled"}, True),
    ("10.0.0.5:6379", {"RAY_AUTH_MODE": "token"}, False),
    ("ray://head.example.com:10001", {"RAY_AUTH_MODE": " Token "}, False),
    ("127.0.0.1:6379", {}, False),
    ("127.3.2.1:6379", {}, False),                # all of 127.0.0.0/8 is loopback
    ("ray://localhost:10001", {}, False),
    ("[::1]:6379", {}, False),
    ("128.0.0.1:6379", {}, True),
    ("localhost.example.com:6379", {}, True),     # a name that starts like localhost is not loopback
])
def test_joining_over_the_network_without_token_auth_is_what_warns(address, environ, warned):
    from tfmatrix.runners.cluster_auth import address_host, unauthenticated

    assert unauthenticated(address_host(address), environ) is warned


def test_auto_is_judged_by_the_address_of_the_cluster_it_joined():
    from tfmatrix.runners.cluster_auth import address_host, auth_warning, unauthenticated

    assert address_host("auto") is None and not unauthenticated(None, {})     # not known: nothing to say
    line = auth_warning("auto", address_host("10.1.2.3:6379"), {})
    assert line is not None and line.startswith("the Ray cluster at auto (10.1.2.3) runs without token auth")
    assert auth_warning("auto", address_host("127.0.0.1:6379"), {}) is None


@pytest.mark.parametrize(("address", "auth", "lines"), [
    ("head.example.com:6379", None, 1), ("head.example.com:6379", "token", 0), ("127.0.0.1:6379", None, 0)])
def test_joining_a_cluster_without_token_auth_over_the_network_prints_one_warning_line(
        monkeypatch, capsys, address, auth, lines):
    if auth is None:
        monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    else:
        monkeypatch.setenv("RAY_AUTH_MODE", auth)
    _join(monkeypatch, _FakeRay(0, RuntimeError("unused")), address, wait_s=0.0)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == lines
    if lines:
        assert err[0] == (f"tfmatrix: warning: the Ray cluster at {address} runs without token authentication (this "
                          "driver has no RAY_AUTH_MODE=token and was let in): anyone who reaches its ports can run "
                          "any code on every node, as root through its Docker engine; turn it on for every node and "
                          "here: docs/many-machines.md#securing-the-cluster")


def test_a_cluster_that_refuses_this_drivers_token_is_one_line_naming_what_to_set(monkeypatch):
    class AuthenticationError(Exception):
        """As ``ray.exceptions`` names it: Ray raises ConnectionError from it."""

    refused = ConnectionError("Failed to connect to Ray cluster at 10.0.0.5:6379")
    refused.__cause__ = AuthenticationError("RPC error: InvalidAuthToken: Authentication token is missing")
    fake = _FakeRay(1, refused)
    with pytest.raises(UserError) as e:
        _join(monkeypatch, fake, "10.0.0.5:6379", wait_s=30.0)
    assert fake.calls == 1 and "\n" not in str(e.value)
    assert str(e.value) == (
        "--runner ray: the Ray cluster at 10.0.0.5:6379 refused this driver's authentication: it uses token "
        "authentication; set RAY_AUTH_MODE=token and the cluster's token (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or "
        "~/.ray/auth_token) here too (docs/many-machines.md#securing-the-cluster)")


def test_rays_lines_about_a_refused_token_are_left_out_and_its_others_pass_as_they_come(capfd):
    """Ray's C++ client writes to fd 2 itself: its refusal lines are dropped (tfmatrix says it in one line), every
    other line reaches stderr while the block still runs (a wrong address's lines are the only sign of life)."""
    import os
    import time

    from tfmatrix.runners.cluster_auth import refusals_dropped

    seen = ""
    with refusals_dropped():
        os.write(2, b"[C++] gcs_client.cc:210: Failed to get cluster ID: RPC error: InvalidAuthToken: missing\n")
        os.write(2, b"[C++] rpc_client.h:153: Failed to connect to GCS within 5 seconds.\n")
        deadline = time.monotonic() + 10
        while "Failed to connect" not in seen and time.monotonic() < deadline:
            seen += capfd.readouterr().err
            time.sleep(0.05)
        assert seen == "[C++] rpc_client.h:153: Failed to connect to GCS within 5 seconds.\n"    # while it runs
        os.write(2, b"[C++] the last, without a newline")
    assert capfd.readouterr().err == "[C++] the last, without a newline"
    os.write(2, b"after\n")                                 # fd 2 is stderr itself again
    assert capfd.readouterr().err == "after\n"


def test_the_lines_point_to_a_section_that_exists_and_says_how():
    import re

    from tfmatrix.runners.cluster_auth import SECURING

    page, anchor = SECURING.split("#")
    text = (Path(__file__).resolve().parent.parent / page).read_text(encoding="utf-8")
    headings = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
                for h in re.findall(r"^## (.+)$", text, re.M)}
    assert anchor in headings
    section = text.split("## Securing the cluster", 1)[1].split("\n## ", 1)[0]
    for words in ("--node-ip-address", "--dashboard-host=127.0.0.1", "ray get-auth-token --generate",
                  "RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN_PATH", "~/.ray/auth_token", "6379", "10001", "8265",
                  "10002-19999"):
        assert words in section, words
