"""Every CSV tfmatrix writes opens in a spreadsheet as text, never as a formula (issue 59: files from others never
reach outside their folder).

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a CR is a formula
to a spreadsheet; a cell's name, a benchmark's parameter or a claim's source
from someone else's file could be one. The one writer
(``tfmatrix.results.csv_files``) prefixes such text with ``'`` and leaves
numbers alone: its rule here, then every CSV writer fed formula text the way
its own tests build their inputs, and the report of the golden cells with a
user's claim and a benchmark parameter that are formulas. No CSV is written
past the one writer, and every ``*_csv`` writer is fed here (both read from
the source).
"""
from __future__ import annotations

import csv
import io
import json
import re
import tarfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from report_docs import cell_doc, noisy, record, results_doc, write
from series_runs import run_series

from tfmatrix.analysis.cells import load_dir, load_file
from tfmatrix.analysis.claims.answers import compute_claims
from tfmatrix.analysis.claims.sources import own_claims
from tfmatrix.analysis.compare.ab import compare_sides
from tfmatrix.analysis.compare.sets import compare_paths
from tfmatrix.analysis.compare.upgrade import upgrade_view
from tfmatrix.analysis.frame import build_frame
from tfmatrix.analysis.series.answers import cell_series
from tfmatrix.history.timeline import missing_points, timeline_csv
from tfmatrix.matrix import load
from tfmatrix.report.build import build
from tfmatrix.report.claims_view import claims_csv, rows
from tfmatrix.report.compare_view import ab_csv, compare_csv
from tfmatrix.report.hardware_view import hardware_csv, hardware_pairs
from tfmatrix.report.series_view import series_csv, values_csv
from tfmatrix.report.tables import results_csv
from tfmatrix.report.upgrade_view import upgrade_csv
from tfmatrix.results.archive import read_archive
from tfmatrix.results.csv_files import csv_text, frame_csv, inert
from tfmatrix.results.history_docs import TimelinePoint

ROOT = Path(__file__).resolve().parent.parent
STARTS = ("=", "+", "-", "@", "\t", "\r")
HYPERLINK = '=HYPERLINK("http://evil.example/","claim")'


def number(cell: str) -> bool:
    """Whether a CSV cell is just a number ("-1.5", "-12%", "-inf"): a spreadsheet reads it as one."""
    try:
        float(cell.removesuffix("%"))
    except ValueError:
        return False
    return True


def cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]


def live(text: str) -> list[str]:
    """The cells of CSV ``text`` a spreadsheet would take as a formula (a lone "-" is the frame's "none")."""
    return [c for c in cells(text) if c.startswith(STARTS) and not number(c) and c != "-"]


# --------------------------------------------------------------------------- the rule


@pytest.mark.parametrize("text", [HYPERLINK, "+cmd", "-x", "@SUM(1,2)", "\t=1+2", "\r=1+2", "-1.5 ms", "--1",
                                  "+1+cmd", "-2+3", "=", "@"])
def test_text_a_spreadsheet_would_run_gets_a_leading_quote(text: str) -> None:
    assert inert(text) == "'" + text


@pytest.mark.parametrize("value", [1, -1, -1.5, 0.0, float("-inf"), float("nan"), True, False, None, "", "-",
                                   "-1.5", "+3", "-12%", "1e-3", "-1e-3", "-.5", "-inf", "nan", "ordinary text",
                                   "tf2.15-cpu", "a=b", "x@y", "'=already quoted"])
def test_numbers_plain_number_text_and_ordinary_text_are_left_alone(value: Any) -> None:
    assert inert(value) is value


def test_csv_text_quotes_commas_quotes_and_newlines_as_before() -> None:
    rows = [["a,b", 'say "hi"', "two\nlines", HYPERLINK, -1.5, None, True],
            ["\r=1\n", "-12%", "+cmd,x", 3, "", "-", "@SUM(1,2)"]]
    text = csv_text(["name", "=head", "c", "d", "e", "f", "g"], rows)
    assert text.endswith("\n") and "\r\n" not in text
    back = list(csv.reader(io.StringIO(text, newline="")))
    assert back == [["name", "'=head", "c", "d", "e", "f", "g"],
                    ["a,b", 'say "hi"', "two\nlines", "'" + HYPERLINK, "-1.5", "", "True"],
                    ["'\r=1\n", "-12%", "'+cmd,x", "3", "", "-", "'@SUM(1,2)"]]
    good = [["tf2.15-cpu", "-0.5", 1.25, None]]       # a good file is what csv.writer wrote before
    plain = io.StringIO()
    csv.writer(plain, lineterminator="\n").writerows([["cell", "x", "y", "z"], *good])
    assert csv_text(["cell", "x", "y", "z"], good) == plain.getvalue()


