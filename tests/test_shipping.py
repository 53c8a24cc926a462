"""What travels to a Ray node (runners/shipping.py), without Ray: the head's and node's halves wired directly.

The real path (object store, mailbox actor, a node with its own empty
wheelhouse) runs in tests/test_ray_cluster.py.
"""
from __future__ import annotations

import hashlib
import threading

import pytest

from tfmatrix.matrix.user_benchmarks import files_hash
from tfmatrix.provision import wheelhouse
from tfmatrix.runners import shipping

REQS = ["demo==1.0", "dep==2.0"]
PY = "3.11"
FILES = [("demo-1.0-py3-none-any.whl", b"demo wheel bytes" * 100), ("dep-2.0-py3-none-any.whl", b"dep" * 7)]


class Wire:
    """The head and one node joined by plain calls: put = a dict store, the mailbox = a dict."""

    def __init__(self, head_root, tamper: bool = False) -> None:
        self.head_root, self.tamper = head_root, tamper
        self.objects: dict[int, bytes] = {}
        self.mailbox = shipping.Mailbox()
        self.asked: list[tuple[str, object]] = []
        self.shipment: shipping.Shipment | None = None

    def put(self, data: bytes) -> int:
        self.objects[len(self.objects)] = data + (b"x" if self.tamper else b"")
        return len(self.objects) - 1

    def ask(self, event) -> None:       # the head's RayRunner._follow, reduced to the wheels
        self.asked.append(event)
        kind, value = event
        if kind == "need_wheels":
            self.shipment = shipping.serve_wheels(value["requirements"], value["python"], self.put,
                                                  lambda line: None, root=self.head_root)
            self.mailbox.put(value["key"], self.shipment.reply)

    def node(self, root, **kw) -> shipping.HeadWheels:
        return shipping.HeadWheels(self.ask, self.mailbox.take, "cell#1", self.objects.__getitem__, root=root,
                                   poll_s=0.01, **kw)


@pytest.fixture
def head_root(tmp_path):
    root = tmp_path / "head"
    wheelhouse.store(REQS, PY, FILES, root)   # as a head's earlier resolution left them
    return root


def test_a_node_without_the_wheels_gets_the_heads_files_and_manifest(head_root, tmp_path):
    wire = Wire(head_root)
    source = wire.node(tmp_path / "node")
    got = source(REQS, PY, lambda line: None)
    assert [k for k, _ in wire.asked] == ["need_wheels", "wheels_received"]
    assert sorted(f.name for f in got.files) == sorted(n for n, _ in FILES)
    for name, data in FILES:
        assert (tmp_path / "node" / name).read_bytes() == data
    assert got.how == "from the head" and source.received["count"] == 2
    assert source.received["bytes"] == sum(len(d) for _, d in FILES)
    assert wire.shipment is not None and wire.shipment.record()["count"] == 2
    again = wheelhouse.cached(REQS, PY, tmp_path / "node")      # the manifest came too: next time nothing is asked
    assert again is not None and sorted(f.name for f in again.files) == sorted(f.name for f in got.files)


def test_a_node_that_has_the_set_asks_nothing(head_root, tmp_path):
    wheelhouse.store(REQS, PY, FILES, tmp_path / "node")
    wire = Wire(head_root)
    got = wire.node(tmp_path / "node")(REQS, PY, lambda line: None)
    assert wire.asked == [] and got.how == "manifest"


def test_a_file_changed_in_transit_is_refused(head_root, tmp_path):
    wire = Wire(head_root, tamper=True)
    with pytest.raises(wheelhouse.WheelhouseError, match="sha256 mismatch"):
        wire.node(tmp_path / "node")(REQS, PY, lambda line: None)
    assert wheelhouse.cached(REQS, PY, tmp_path / "node") is None


def test_the_heads_failure_to_resolve_reaches_the_node_as_its_reason(tmp_path, monkeypatch):
    def fail(*a, **k):
        raise wheelhouse.WheelhouseError("pip could not resolve demo==1.0")

    monkeypatch.setattr(wheelhouse, "ensure", fail)
    wire = Wire(tmp_path / "head")
    with pytest.raises(wheelhouse.WheelhouseError, match="the head could not provide the wheels: pip could not"):
        wire.node(tmp_path / "node")(REQS, PY, lambda line: None)


def test_a_head_that_never_answers_ends_in_an_error_not_a_hang(tmp_path):
    source = shipping.HeadWheels(lambda e: None, lambda k: None, "k", bytes, timeout_s=0.05, poll_s=0.01,
                                 root=tmp_path / "node")
    with pytest.raises(wheelhouse.WheelhouseError, match="no answer from the head"):
        source(REQS, PY, lambda line: None)


def test_store_refuses_a_name_that_leaves_the_wheelhouse(tmp_path):
    with pytest.raises(wheelhouse.WheelhouseError, match="refusing"):
        wheelhouse.store(REQS, PY, [("../evil.whl", b"x")], tmp_path)


def test_concurrent_stores_of_one_set_leave_whole_files(tmp_path):
    threads = [threading.Thread(target=wheelhouse.store, args=(REQS, PY, FILES, tmp_path)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name, data in FILES:
        assert hashlib.sha256((tmp_path / name).read_bytes()).digest() == hashlib.sha256(data).digest()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".incoming")]


def test_benchmark_files_unpack_on_the_node_with_the_heads_hash(tmp_path):
    one = tmp_path / "mine.py"
    one.write_text("X = 1\n")
    tree = tmp_path / "benches"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.py").write_text("A = 1\n")
    (tree / "sub" / "b.py").write_text("B = 2\n")
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"junk")
    paths = (one, tree)
    blob = shipping.pack_files(paths)
    got = shipping.unpack_files(blob, [p.name for p in paths], files_hash(paths), tmp_path / "node")
    assert [p.name for p in got] == ["mine.py", "benches"]
    assert files_hash(got) == files_hash(paths)
    assert (got[1] / "sub" / "b.py").read_text() == "B = 2\n"
    assert not (got[1] / "__pycache__").exists()
    assert shipping.unpack_files(b"not read again", [p.name for p in paths], files_hash(paths),
                                 tmp_path / "node") == got


def test_benchmark_files_that_do_not_match_the_heads_hash_are_refused(tmp_path):
    one = tmp_path / "mine.py"
    one.write_text("X = 1\n")
    blob = shipping.pack_files([one])
    with pytest.raises(ValueError, match="not the head's"):
        shipping.unpack_files(blob, ["mine.py"], "0" * 16, tmp_path / "node")
    assert not (tmp_path / "node" / ("0" * 16)).exists()
