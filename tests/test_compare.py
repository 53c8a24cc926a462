"""``tfmatrix compare``: two result sets side by side, on synthetic cells with known changes."""
from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

import pytest
from report_docs import cell_doc, noisy, record, results_doc, write

from tfmatrix.analysis.compare.agreement import Agreement
from tfmatrix.analysis.compare.sets import compare_paths
from tfmatrix.analysis.statistics.stats import deviation
from tfmatrix.cli import main
from tfmatrix.errors import UserError
from tfmatrix.report.compare_view import compare_csv, compare_html

TINY = {"model": "tiny", "batch": 8, "api": "tf.keras", "mode": "eager"}


def _inference(path: str, stage: str, center: float, seed: int, processes: int = 3) -> dict:
    params = {**TINY, "path": path, "stage": stage}
    per_process = [noisy(center, spread=0.01, seed=seed + i) for i in range(processes)]
    return record("inference.tiny", params, per_process=per_process, seed="001")


def _run(tmp: Path, name: str, centers: dict[tuple[str, str], float], seed: int = 0) -> Path:
    d = tmp / name
    recs = [_inference(p, s, c, seed + i) for i, ((p, s), c) in enumerate(centers.items())]
    write(d, cell_doc("tf2.0-cpu", "2.0", results=results_doc(recs, tf="2.0.4", cell="tf2.0-cpu")))
    return d


BASE = {("predict", "uncompiled"): 1e-3, ("predict", "compiled"): 30e-3, ("call", "compiled"): 0.5e-3}


def test_deviation_is_symmetric():
    assert deviation(1.0, 1.05) == pytest.approx(0.05)
    assert deviation(1.05, 1.0) == pytest.approx(0.05)
    assert deviation(0.0, 1.0) == math.inf


def test_identical_runs_agree_and_show_no_difference(tmp_path):
    a = _run(tmp_path, "a", BASE)
    b = _run(tmp_path, "b", BASE)
    result = compare_paths(a, b)
    assert len(result.variants) == 3
    assert result.agreement.share(0.05) == 1.0
    assert result.verdicts()["no clear difference"] == 3
    assert not result.reversed


def test_a_real_change_is_named_slower_with_its_ratio(tmp_path):
    a = _run(tmp_path, "a", BASE)
    b = _run(tmp_path, "b", {**BASE, ("predict", "compiled"): 45e-3}, seed=10)
    result = compare_paths(a, b)
    moved = [v for v in result.variants if "stage=compiled" in v.id and "path=predict" in v.id]
    assert len(moved) == 1
    assert moved[0].verdict == "slower"
    assert moved[0].ci.ratio == pytest.approx(1.5, rel=0.03)
    assert moved[0].ci.low > 1.4
    assert result.agreement.within[0.05] == 2


def test_a_change_inside_the_between_process_noise_is_not_a_finding(tmp_path):
    """Two processes 30% apart on each side: a 10% move is within that noise (their standard deviation, ~20%,
    and Welch's interval over two processes a side spans 1)."""
    def run(name: str, factor: float) -> Path:
        d = tmp_path / name
        per_process = [noisy(1e-3 * factor, spread=0.005, seed=1), noisy(1.3e-3 * factor, spread=0.005, seed=2)]
        rec = record("inference.tiny", {**TINY, "path": "call", "stage": "compiled"}, per_process=per_process)
        write(d, cell_doc("tf2.0-cpu", "2.0", results=results_doc([rec], tf="2.0.4", cell="tf2.0-cpu")))
        return d

    result = compare_paths(run("a", 1.0), run("b", 1.1))
    (v,) = result.variants
    assert v.noise == pytest.approx(math.expm1(math.log(1.3) / math.sqrt(2)), rel=0.05)
    assert v.ci.low < 1.0 < v.ci.high
    assert v.verdict == "no clear difference"