def test_a_frame_is_written_as_to_csv_writes_it_its_text_inert() -> None:
    df = pd.DataFrame({"cell": ["tf2.15-cpu", "=cmd", "-"], "t": [-0.5, 1e-3, float("nan")], "n": [1, -2, 3],
                       "ok": [True, False, True], "param": [HYPERLINK, 0.1 + 0.2, None], "@x": ["-12%", "\t", "a"]})
    plain = df.to_csv(index=False, float_format="%.9g", lineterminator="\n")
    ours = frame_csv(df, float_format="%.9g")
    expected = [[inert(c) for c in row] for row in csv.reader(io.StringIO(plain, newline=""))]
    assert list(csv.reader(io.StringIO(ours, newline=""))) == expected
    assert live(ours) == [] and "'=cmd" in cells(ours) and "'" + HYPERLINK in cells(ours)
    good = df.drop(columns=["@x"]).iloc[[0, 2]].assign(param=[0.1 + 0.2, "a, b"])     # its "-": the frame's none
    assert frame_csv(good, "%.9g") == good.to_csv(index=False, float_format="%.9g", lineterminator="\n")
    assert df["cell"].tolist() == ["tf2.15-cpu", "=cmd", "-"]         # the caller's frame is not changed


# --------------------------------------------------------------------------- every writer, fed formula text

CELL_A, CELL_B = "=cmd|' C calc'!A0-cpu", "@SUM(1,2)-cpu"          # cell names: file names too
CPU_A, CPU_B = "-evil CPU", "+evil CPU"


def _params(path: str) -> dict[str, Any]:
    return {"path": path, "note": "-2+3", "api": "tf.keras", "mode": "eager"}


