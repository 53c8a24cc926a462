"""The ray runner on a real local Ray cluster: a head and worker nodes with different resources, logical GPUs.

Ray's own multi-node test cluster (``ray.cluster_utils.Cluster``) starts a
head (no CPUs: nothing runs there) and nodes as separate raylets on this
host; ``python -m tfmatrix`` joins it with ``--runner ray --address`` like a
user's head would. Real CPU cells (TF 1.15 and 2.21, quick preset, one
benchmark) run in Docker on the nodes; GPU cells cannot run here (no NVIDIA
runtime), so their placement and device requests are checked and they must
end skipped with that reason. Nodes are removed mid-cell to show the retry.

The cluster runs with Ray's token authentication on (Ray >= 2.52), as
docs/many-machines.md asks of a real one: ``RAY_AUTH_MODE=token`` and a token
made for the module in a temporary folder (never the user's ~/.ray) are in
this process's environment when the head and every node start, so each
raylet, worker and ``python -m tfmatrix`` driver inherits them; a driver
without them is refused.
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e import MATRICES, ROOT, cell_docs, records, require, tfmatrix

from suite.schema import validate
from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.ray
DOCKER_MATRIX = MATRICES / "docker.toml"
CPU_CELLS = ("tf1.15-cpu", "tf2.21-keras3-cpu")
BENCH = "selfcheck*"


@pytest.fixture(scope="module")
def client():
    c = docker_engine.engine()
    require(c is not None, "no Docker engine answers (scripts/host-setup installs and starts one)")
    return c


AUTH_ENV = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


@pytest.fixture(scope="module")
def ray_auth(tmp_path_factory):
    """Token authentication on for this process and all it starts: the token file's path, or None (Ray < 2.52).

    Ray reads ``RAY_AUTH_MODE`` into its config once per process, and caches
    the token: both are refreshed here when the mode is set and when it is
    restored (config first, then the cache, as Ray's own tests do).
    """
    try:
        import ray  # noqa: F401
        from ray._raylet import AuthenticationTokenLoader, Config
    except ImportError:
        yield None
        return

    def refresh() -> None:
        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()

    token = tmp_path_factory.mktemp("ray-auth") / "auth_token"
    token.write_text(secrets.token_hex(32))          # as `ray get-auth-token --generate` makes one: 256 random bits
    token.chmod(0o600)
    with pytest.MonkeyPatch.context() as env:
        env.delenv("RAY_AUTH_TOKEN", raising=False)
        env.setenv("RAY_AUTH_MODE", "token")
        env.setenv("RAY_AUTH_TOKEN_PATH", str(token))
        refresh()
        try:
            yield token
        finally:
            env.undo()
            refresh()


@pytest.fixture(scope="module")
def cluster(client, ray_auth):
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        require(False, "Ray is not installed (pip install 'ray[default]')")
    c = Cluster(initialize_head=True, connect=False, head_node_args={
        "num_cpus": 0, "include_dashboard": False, "ray_client_server_port": _free_port(),
        "object_store_memory": 600 * 2**20})
    c.nodes_by_name = {
        "cpu": c.add_node(num_cpus=2, resources={"cpupool": 1}),
        "gpu": c.add_node(num_cpus=2, num_gpus=2, resources={"gpupool": 1}),
    }
    c.wait_for_nodes()
    yield c
    c.shutdown()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _running(client, cell: str) -> list:
    return client.containers.list(all=True, filters={"label": f"{docker_engine.RUN_LABEL}={cell}"},
                                  ignore_removed=True)  # one removed between listing and inspecting


def _ray(cluster, *args: str) -> list[str]:
    return ["--runner", "ray", "--address", cluster.address, *args]


def _without_token(home: Path) -> dict[str, str]:
    """This environment less Ray's token settings, with a home of its own (no ~/.ray/auth_token to find)."""
    env = {k: v for k, v in os.environ.items() if k not in AUTH_ENV}
    return {**env, "HOME": str(home)}


def test_the_cluster_has_token_auth_on_and_refuses_a_driver_without_the_token(cluster, ray_auth, tmp_path):
    """The module's drivers hold the token and are let in without a warning (through Ray Client too); one without
    it is refused, in one line that says what to set (``python -m tfmatrix``), and Ray's own driver alike (a
    wrong token). A Ray Client driver without the token is refused too, but only after Ray Client's own
    connection timeout: not waited for here."""
    require(ray_auth is not None, "this Ray has no token authentication (Ray >= 2.52 has)")
    matrix = tmp_path / "auth.toml"
    matrix.write_text('[matrix]\npreset = "quick"\n[[cell]]\nname = "nowhere"\ntf = "1.15"\npool = "nopool"\n')
    let_in = tfmatrix("matrix", "--matrix", str(matrix), "--reports", str(tmp_path / "in"), *_ray(cluster))
    assert let_in.returncode == 0, let_in.stderr[-3000:]
    assert cell_docs(tmp_path / "in")["nowhere"]["status"] == "skipped"     # it joined, and asked the nodes
    assert "without token authentication" not in let_in.stderr
    port = cluster.head_node._ray_params.ray_client_server_port          # Ray Client passes the token on too
    client = tfmatrix("matrix", "--matrix", str(matrix), "--reports", str(tmp_path / "client"), "--runner", "ray",
                      "--address", f"ray://127.0.0.1:{port}")
    assert client.returncode == 0 and cell_docs(tmp_path / "client")["nowhere"]["status"] == "skipped", \
        client.stderr[-3000:]
    refused = subprocess.run([sys.executable, "-m", "tfmatrix", "matrix", "--matrix", str(matrix), "--reports",
                              str(tmp_path / "out"), *_ray(cluster)], cwd=ROOT, capture_output=True, text=True,
                             timeout=300, env=_without_token(tmp_path))
    err = refused.stderr.strip().splitlines()
    assert refused.returncode == 2 and len(err) == 1, refused.stderr[-3000:]
    assert err[0] == (f"tfmatrix: error: --runner ray: the Ray cluster at {cluster.address} refused this driver's "
                      "authentication: it uses token authentication; set RAY_AUTH_MODE=token and the cluster's token "
                      "(RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token) here too "
                      "(docs/many-machines.md#securing-the-cluster)")
    assert not (tmp_path / "out" / "cells" / "nowhere.json").exists()
    probe = f"import ray; ray.init(address={cluster.address!r}); print(ray.cluster_resources())"
    wrong = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                           env={**_without_token(tmp_path), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "0" * 64})
    assert wrong.returncode != 0 and "InvalidAuthToken" in wrong.stderr, wrong.stderr[-3000:]


