"""The report's upgrade view from hand-made results: ratio, interval, verdict per variant, sorted by effect."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from report_docs import cell_doc, noisy, parse_html, record, results_doc, table_rows, write

from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.compare.sets import variant_changes
from tfmatrix.analysis.compare.upgrade import upgrade_view
from tfmatrix.analysis.frame import build_frame
from tfmatrix.cli import main
from tfmatrix.errors import UserError
from tfmatrix.report.build import build

BASE, CAND = "tf2.15-cpu", "tf2.21-keras3-cpu"


def _p(path: str, api: str = "tf.keras") -> dict[str, str]:
    return {"path": path, "batch": "8", "api": api, "mode": "eager"}


def _cells(tmp_path: Path) -> Path:
    """own.model: fit 30% slower after the upgrade, call 2x faster, predict unchanged; a Keras 2-only variant
    that breaks in the candidate; a built-in benchmark beside them."""
    cells = tmp_path / "cells"
    base = [record("own.model", _p("fit"), noisy(10e-3, seed=1), seed="user"),
            record("own.model", _p("call"), noisy(4e-3, seed=2), seed="user"),
            record("own.model", _p("predict"), noisy(6e-3, seed=3), seed="user"),
            record("own.legacy", _p("fit"), noisy(5e-3, seed=4), seed="user"),
            record("selfcheck.overhead", {"api": "tf", "mode": "eager"}, noisy(1e-7, seed=5), seed="-")]
    cand = [record("own.model", _p("fit"), noisy(13e-3, seed=6), seed="user"),
            record("own.model", _p("call"), noisy(2e-3, seed=7), seed="user"),
            record("own.model", _p("predict"), noisy(6e-3, seed=8), seed="user"),
            record("own.legacy", _p("fit"), status="error", seed="user",
                   reason="AttributeError: module 'keras.layers' has no attribute 'experimental'\nmore"),
            record("selfcheck.overhead", {"api": "tf", "mode": "eager"}, noisy(1e-7, seed=9), seed="-")]
    write(cells, cell_doc(BASE, "2.15.1", results=results_doc(base, tf="2.15.1", cell=BASE)))
    write(cells, cell_doc(CAND, "2.21.0", results=results_doc(cand, tf="2.21.0", cell=CAND)))
    return cells


def test_rows_are_the_compare_numbers_sorted_slowest_first(tmp_path):
    df = build_frame(load_dir(_cells(tmp_path)).cells)
    view = upgrade_view(df, BASE, CAND)
    ids = [r.id for r in view.rows]
    assert ids[0].startswith("own.model[path=fit") and ids[-1].startswith("own.model[path=call")
    verdicts = {r.id.split("[")[1].split(",")[0]: r.verdict for r in view.rows if r.benchmark == "own.model"}
    assert verdicts == {"path=fit": "slower", "path=predict": "no clear difference", "path=call": "faster"}
    # one implementation: the same ratios and intervals tfmatrix compare computes
    same, _, _ = variant_changes(df, df, [(BASE, CAND)])
    assert {(c.id, c.ci) for c in same} == {(c.id, c.ci) for c in view.rows}
    fit = view.rows[0]
    assert fit.ci.ratio == pytest.approx(1.3, rel=0.05) and fit.ci.low > 1.0
    (legacy,) = view.unpaired
    assert (legacy.baseline, legacy.candidate) == ("ok", "error")
    assert legacy.candidate_reason == "AttributeError: module 'keras.layers' has no attribute 'experimental'"
    assert view.line().startswith(f"upgrade {BASE} -> {CAND}: 4 variants in both, 1 slower, 1 faster")
    assert view.line().endswith("1 ok before and not after")


def test_the_report_shows_the_view_and_writes_upgrade_csv(tmp_path):
    cells = _cells(tmp_path)
    out = tmp_path / "out"
    summary = build(cells, out, BASE, upgrade=(BASE, CAND), generated="2026-01-01T00:00:00+00:00")
    assert summary.upgrade and "1 slower" in summary.line()
    page = parse_html((out / "index.html").read_text())
    section = page.by_id("upgrade")
    assert f"{BASE} → {CAND}" in section.find("h2").text
    head, rows = table_rows(section.find("table"))
    assert head[:4] == ["benchmark", "variant", BASE, CAND]
    texts = [[c.text for c in r] for r in rows]
    assert texts[0][1].startswith("own.model[path=fit") and texts[0][-1] == "slower after the upgrade"
    assert texts[-1][1].startswith("own.legacy[") and texts[-1][-1].startswith("broken by the upgrade")
    with open(out / "upgrade.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert [r["id"] for r in table] == [t[1] for t in texts]
    assert table[0]["verdict"] == "slower after the upgrade" and float(table[0]["ci_low"]) > 1.0
    # results.csv has the user benchmarks beside the built-in one
    results = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    assert {"own.model", "own.legacy", "selfcheck.overhead"} <= {r["benchmark"] for r in results}


def test_without_a_pair_there_is_no_view(tmp_path):
    out = tmp_path / "out"
    summary = build(_cells(tmp_path), out, BASE)
    assert summary.upgrade is None and not (out / "upgrade.csv").exists()
    assert 'id="upgrade"' not in (out / "index.html").read_text()


def test_a_cell_without_results_is_a_one_line_error(tmp_path):
    with pytest.raises(UserError, match=r"^--baseline/--candidate: candidate 'tf2.99-cpu' has no results; "
                       r"cells with results: tf2.15-cpu, tf2.21-keras3-cpu \(run it first"):
        build(_cells(tmp_path), tmp_path / "out", BASE, upgrade=(BASE, "tf2.99-cpu"),
              upgrade_source="--baseline/--candidate")


def test_report_command_takes_candidate_or_the_matrix_pair(tmp_path, capsys, monkeypatch):
    cells = _cells(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert main(["report", "--cells", str(cells), "--out", str(out), "--matrix", "none.toml",
                 "--baseline", BASE, "--candidate", CAND]) == 0
    assert f"upgrade {BASE} -> {CAND}" in capsys.readouterr().out
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(f'[matrix]\nbaseline = "{BASE}"\n[report]\ncompare = ["{BASE}", "tf2.21-cpu"]\n'
                      '[[cell]]\ntf = "2.15"\n[[cell]]\ntf = "2.21"\nkeras = "keras3"\n')
    assert main(["report", "--cells", str(cells), "--out", str(out), "--matrix", str(matrix)]) == 0
    assert f"upgrade {BASE} -> {CAND}" in capsys.readouterr().out
    assert main(["report", "--cells", str(cells), "--out", str(out), "--matrix", "none.toml",
                 "--candidate", CAND]) == 2
    assert "add --baseline CELL" in capsys.readouterr().err


def test_a_run_that_measured_no_claim_leads_with_the_upgrade_and_says_so(tmp_path):
    """A user's own benchmarks on two cells: one line says no claim was measured, the upgrade comes first, and the
    claims (at the end) say "not measured in this run", never "cannot exist here" for what a filter left out."""
    out = tmp_path / "out"
    build(_cells(tmp_path), out, BASE, upgrade=(BASE, CAND), generated="2026-01-01T00:00:00+00:00")
    html = (out / "index.html").read_text()
    dom = parse_html(html)
    main_sections = [n.attrs.get("id") for n in dom.find("main").children if not isinstance(n, str)]
    assert main_sections[0] == "no-claims" and main_sections[1] == "upgrade"
    assert main_sections.index("claims") > main_sections.index("tables")
    assert "No seed claim was measured in this run" in dom.by_id("no-claims").text
    claims = dom.by_id("claims")
    folded = claims.find_all("li", cls="folded")
    assert folded and all("not measured in this run" in li.text and "cannot exist" not in li.text for li in folded)