def test_reversed_comparisons_are_named(tmp_path):
    """predict after compile is 30x slower in A and 3x faster in B: the question's line is reversed."""
    a = _run(tmp_path, "a", BASE)
    b = _run(tmp_path, "b", {**BASE, ("predict", "compiled"): 0.3e-3}, seed=5)
    result = compare_paths(a, b)
    rev = [c for c in result.reversed if c.question == "predict_after_compile"]
    assert len(rev) == 1
    assert rev[0].ratio_a == pytest.approx(30, rel=0.05)
    assert rev[0].ratio_b == pytest.approx(0.3, rel=0.05)
    # model(x) vs predict (compiled) reverses with it: 0.5 vs 30 ms, then 0.5 vs 0.3 ms
    assert {c.question for c in result.reversed} == {"predict_after_compile", "call_vs_predict"}
    assert any("reversed in B: 2" in line for line in result.summary_lines())


def test_two_files_compare_two_different_cells(tmp_path):
    a = _run(tmp_path, "a", BASE)
    recs = [_inference(p, s, c * 2, i) for i, ((p, s), c) in enumerate(BASE.items())]
    other = write(tmp_path / "c", cell_doc("tf2.1-cpu", "2.1", results=results_doc(recs, tf="2.1.4",
                                                                                   cell="tf2.1-cpu")))
    result = compare_paths(a / "tf2.0-cpu.json", other)
    assert result.cells == [("tf2.0-cpu", "tf2.1-cpu")]
    assert all(v.verdict == "slower" for v in result.variants)
    assert all(v.ci.ratio == pytest.approx(2.0, rel=0.03) for v in result.variants)


def test_agreement_counts_thresholds():
    agr = Agreement.of([("a", 0.01), ("b", 0.07), ("c", 0.15), ("d", 0.5)])
    assert agr.within == {0.05: 1, 0.10: 2, 0.20: 3}
    assert agr.worst == 0.5 and agr.worst_what == "d"
    assert agr.median == pytest.approx(0.11)


def test_csv_and_html_outputs(tmp_path):
    result = compare_paths(_run(tmp_path, "a", BASE), _run(tmp_path, "b", BASE, seed=3))
    rows = list(csv.DictReader(io.StringIO(compare_csv(result))))
    assert len(rows) == 3 and {r["verdict"] for r in rows} == {"no clear difference"}
    page = compare_html(result)
    assert page.startswith("<!doctype html>") and "http" not in page and "inference.tiny[" in page


def test_cli_compare_prints_summary_and_writes_files(tmp_path, capsys):
    a = _run(tmp_path, "a", BASE)
    b = _run(tmp_path, "b", {**BASE, ("predict", "compiled"): 45e-3}, seed=10)
    code = main(["compare", str(a), str(b), "--csv", str(tmp_path / "c.csv"), "--html", str(tmp_path / "c.html")])
    out = capsys.readouterr().out
    assert code == 0
    assert "variants (times: geometric mean of the rounds' 10th percentiles): 3 in both; 67% within 5%" in out
    assert "1 slower" in out
    assert (tmp_path / "c.csv").exists() and (tmp_path / "c.html").exists()


def test_cli_compare_bad_input_is_one_line(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "nope"), str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no such file or directory" in err
    a = _run(tmp_path, "a", BASE)
    with pytest.raises(UserError, match="--cell 'tf9.9-cpu'"):
        compare_paths(a, a, ["tf9.9-cpu"])


def test_report_summary_states_run_to_run_agreement_when_a_previous_run_exists(tmp_path):
    from tfmatrix.report.build import build

    reports = tmp_path / "reports"
    _run(reports, "cells", BASE)
    build(reports / "cells", reports, generated="2026-01-01T00:00:00+00:00")    # kept in the run archive
    assert 'id="run-to-run"' not in (reports / "index.html").read_text()
    _run(reports, "cells", {**BASE, ("predict", "compiled"): 45e-3}, seed=10)    # the next run replaces it
    build(reports / "cells", reports, generated="2026-01-01T00:00:00+00:00")
    page = (reports / "index.html").read_text()
    assert 'id="run-to-run"' in page
    assert "compared with the previous run of 1 cell(s)" in page
    assert "3 in both; 67% within 5%" in page
    # no previous run: no claim about agreement
    other = tmp_path / "alone"
    _run(other, "cells", BASE)
    build(other / "cells", other, generated="2026-01-01T00:00:00+00:00")
    assert 'id="run-to-run"' not in (other / "index.html").read_text()