def test_cpu_cells_through_ray_give_the_same_files_and_report_as_the_local_runner(cluster, tmp_path):
    common = ["matrix", "--matrix", str(DOCKER_MATRIX), "--only", CPU_CELLS[0], "--only", CPU_CELLS[1],
              "--bench", BENCH, "--redo"]
    t0 = time.monotonic()
    ray_run = tfmatrix(*common, "--reports", str(tmp_path / "ray"), *_ray(cluster))
    ray_s = time.monotonic() - t0
    assert ray_run.returncode == 0, ray_run.stderr[-3000:]
    t0 = time.monotonic()
    # the Ray runner runs whole cells (the sequential schedule): the local run does the same
    local = tfmatrix(*common, "--reports", str(tmp_path / "local"), "--runner", "docker", "--schedule", "sequential")
    local_s = time.monotonic() - t0
    assert local.returncode == 0, local.stderr[-3000:]
    print(f"\nray runner {ray_s:.1f} s, docker runner {local_s:.1f} s for {len(CPU_CELLS)} cells")
    via_ray, here = cell_docs(tmp_path / "ray"), cell_docs(tmp_path / "local")
    cpu_node = cluster.nodes_by_name["cpu"].node_id
    gpu_node = cluster.nodes_by_name["gpu"].node_id
    for name in CPU_CELLS:
        a, b = via_ray[name], here[name]
        assert a["status"] == b["status"] == "ok", a["reason"]
        assert validate(a["results"]) == [] and validate(b["results"]) == []
        assert set(a) == set(b) and a["cell"] == b["cell"] and a["request"] == b["request"]
        assert sorted(records(a)) == sorted(records(b))
        assert a["runner"]["name"] == "ray" and a["runner"]["node_runner"] == "docker"
        assert a["runner"]["image"] == b["runner"]["image"]          # the same content-hashed image
        assert a["runner"]["node"]["node_id"] in (cpu_node, gpu_node) and a["runner"]["attempts"] == 1
        assert a["results"]["environment"]["host"]["sandbox"]["net_interfaces"] == ["lo"]
        log = (tmp_path / "ray" / "cells" / f"{name}.log").read_text()
        assert "on node " in log and "[suite 1/1] ok" in log
    for reports in (tmp_path / "ray", tmp_path / "local"):
        assert (reports / "index.html").is_file() and (reports / "results.csv").is_file()
    assert "running:" in ray_run.stderr and " done; " in ray_run.stderr and " left" in ray_run.stderr
    assert "with 2 at once (" in ray_run.stderr            # two nodes of 2 CPUs: the estimate is a makespan


