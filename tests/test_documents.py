"""The results model (``tfmatrix.results.documents``): one load and one dump per document, versions and their upgrades.

``tests/fixtures/cell-v1-tf1.15-cpu.json`` is a v1 cell file as users have it
on disk; it must load through the model and dump back to the same JSON. The
upgrade tests register an upgrade from a synthetic older version, so the path
a future v2 takes is exercised today.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tfmatrix.errors import UserError
from tfmatrix.results import documents
from tfmatrix.results.documents import CELL_FORMAT, RESULTS_FORMAT, CellDoc, SuiteResults, read_cell
from tfmatrix.results.formats import Format

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "cell-v1-tf1.15-cpu.json"


def _fixture() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(FIXTURE.read_text())
    return doc


def test_the_v1_fixture_loads_through_the_model_and_dumps_back_to_the_same_json() -> None:
    doc = read_cell(FIXTURE)
    assert (doc.name, doc.status, doc.cell["tf"], doc.runner["name"]) == ("tf1.15-cpu", "ok", "1.15.5", "docker")
    assert doc.results is not None and doc.results.status == "ok" and len(doc.results.records) > 9
    assert doc.complete and doc.rounds == 1 and doc.last_attempt is None
    dumped = doc.to_json()
    assert dumped == _fixture()
    assert list(dumped) == list(_fixture()) and list(dumped["results"]) == list(_fixture()["results"])


def test_a_bare_suite_results_file_is_read_as_a_cell_and_only_where_asked(tmp_path: Path) -> None:
    path = tmp_path / "tf1.15-cpu.json"
    path.write_text(json.dumps(_fixture()["results"]))
    doc = read_cell(path)
    assert (doc.name, doc.status, doc.runner) == ("tf1.15-cpu", "ok", {"name": "docker"})
    with pytest.raises(UserError, match="not a tfmatrix cell file"):
        read_cell(path, bare_results=False)


def test_an_upgrade_from_an_older_version_runs_on_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A synthetic v0 called ``timings`` ``durations``; the registered upgrade renames it."""
    def v0_to_v1(doc: dict[str, Any]) -> dict[str, Any]:
        doc["timings"] = doc.pop("durations")
        return doc

    old = _fixture()
    old["schema_version"] = 0
    old["durations"] = old.pop("timings")
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    with pytest.raises(UserError, match=r"old.json: cell file schema_version 0 is older than this tfmatrix reads"):
        read_cell(path)
    monkeypatch.setattr(documents, "CELL_FORMAT", Format(CELL_FORMAT.schema, 1, {0: v0_to_v1}, "cell file"))
    doc = read_cell(path)
    assert doc.timings == _fixture()["timings"] and "durations" not in doc.extra
    assert doc.to_json() == _fixture()


def test_the_day_v2_appears_the_v1_fixture_loads_through_its_upgrade(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both formats one version newer: the v1 fixture goes through both upgrades and dumps as v2."""
    def cell_v1_to_v2(doc: dict[str, Any]) -> dict[str, Any]:
        return {**doc, "measured_on": doc["host"].get("hostname")}

    def results_v1_to_v2(doc: dict[str, Any]) -> dict[str, Any]:
        return {**doc, "warnings": [*doc["warnings"], "upgraded from v1"]}

    monkeypatch.setattr(documents, "CELL_FORMAT", Format(CELL_FORMAT.schema, 2, {1: cell_v1_to_v2}, "cell file"))
    monkeypatch.setattr(documents, "RESULTS_FORMAT",
                        Format(RESULTS_FORMAT.schema, 2, {1: results_v1_to_v2}, "suite results"))
    monkeypatch.setattr(SuiteResults, "strict_problems", lambda self: [])   # suite.schema knows v1 only
    doc = read_cell(FIXTURE)
    assert doc.extra == {"measured_on": "vm"}
    assert doc.results is not None and doc.results.warnings[-1] == "upgraded from v1"
    dumped = doc.to_json()
    assert dumped["schema_version"] == 2 and dumped["results"]["schema_version"] == 2


@pytest.mark.parametrize(("where", "value", "field"), [
    (("timings",), "slow", "timings"),
    (("results", "records", 0, "samples"), "many", "results.records[0].samples"),
    (("last_attempt",), ["failed"], "last_attempt"),
    (("status",), "maybe", "status"),
])
def test_a_wrong_type_is_one_line_naming_the_file_and_the_key(tmp_path: Path, where: tuple[Any, ...], value: Any,
                                                              field: str) -> None:
    doc = _fixture()
    target: Any = doc
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError) as e:
        CellDoc.from_json(json.loads(path.read_text()), path)
    assert str(e.value).startswith(f"{path}: field '{field}' is ") and "\n" not in str(e.value)


def test_cell_statuses_are_spelled_once():
    """A tuple of cell statuses written out again (``("failed", "timeout")``) drifts when a status is added."""
    import ast

    from tfmatrix.results.documents import CELL_STATUSES

    root = Path(__file__).resolve().parent.parent / "tfmatrix"
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "documents.py" and path.parent == root / "results":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 2 and all(
                    isinstance(e, ast.Constant) and e.value in CELL_STATUSES for e in node.elts):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    assert found == [], "use tfmatrix.results.documents.CELL_STATUSES / CELL_FAILURES"


def test_a_cell_request_is_stored_as_earlier_versions_stored_it_and_read_back_typed() -> None:
    """``CellRequest.to_json`` is the dict reuse compares: same keys, same order, optional keys only when set."""
    from types import SimpleNamespace

    from tfmatrix.execution.request import RunRequest
    from tfmatrix.results.documents import CellRequest

    cell = SimpleNamespace(name="c", target="cpu", preset="quick", repeats=None)
    plain = RunRequest(suite="s", rounds=3).for_cell(cell)
    assert list(plain.to_json().items()) == [("preset", "quick"), ("only", []), ("repeats", None), ("suite", "s"),
                                             ("rounds", 3), ("schedule", "interleaved")]
    both = RunRequest(only=("a*",), bench_paths=(Path("/x"),), bench="h", processes=2).for_cell(cell).to_json()
    assert list(both)[-2:] == ["bench", "processes"] and both["only"] == ["a*"]
    assert CellRequest.from_json(plain.to_json()) == plain
    stored = read_cell(FIXTURE)
    assert stored.request == _fixture()["request"]          # the file's dict, kept as it is
    typed = stored.cell_request
    assert (typed.preset, typed.suite, typed.only) == (stored.request["preset"], stored.request["suite"],
                                                       tuple(stored.request["only"]))
    assert CellRequest.from_json({}).rounds == 1 and CellRequest.from_json({}).processes is None