def test_a_previous_run_is_shown_beside_a_ratio_but_is_not_a_second_test(tmp_path):
    """model(x) vs predict: 1.10 now, 0.95 in the previous run. The previous ratio is shown; the verdict is this
    run's own test (the old rule, "beyond how far it moved since", let a third of null comparisons through and
    blocked real ones: docs/measurement.md, "Verdicts")."""
    from tfmatrix.report.build import build

    reports = tmp_path / "reports"
    _run(tmp_path, "previous", {("predict", "compiled"): 1.0e-3, ("call", "compiled"): 0.95e-3})
    _run(reports, "cells", {("predict", "compiled"): 1.0e-3, ("call", "compiled"): 1.10e-3}, seed=4)
    build(reports / "cells", reports, generated="2026-01-01T00:00:00+00:00", previous=tmp_path / "previous")
    page = (reports / "index.html").read_text()
    assert re.search(r"previous run: 0\.9\d", page)
    assert re.search(r"model\(x\) 1\.1\d*× slower\)", page)


FIXTURE = Path(__file__).resolve().parent / "fixtures" / "cell-v1-tf1.15-cpu.json"


def test_a_v1_cell_file_from_before_interleaving_still_loads_compares_and_reports(tmp_path):
    """tests/fixtures/cell-v1-tf1.15-cpu.json: a real tf1.15-cpu cell file (trimmed) written by the suite before
    windows, adaptive stopping and the report's 10th-percentile time existed: no ``schedule``, five samples each.
    Kept so every format change is tested against what users already have on disk."""
    from tfmatrix.analysis.cells import load_file
    from tfmatrix.analysis.frame import build_frame
    from tfmatrix.report.build import build

    cell = load_file(FIXTURE)
    assert (cell.name, cell.status, cell.tf) == ("tf1.15-cpu", "ok", "1.15.5")
    df = build_frame([cell])
    ok = df[df["status"] == "ok"]
    assert len(ok) == 9 and ok["time"].notna().all() and (ok["time"] <= ok["median"]).all()
    assert all(w == [] for w in ok["windows"])            # no schedule: nothing pairs, ratios are unpaired
    result = compare_paths(FIXTURE, FIXTURE)
    assert result.agreement.share(0.05) == 1.0 and not result.reversed
    cells = tmp_path / "cells"
    cells.mkdir()
    (cells / FIXTURE.name).write_text(FIXTURE.read_text())
    summary = build(cells, tmp_path, generated="2026-01-01T00:00:00+00:00")
    assert summary.cells == 1 and not summary.refused


def test_the_summary_states_the_noise_the_verdicts_use(tmp_path):
    """Two processes whose 10th percentiles are 20% apart: the Noise line says 20%, as the verdicts count it."""
    from tfmatrix.analysis.statistics.stats import noise_of
    from tfmatrix.report.build import build

    per_process = [noisy(1e-3, spread=0.005, seed=1), noisy(1.2e-3, spread=0.005, seed=2)]
    rec = record("inference.tiny", {**TINY, "path": "call", "stage": "compiled"}, per_process=per_process)
    write(tmp_path / "cells", cell_doc("tf2.0-cpu", "2.0", results=results_doc([rec], tf="2.0.4", cell="tf2.0-cpu")))
    build(tmp_path / "cells", tmp_path, generated="2026-01-01T00:00:00+00:00")
    page = (tmp_path / "index.html").read_text()
    assert f"their times (10th percentiles) were {noise_of(per_process):.1%} apart" in page
    assert noise_of(per_process) == pytest.approx(0.2, rel=0.02)