def test_gpu_cells_land_on_gpu_nodes_with_their_own_device_and_end_skipped(cluster, tmp_path):
    matrix = tmp_path / "gpu.toml"
    cells = "".join(f'[[cell]]\nname = "gpu{i}"\ntf = "1.15"\ntarget = "gpu"\n' for i in range(3))
    matrix.write_text('[matrix]\npreset = "quick"\n' + cells +
                      '[[cell]]\nname = "gpu-in-cpupool"\ntf = "1.15"\ntarget = "gpu"\npool = "cpupool"\n'
                      '[[cell]]\nname = "nowhere"\ntf = "1.15"\npool = "h100"\n')
    run = tfmatrix("matrix", "--matrix", str(matrix), "--reports", str(tmp_path / "r"), *_ray(cluster))
    docs = cell_docs(tmp_path / "r")
    gpu_node = cluster.nodes_by_name["gpu"].node_id
    spans = []
    for i in range(3):
        doc = docs[f"gpu{i}"]
        assert doc["status"] == "skipped" and "never run on the CPU" in doc["reason"], doc["reason"]
        placed = doc["runner"]["node"]
        assert placed["node_id"] == gpu_node and len(placed["gpu_ids"]) == 1
        assert placed["device_request"]["DeviceIDs"] == placed["gpu_ids"]
        assert placed["device_request"]["Capabilities"] == [["gpu"]] and placed["device_request"]["Count"] == 0
        spans.append((placed["started"], placed["ended"], placed["gpu_ids"][0]))
    for a in spans:                                # never two cells on one device at once
        for b in spans:
            if a is not b and a[0] < b[1] and b[0] < a[1]:
                assert a[2] != b[2]
    assert docs["gpu-in-cpupool"]["status"] == docs["nowhere"]["status"] == "skipped"
    assert docs["gpu-in-cpupool"]["reason"].startswith(
        "no node of the Ray cluster can serve it: it needs 1 CPU + 1 GPU + pool 'cpupool'")
    assert "needs 2 CPU + pool 'h100'" in docs["nowhere"]["reason"]
    assert run.returncode == 0, run.stderr[-2000:]
    assert "without token authentication" not in run.stderr          # the module's drivers hold the token


def _wait_for(predicate, timeout: float = 300, step: float = 0.3):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("timed out waiting")


