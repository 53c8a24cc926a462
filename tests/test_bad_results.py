"""Cell result files that are malformed, truncated or hand-edited: refused with one line, never a crash.

Every malformed file here is generated from a valid one in the test (a field
replaced by a value of another type, the JSON cut short), so the tests follow
the format as it grows instead of a fixed set of hand-written fixtures.
"""
from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_docs import cell_doc, noisy, record, results_doc, synthetic_matrix, training_params, write

from tfmatrix import cli
from tfmatrix.analysis.cells import load_file
from tfmatrix.errors import UserError
from tfmatrix.report.build import build

WRONG_VALUES: tuple[Any, ...] = ("oops", 5, [1], {"a": 1}, True)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every field path in ``value`` (the first item of each list stands for all of them)."""
    if prefix:
        yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list) and value:
        yield from _paths(value[0], (*prefix, 0))


def _replaced(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    target: Any = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


def _good_cell() -> dict[str, Any]:
    recs = [record("training.question", training_params(mode=m), noisy(0.004, seed=i))
            for i, m in enumerate(("eager", "graph"))]
    doc = cell_doc("tf2.0-cpu", "2.0", results=results_doc(recs, tf="2.0.4"))
    doc["last_attempt"] = {"status": "failed", "reason": "interrupted", "finished": "2026-01-01T00:00:00+00:00",
                           "log": "tf2.0-cpu.attempt.log"}
    return doc


def test_the_issue_s_two_wrong_types_are_refused_naming_file_and_field(tmp_path: Path) -> None:
    for key, value, field in (("cell", "oops", "cell"), ("request", 5, "request")):
        doc = _good_cell()
        doc[key] = value
        path = write(tmp_path, doc, f"{key}.json")
        with pytest.raises(UserError) as e:
            load_file(path)
        message = str(e.value)
        assert message.startswith(f"{path}: field '{field}' is ") and "\n" not in message, message


@pytest.mark.slow
def test_every_field_of_the_wrong_type_is_refused_or_harmless_never_a_crash(tmp_path: Path) -> None:
    """Each field of a valid cell file, replaced by values of other types: load refuses it with one
    line naming the field, or the whole report builds. Anything else (a TypeError deep in pandas or
    the HTML) fails the test."""
    good = _good_cell()
    other = cell_doc("tf1.15-cpu", "1.15", results=results_doc(
        [record("training.question", training_params(), noisy(0.002))], tf="1.15.5"))
    tried = refused = 0
    for path in _paths(good):
        if path in (("schema",), ("schema_version",)):
            continue
        built = 0
        for value in WRONG_VALUES:
            doc = _replaced(good, path, value)
            cells = tmp_path / f"case{tried}"
            write(cells, other)
            file = write(cells, doc, "tf2.0-cpu.json")
            tried += 1
            try:
                load_file(file)
            except UserError as e:
                assert str(e).startswith(f"{file}: ") and "\n" not in str(e), (path, value, str(e))
                refused += 1
                continue
            if built == 1:      # accepted once: the report reads this field safely (keeps the test fast)
                continue
            built += 1
            try:
                build(cells, cells, generated="2026-01-01T00:00:00+00:00")
            except UserError:
                pass
            except Exception as e:  # pragma: no cover - the failure this test exists for
                raise AssertionError(f"field {'.'.join(map(str, path))} = {value!r}: {type(e).__name__}: {e}") from e
    assert tried > 700 and refused > 300


def test_one_truncated_file_does_not_block_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cells = tmp_path / "cells"
    paths = synthetic_matrix(cells)
    text = paths["tf2.10"].read_text()
    paths["tf2.10"].write_text(text[: len(text) // 2])          # what a crash or a full disk leaves
    bad_type = _replaced(json.loads(paths["tf1.15"].read_text()), ("request",), 5)
    paths["tf1.15"].write_text(json.dumps(bad_type))
    code = cli.main(["report", "--cells", str(cells), "--out", str(tmp_path), "--matrix", str(tmp_path / "none")])
    err = capsys.readouterr().err
    assert code == 2
    html = (tmp_path / "index.html").read_text()            # written before the non-zero exit
    assert "tf2.0-cpu" in html and "2 cell files could not be read" in html
    failures = html.split('<section id="failures">')[1]
    assert "b-tf2.10-cpu.json" in failures and "not valid JSON" in failures
    assert "z-tf1.15-cpu.json" in failures and "field &#39;request&#39; is a number (5), expected an object" in failures
    assert (tmp_path / "results.csv").read_text().count("tf2.0-cpu") > 0
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("tfmatrix: error: ") for line in lines), err
    assert "b-tf2.10-cpu.json: not valid JSON" in err and "z-tf1.15-cpu.json: field 'request'" in err
    assert "Traceback" not in err


def test_a_duplicate_cell_is_refused_and_the_first_file_kept(tmp_path: Path) -> None:
    cells = tmp_path / "cells"
    write(cells, _good_cell(), "a.json")
    write(cells, _good_cell(), "b.json")
    summary = build(cells, tmp_path, generated="2026-01-01T00:00:00+00:00")
    assert summary.cells == 1 and [r.path.name for r in summary.refused] == ["b.json"]
    assert "also in" in summary.refused[0].reason and "1 cell file refused" in summary.line()


def test_no_readable_cell_at_all_is_one_error_line(tmp_path: Path) -> None:
    cells = tmp_path / "cells"
    cells.mkdir()
    (cells / "x.json").write_text("{")
    with pytest.raises(UserError, match=r"none of its 1 cell files can be read: .*x.json: not valid JSON"):
        build(cells, tmp_path)


def test_messages_name_the_real_command_and_a_file_given_as_cells_dir(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError) as e:
        build(empty, tmp_path)
    assert "`python -m tfmatrix matrix`" in str(e.value) and "tfmatrix run`" not in str(e.value)
    with pytest.raises(UserError) as e:
        build(tmp_path / "missing", tmp_path)
    assert "`python -m tfmatrix matrix`" in str(e.value) and "tfmatrix run`" not in str(e.value)
    file = tmp_path / "cells.json"
    file.write_text("{}")
    with pytest.raises(UserError) as e:
        build(file, tmp_path)
    assert str(e.value).startswith(f"{file}: is a file, not a directory; pass --cells DIR")