def _cell(name: str, cpu: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """A cell file as tests/test_hardware.py makes one: the same TF on another CPU model."""
    results = results_doc(records, tf="2.0.4", cell=name)
    results["environment"]["host"]["cpu"]["model"] = cpu
    return cell_doc(name, "2.0", results=results)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """Two cells whose names, CPU models, benchmark, parameters and failure reason are formulas (an upgrade pair,
    a hardware pair, two files to compare), an ab run's cell file, and a series of kept runs of such a cell."""
    from test_ab_order import SIDES, _ab_cell

    tmp = tmp_path_factory.mktemp("hostile")
    a = [record("+own.model", _params(HYPERLINK), noisy(10e-3, seed=1), seed="user"),
         record("+own.model", _params("\tfit"), noisy(5e-3, seed=2), seed="user")]
    b = [record("+own.model", _params(HYPERLINK), noisy(13e-3, seed=3), seed="user"),
         record("+own.model", _params("\tfit"), status="error", reason="=cmd()\nmore", seed="user")]
    file_a = write(tmp / "cells", _cell(CELL_A, CPU_A, a))
    file_b = write(tmp / "cells", _cell(CELL_B, CPU_B, b))
    loaded = load_dir(tmp / "cells").cells
    ab = _ab_cell(tmp / "ab", 3, 4, 6, [SIDES[r % 2] for r in range(6)], changes={1: 1.3}, name="-ab-cpu")
    reports = run_series(tmp / "series", 7, lambda k, v: 1.3 if k >= 4 and v["loop"] == "fit" else 1.0,
                         name="=series-cpu", api="keras")
    return SimpleNamespace(cells=loaded, frame=build_frame(loaded), file_a=file_a, file_b=file_b,
                           ab=compare_sides([load_file(ab)]), series=cell_series(read_archive(reports).runs),
                           reports=reports)


WRITERS: dict[str, Callable[[SimpleNamespace], str]] = {
    "results_csv": lambda h: results_csv(h.frame),
    "upgrade_csv": lambda h: upgrade_csv(upgrade_view(h.frame, CELL_A, CELL_B)),
    "hardware_csv": lambda h: hardware_csv(hardware_pairs(h.frame, h.cells)),
    "compare_csv": lambda h: compare_csv(compare_paths(h.file_a, h.file_b)),
    "ab_csv": lambda h: ab_csv(h.ab),
    "series_csv": lambda h: series_csv(h.series),
    "values_csv": lambda h: values_csv(h.series),
    "timeline_csv": lambda h: timeline_csv(
        missing_points("2.0", CELL_A, "\t=cmd() failed") + [TimelinePoint(
            "predict_slower_after_compile", "2.0", CELL_B, 1.5, 1.2, 1.8, "holds", line="-x vs +y", reason="",
            source="@cells/x.json")]),
    "claims_csv": lambda h: claims_csv(rows(h.claims)),
}


@pytest.fixture(scope="module")
def hostile_claims(hostile: SimpleNamespace, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """``hostile`` and a user's claim that is formulas, judged in the golden cells."""
    made = _golden_with_formulas(tmp_path_factory.mktemp("claims"))
    golden = load_dir(made.cells).cells
    return SimpleNamespace(**vars(hostile), claims=compute_claims(build_frame(golden), golden, made.claims))


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.slow
def test_formula_text_through_every_csv_writer_is_inert(writer: str, hostile: SimpleNamespace,
                                                        request: pytest.FixtureRequest) -> None:
    h = request.getfixturevalue("hostile_claims") if writer == "claims_csv" else hostile
    text = WRITERS[writer](h)
    assert live(text) == []
    made_inert = [c for c in cells(text) if c.startswith("'") and c[1:].startswith(STARTS)]
    assert made_inert, f"{writer}: no formula text reached it: the test feeds it nothing to make inert"


def test_every_csv_writer_is_fed_formula_text_here() -> None:
    """A new ``*_csv`` writer joins ``WRITERS`` (and writes through ``results.csv_files``)."""
    found = {name for p in (ROOT / "tfmatrix").rglob("*.py") if p.name != "csv_files.py"
             for name in re.findall(r"^def (\w+_csv)\([^\n]*\) -> str:", p.read_text(encoding="utf-8"), re.M)}
    assert found == set(WRITERS)


def test_no_csv_is_written_past_the_one_writer() -> None:
    """``csv.writer``, ``csv.DictWriter`` and pandas' ``to_csv`` appear in ``results/csv_files.py`` alone, of
    everything that writes files a user opens (tfmatrix/, the suite, the scripts)."""
    writes = ("csv.writer(", "csv.DictWriter(", ".to_csv(")
    found = sorted(str(p.relative_to(ROOT)) for folder in ("tfmatrix", "suite", "scripts")
                   for p in (ROOT / folder).rglob("*.py") if any(w in p.read_text(encoding="utf-8") for w in writes))
    assert found == ["tfmatrix/results/csv_files.py"]


# --------------------------------------------------------------------------- the report, end to end

OWN = '''
[[claim]]
key = "evil_mine"
source = "@SUM(1,2)"
claim = '=HYPERLINK("http://evil.example/","claim")'
a = "+cmd"
b = "-x"
faster = "b"

[[claim.compare]]
benchmarks = ["inference.tiny"]
a = { path = "predict", stage = "compiled", api = "tf.keras", mode = "eager" }
b = { path = "call", stage = "compiled", api = "tf.keras", mode = "eager" }
'''
PARAM = "=1+2"      # a user's benchmark parameter in a cell file's results


def _golden_with_formulas(tmp: Path) -> SimpleNamespace:
    """The golden cells, one of them holding a user's benchmark whose parameter is a formula, and a claims file
    named by the matrix file whose source, sentence and sides are formulas."""
    with tarfile.open(ROOT / "tests" / "golden" / "default-matrix.tar.gz") as tar:
        tar.extractall(tmp, filter="data")
    path = tmp / "cells" / "tf2.15-cpu.json"
    doc = json.loads(path.read_text())
    doc["results"]["records"].append(record("own.model", {"layer": PARAM, "api": "tf.keras", "mode": "eager"},
                                            noisy(2e-3, seed=4), seed="user"))
    path.write_text(json.dumps(doc))
    (tmp / "claims.toml").write_text("schema_version = 1\n" + OWN)
    (tmp / "matrix.toml").write_text('[suite]\nclaims = ["claims.toml"]\n\n[[cell]]\ntf = "2.15"\n')
    return SimpleNamespace(cells=tmp / "cells", claims=own_claims(load(tmp / "matrix.toml")))


@pytest.mark.slow
def test_a_users_claim_and_parameter_that_are_formulas_reach_the_reports_csvs_inert(tmp_path: Path) -> None:
    made = _golden_with_formulas(tmp_path)
    out = tmp_path / "out"
    build(made.cells, out, generated="2026-01-02T03:04:05+00:00", own=made.claims)
    written = sorted(out.glob("*.csv"))
    assert {p.name for p in written} >= {"claims.csv", "results.csv", "hardware.csv"}
    for p in written:
        assert live(p.read_text()) == [], p.name
    with open(out / "claims.csv", newline="") as f:
        mine = [r for r in csv.DictReader(f) if r["claim"] == "evil_mine"]
    measured = [r for r in mine if r["ratio"]]
    assert measured and all(float(r["ratio"]) > 0 for r in measured)      # the numbers are numbers still
    assert {r["seed"] for r in mine} == {"'@SUM(1,2)"} and {r["claim_text"] for r in mine} == {"'" + HYPERLINK}
    assert {r["a"][:5] for r in measured} == {"'+cmd"} and {r["b"][:3] for r in measured} == {"'-x"}
    with open(out / "results.csv", newline="") as f:
        (row,) = [r for r in csv.DictReader(f) if r["benchmark"] == "own.model"]
    assert row["layer"] == "'" + PARAM and float(row["time"]) > 0
    assert json.loads(row["params"])["layer"] == PARAM                   # JSON inside a cell: text as given
    doc = json.loads((out / "claims.json").read_text())                 # JSON is no spreadsheet: as given
    assert {r["seed"] for r in doc["rows"] if r["claim"] == "evil_mine"} == {"@SUM(1,2)"}