def test_a_node_killed_mid_cell_costs_one_retry_then_the_cell_fails_and_nothing_else_is_lost(
        cluster, client, tmp_path):
    """Two nodes in pool "victim": whichever runs the cell is removed mid-cell, then the other (the retry)."""
    import threading

    matrix = tmp_path / "kill.toml"
    matrix.write_text('[matrix]\npreset = "quick"\n'
                      '[[cell]]\nname = "victim"\ntf = "1.15"\npool = "victim"\n'
                      '[[cell]]\nname = "survivor"\ntf = "1.15"\npool = "cpupool"\n')
    pool = [cluster.add_node(num_cpus=2, resources={"victim": 1}) for _ in range(2)]
    cluster.wait_for_nodes()
    proc = subprocess.Popen([sys.executable, "-m", "tfmatrix", "matrix", "--matrix", str(matrix), "--reports",
                             str(tmp_path / "r"), "--bench", BENCH, *_ray(cluster)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)
    reader.start()

    def placed(n: int):
        """The node running the victim's n-th attempt, once its container runs."""
        on = [line for line in list(lines) if line.startswith("[tfmatrix] victim: on ")]
        if len(on) < n or not _running(client, "victim"):
            return None
        return next((node for node in pool if node.node_id[:8] in on[n - 1]), None)

    try:
        for attempt in (1, 2):
            cluster.remove_node(_wait_for(lambda a=attempt: placed(a)), allow_graceful=False)
        proc.wait(timeout=300)
        reader.join(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = "".join(lines)
    docs = cell_docs(tmp_path / "r")
    victim = docs["victim"]
    assert victim["status"] == "failed" and victim["runner"]["attempts"] == 2, err[-3000:]
    assert victim["reason"].endswith("retried once on another node, lost again"), victim["reason"]
    assert victim["reason"].count("was lost mid-cell") == 2
    assert docs["survivor"]["status"] == "ok" and validate(docs["survivor"]["results"]) == []
    assert proc.returncode == 1 and (tmp_path / "r" / "index.html").is_file(), err[-3000:]
    assert _wait_for(lambda: not _running(client, "victim"), timeout=60)    # swept from the dead nodes' host


def test_ctrl_c_on_the_head_cancels_the_tasks_and_leaves_no_container(cluster, client, tmp_path):
    """The cell has a name of its own: another tfmatrix run on this host may be running the matrices' cells."""
    matrix = tmp_path / "interrupt.toml"
    matrix.write_text('[matrix]\npreset = "quick"\n[[cell]]\nname = "interrupt-me"\ntf = "1.15"\n')
    reports = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "tfmatrix", "matrix", "--matrix", str(matrix), "--reports",
                             str(reports), "--bench", BENCH, *_ray(cluster)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,   # SIGINT at its default, whatever this process had
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        _wait_for(lambda: _running(client, "interrupt-me"))
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]
    assert _running(client, "interrupt-me") == []
    doc = cell_docs(reports)["interrupt-me"]
    assert (doc["status"], doc["reason"]) == ("failed", "interrupted")
    assert not [p for p in (reports / "cells").iterdir() if p.name.endswith(".partial")]


SHIPPED_BENCH = '''from suite.api import UserBenchmark


class Sum(UserBenchmark):
    name = "shipped.sum"
    title = "a user benchmark that reached the node through Ray"
    params = {"n": [1000]}

    def setup(self, p, env):
        x = env.rng().rand(p["n"]).astype("float32")
        return lambda: float(x.sum())


BENCHMARKS = [Sum()]
'''


def test_a_bare_node_gets_the_heads_wheels_and_benchmark_files_through_ray(cluster, client, tmp_path):
    """A node with its own empty cache and wheelhouse, offline: all it builds and mounts came from the head.

    The cell has a name of its own, so its image is built here (removed first,
    and after): only a build needs the wheels.
    """
    import hashlib
    import json

    from tfmatrix.provision import wheelhouse

    name = "bare-node"
    for image in client.images.list(name=f"tfmatrix/{name}"):
        client.images.remove(image.id, force=True)
    node_cache = tmp_path / "node-cache"
    bare = cluster.add_node(num_cpus=2, resources={"bare": 1}, object_store_memory=600 * 2**20, env_vars={
        "TFMATRIX_CACHE": str(node_cache), "TFMATRIX_WHEELHOUSE": str(node_cache / "wheels"),
        "TFMATRIX_OFFLINE": "1", "PIP_NO_INDEX": "1"})
    cluster.wait_for_nodes()
    bench = tmp_path / "mine" / "shipped_bench.py"
    bench.parent.mkdir()
    bench.write_text(SHIPPED_BENCH)
    matrix = tmp_path / "bare.toml"
    # one round: the wheels travel once, and the second round would find them there
    matrix.write_text(f'[matrix]\npreset = "quick"\nrounds = 1\n'
                      f'[[cell]]\nname = "{name}"\ntf = "1.15"\npool = "bare"\n')
    try:
        run = tfmatrix("matrix", "--matrix", str(matrix), "--reports", str(tmp_path / "r"), "--bench", BENCH,
                       "--bench", "shipped.*", "--bench-path", str(bench.parent), *_ray(cluster))
        doc = cell_docs(tmp_path / "r")[name]
        assert run.returncode == 0 and doc["status"] == "ok", (doc["reason"], run.stderr[-3000:])
        assert doc["runner"]["node"]["node_id"] == bare.node_id
        got, sent = doc["runner"]["wheels_from_head"], doc["runner"]["wheels_sent"]
        assert got["count"] == sent["count"] == doc["runner"]["wheels"]["count"] > 5 and got["bytes"] > 10**8
        assert doc["runner"]["wheels"]["how"] == "from the head"
        manifests = list((node_cache / "wheels" / "manifests").glob("*.json"))
        assert len(manifests) == 1
        for file_name in json.loads(manifests[0].read_text())["files"]:   # the head's very files
            mine = (node_cache / "wheels" / file_name).read_bytes()
            head = (wheelhouse.wheelhouse_dir() / file_name).read_bytes()
            assert hashlib.sha256(mine).digest() == hashlib.sha256(head).digest(), file_name
        assert (node_cache / "bench" / doc["request"]["bench"] / "0" / "mine" / "shipped_bench.py").is_file()
        recs = records(doc).values()
        assert any(r["benchmark"] == "shipped.sum" and r["status"] == "ok" for r in recs), list(recs)
        log = (tmp_path / "r" / "cells" / f"{name}.log").read_text()
        assert "lacks the cell's wheels: asking the head" in log and "received " in log
    finally:
        cluster.remove_node(bare)
        for image in client.images.list(name=f"tfmatrix/{name}"):
            client.images.remove(image.id, force=True)


def test_a_ray_client_address_runs_the_cell_from_outside_the_cluster(cluster, tmp_path):
    """``ray://HEAD:PORT`` (Ray Client): the driver is not a cluster process; the cell file comes back all the same."""
    port = cluster.head_node._ray_params.ray_client_server_port
    address = f"ray://127.0.0.1:{port}"
    run = tfmatrix("matrix", "--matrix", str(DOCKER_MATRIX), "--only", CPU_CELLS[0], "--bench", BENCH, "--redo",
                   "--reports", str(tmp_path / "r"), "--runner", "ray", "--address", address)
    doc = cell_docs(tmp_path / "r")[CPU_CELLS[0]]
    assert run.returncode == 0 and doc["status"] == "ok", (doc["reason"], run.stderr[-3000:])
    assert doc["runner"]["address"] == address and doc["runner"]["node"]["node_id"] in (
        cluster.nodes_by_name["cpu"].node_id, cluster.nodes_by_name["gpu"].node_id)
    assert validate(doc["results"]) == []


def test_a_pool_axis_runs_one_cell_on_two_pools_and_the_report_puts_them_side_by_side(cluster, tmp_path):
    """The hardware axis end to end: two nodes, one per pool; the same cell on each; the report's Hardware section."""
    import csv

    pools = {p: cluster.add_node(num_cpus=2, resources={p: 1}) for p in ("hwa", "hwb")}
    cluster.wait_for_nodes()
    matrix = tmp_path / "axis.toml"
    matrix.write_text('[matrix]\npreset = "quick"\n[[product]]\ntf = "1.15"\npool = ["hwa", "hwb"]\n')
    try:
        run = tfmatrix("matrix", "--matrix", str(matrix), "--reports", str(tmp_path / "r"), "--bench", BENCH,
                       *_ray(cluster))
        docs = cell_docs(tmp_path / "r")
        assert run.returncode == 0, run.stderr[-3000:]
        assert set(docs) == {"tf1.15-cpu-hwa", "tf1.15-cpu-hwb"}
        for pool, node in pools.items():
            doc = docs[f"tf1.15-cpu-{pool}"]
            assert doc["status"] == "ok" and doc["runner"]["node"]["node_id"] == node.node_id
        page = (tmp_path / "r" / "index.html").read_text()
        assert 'id="hardware"' in page and "tf1.15-cpu-hwa" in page and "tf1.15-cpu-hwb" in page
        with open(tmp_path / "r" / "hardware.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert rows and {(r["cell_a"], r["cell_b"]) for r in rows} == {("tf1.15-cpu-hwa", "tf1.15-cpu-hwb")}
        timed = [r for r in rows if r["ratio"]]
        assert timed and all(float(r["ci_low"]) <= float(r["ratio"]) <= float(r["ci_high"]) for r in timed)
    finally:
        for node in pools.values():
            cluster.remove_node(node)


def test_a_node_without_a_docker_engine_runs_cpu_cells_in_virtualenvs_and_skips_gpu_cells(cluster, tmp_path):
    """The node's engine does not answer (DOCKER_HOST points nowhere): the venv runner, with its skip rules."""
    node = cluster.add_node(num_cpus=2, num_gpus=1, resources={"noengine": 1}, env_vars={
        "DOCKER_HOST": "unix:///nonexistent/docker.sock", "TFMATRIX_VENV_ROOT": str(ROOT / ".nox")})
    cluster.wait_for_nodes()
    matrix = tmp_path / "noengine.toml"
    matrix.write_text('[matrix]\npreset = "quick"\n[cluster]\npool = "noengine"\n'
                      '[[cell]]\ntf = "1.15"\n[[cell]]\ntf = "1.15"\ntarget = "gpu"\n')
    try:
        run = tfmatrix("matrix", "--matrix", str(matrix), "--reports", str(tmp_path / "r"), "--bench", BENCH,
                       *_ray(cluster))
        docs = cell_docs(tmp_path / "r")
        cpu, gpu = docs["tf1.15-cpu"], docs["tf1.15-gpu"]
        assert cpu["status"] == "ok", (cpu["reason"], run.stderr[-3000:])
        assert cpu["runner"]["node_runner"] == "venv" and cpu["runner"]["node"]["node_id"] == node.node_id
        assert cpu["runner"]["venv"].startswith(str(ROOT / ".nox"))
        assert validate(cpu["results"]) == []
        assert gpu["status"] == "skipped" and "CPU cells only" in gpu["reason"], gpu["reason"]
        assert gpu["runner"]["node"]["node_id"] == node.node_id
    finally:
        cluster.remove_node(node)
