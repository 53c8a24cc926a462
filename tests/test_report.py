"""The cross-version report: whole reports from synthetic documents, then real cells (the pure parts it is built
from: tests/test_report_inputs.py).

Real-cell tests (marked ``tf``) build the report from the cell documents the
venv runner wrote for real quick-preset runs of three default-matrix cells
(the ``venv_cell`` fixture), plus a real suite run that asked for a GPU on
this GPU-less machine.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_docs import (
    cell_doc,
    noisy,
    parse_html,
    record,
    results_doc,
    run_suite,
    synthetic_matrix,
    table_rows,
    training_params,
    write,
)

from suite.document import GPU_MISSING
from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claims.answers import A_FASTER, B_FASTER, NOT_MEASURED
from tfmatrix.analysis.frame import build_frame
from tfmatrix.errors import UserError
from tfmatrix.report.build import build

GENERATED = "2026-01-02T03:04:05+00:00"

# -- whole reports (synthetic) -------------------------------------------------------


@pytest.fixture
def synthetic_report(tmp_path):
    synthetic_matrix(tmp_path / "cells")
    summary = build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    html = (tmp_path / "out" / "index.html").read_text()
    return summary, html, parse_html(html), tmp_path


def test_report_files_are_written_atomically_and_self_contained(synthetic_report):
    summary, html, dom, tmp_path = synthetic_report
    out = tmp_path / "out"
    # no temp files left
    assert sorted(p.name for p in out.iterdir()) == ["claims.csv", "claims.json", "hardware.csv", "index.html",
                                                     "results.csv", "runs"]    # every run kept, noise and all
    assert summary.html == out / "index.html" and summary.cells == 6
    assert summary.statuses == {"ok": 3, "failed": 2, "skipped": 1}
    # one file: no external scripts, styles, images or fonts
    assert not dom.find_all("link") and not dom.find_all("img")
    assert all(not s.attrs.get("src") for s in dom.find_all("script"))
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert "@import" not in html and "url(" not in html


def test_summary_lists_every_cell_with_status_and_reason(synthetic_report):
    _, _, dom, _ = synthetic_report
    head, rows = table_rows(dom.by_id("summary").find("table"))
    by_name = {r[0].text.strip(): r for r in rows}
    assert list(by_name) == ["tf1.15-cpu", "tf2.0-cpu", "tf2.0-gpu", "tf2.9-cpu", "tf2.10-cpu", "tf2.10-gpu"]
    assert by_name["tf2.9-cpu"][1].text.strip() == "failed"
    assert "No matching distribution" in by_name["tf2.9-cpu"][-1].text
    assert by_name["tf2.10-gpu"][1].text.strip() == "skipped"
    assert "no NVIDIA runtime" in by_name["tf2.10-gpu"][-1].text
    assert "NO GPU" in by_name["tf2.0-gpu"][1].text
    facts = dom.by_id("summary").find("dl").text
    assert "quick" in facts and "1.0.0" in facts
    assert "tf1.15-cpu (oldest)" in facts


def test_warnings_are_loud_for_gpu_without_gpu_failures_and_unstable(synthetic_report):
    _, _, dom, _ = synthetic_report
    items = dom.by_id("warnings").find_all("li")
    loud = [" ".join(li.text.split()) for li in items if "w-loud" in li.classes]
    other = [" ".join(li.text.split()) for li in items if "w-warn" in li.classes]
    assert any("tf2.0-gpu" in w and "ran WITHOUT a GPU" in w for w in loud)
    assert any("tf2.9-cpu" in w and "FAILED" in w for w in loud)
    assert any("tf2.10-gpu" in w and "skipped" in w for w in other)
    assert any("tf2.0-cpu" in w and "UNSTABLE" in w for w in other)
    assert not any("GPU requested but" in w for w in other)      # said once, loudly


def test_cross_version_table_columns_values_ratios_and_na_reasons(synthetic_report):
    _, _, dom, _ = synthetic_report
    table = dom.find("table", cls="xv", data_benchmark="training.question")
    head, rows = table_rows(table)
    cols = [th.attrs["data-cell"] for th in table.find("thead").find_all("th", cls="cellcol")]
    assert cols == ["tf1.15-cpu", "tf2.0-cpu", "tf2.10-cpu"]      # TF order; failed/skipped cells have no column
    assert [h.rstrip(" ↕") for h in head[:3]] == ["loop", "api", "mode"]    # the parameters that vary
    n_params = len(head) - len(cols)
    by_id = {tr.attrs["data-id"]: tr.find_all("td") for tr in table.find("tbody").find_all("tr")}
    tob = by_id["training.question[model=small,data=question,batch_shape=8x40x16,width=0.125,loop=train_on_batch,"
                "input=numpy,api=tf.keras,mode=eager]"]
    base, tf20, tf210 = tob[n_params:]
    assert "baseline" in base.classes and "4 ms" in base.text.replace("\u202f", " ")
    ratio = lambda td: float(re.search(r"×([0-9.]+)", td.text).group(1))  # noqa: E731
    assert "median" in tf20.text and ratio(tf20) == pytest.approx(2.0, abs=0.05)
    assert "background:hsl(0" in tf20.attrs.get("style", "")                  # slower: red
    assert ratio(tf210) == pytest.approx(1.5, abs=0.05)
    assert re.match(r"time \(10th percentile a round, geometric mean\) [0-9.]+ ms, pooled 10th percentile [0-9.]+ ms, "
                    r"fastest [0-9.]+ ms, median [0-9.]+ ms, IQR [0-9.]+ µs "
                    r"\(q1 .*\), n=9, (3 processes .*, )?CV", tf20.attrs["title"])
    keras = by_id["training.question[model=small,data=question,batch_shape=8x40x16,width=0.125,loop=train_on_batch,"
                  "input=numpy,api=keras,mode=eager]"][n_params:]
    assert keras[0].text.strip() == "n/a" and "tf.placeholder" in keras[0].attrs["title"]
    # the baseline cell lacks it: TF 2.0 stands in, marked as the row's baseline
    assert "baseline" in keras[1].classes and "standing in" in keras[1].attrs["title"]
    assert keras[2].text.strip() == "n/a" and "same package" in keras[2].attrs["title"]
    unstable = by_id["training.question[model=small,data=question,batch_shape=8x40x16,width=0.125,loop=fit,"
                     "input=numpy,api=tf.keras,mode=graph]"][n_params + 1]
    assert "⚠" in unstable.text and "UNSTABLE" in unstable.attrs["title"]


def _question(out: Path, dom, key: str):
    """A question as the page answers it (each cell's summary) and as claims.json lists it (its rows)."""
    answers = [" ".join(li.text.split()) for li in dom.by_id("claim-" + key).find("ul", cls="claim-cells")
               .find_all("li")]
    rows = [r for r in json.loads((out / "claims.json").read_text())["rows"] if r["claim"] == key]
    return answers, [r for r in rows if r["ratio"] is None], [r for r in rows if r["ratio"] is not None]


def test_question_tf2_vs_tf1_with_ci(synthetic_report):
    _, _, dom, tmp_path = synthetic_report
    answers, empty, lines = _question(tmp_path / "out", dom, "tf2_vs_tf1")
    tob = [ln for ln in lines if (ln["cell"], ln["ref_cell"]) == ("tf2.0-cpu", "tf1.15-cpu") and all(
        p in ln["configuration"] for p in ("loop=train_on_batch", "mode=eager", "api=tf.keras"))]
    assert len(tob) == 1
    line = tob[0]
    assert line["ratio"] == pytest.approx(2.0, rel=0.05) and line["ci_low"] < line["ratio"] < line["ci_high"]
    assert line["ci_low"] > 1.8 and line["verdict"] == B_FASTER               # TF1 about twice as fast
    assert line["a"] == "TF 2.x" and line["b"] == "TF 1.x"
    assert any(a.startswith("tf2.0-cpu vs tf1.15-cpu TF 2.x faster in 0, TF 1.x faster in") for a in answers)
    assert any(a.startswith("tf2.10-cpu vs tf1.15-cpu") for a in answers)
    # keras rows: TF1 keras is n/a, so those configurations say why instead of guessing
    head = next(a for a in answers if a.startswith("tf2.0-cpu vs tf1.15-cpu"))
    assert "not compared: TF 1.x n/a" in head and "tf.placeholder" in head
    assert not empty


def test_questions_within_cells_and_missing_data(synthetic_report):
    _, _, dom, tmp_path = synthetic_report
    out = tmp_path / "out"
    _, _, lines = _question(out, dom, "graph_vs_eager")
    tf115 = [ln for ln in lines if ln["cell"] == "tf1.15-cpu"]
    assert tf115 and all(ln["verdict"] == A_FASTER and ln["ratio"] == pytest.approx(0.5, rel=0.1) for ln in tf115)
    _, empty, lines = _question(out, dom, "keras_vs_tf_keras")
    assert [ln["cell"] for ln in lines] == ["tf2.0-cpu", "tf2.0-cpu"]
    why = {r["cell"]: r["reason"] for r in empty}
    assert why["tf1.15-cpu"].startswith("keras is n/a: standalone keras 2.2.5")
    assert why["tf2.10-cpu"].startswith("keras is n/a: standalone keras is the same package")
    _, empty, lines = _question(out, dom, "predict_after_compile")
    assert not lines and empty and all(r["verdict"] == NOT_MEASURED for r in empty)
    _, _, lines = _question(out, dom, "fit_vs_train_on_batch")
    assert lines and all(ln["ratio"] > 1.3 for ln in lines if "mode=eager" in ln["configuration"])


def test_failures_show_log_tails_and_env_table_fingerprints(synthetic_report):
    _, _, dom, _ = synthetic_report
    fail = dom.by_id("failure-tf2.9-cpu")
    assert "No matching distribution found for tensorflow-cpu==2.9.3" in fail.find("pre").text
    gpu = dom.by_id("failure-tf2.0-gpu")
    assert "GPU requested but TensorFlow sees no GPU" in gpu.text
    assert "tf2.10-gpu" in dom.by_id("failures").find("ul", cls="skipped").text
    head, rows = table_rows(dom.by_id("environment").find("table"))
    env = {r[0].text: dict(zip(head, [" ".join(td.text.split()) for td in r], strict=True)) for r in rows}
    first = {k.rstrip(" ↕"): v for k, v in env["tf2.0-cpu"].items()}
    assert first["TensorFlow"].startswith("2.0.4") and first["keras"].startswith("keras 2.3.1")
    assert first["CPU flags"] == "avx avx2" and first["GPUs seen"] == "none" and first["runner"] == "venv"
    gpu_env = {k.rstrip(" ↕"): v for k, v in env["tf2.0-gpu"].items()}
    assert gpu_env["image"] == "tfmatrix/cell-tf2.0-gpu:0123abcd" and gpu_env["image id"].startswith("sha256:abab")
    assert gpu_env["CUDA/cuDNN built with"] == "10.0/7" and "⚠" in gpu_env["GPUs seen"]


def test_results_csv_is_tidy(synthetic_report):
    _, _, _, tmp_path = synthetic_report
    df = pd.read_csv(tmp_path / "out" / "results.csv", keep_default_na=False, na_values=[""])
    assert len(df) == 18 and set(df["cell"]) == {"tf1.15-cpu", "tf2.0-cpu", "tf2.10-cpu"}
    ok = df[df["status"] == "ok"]
    for _, row in ok.iterrows():
        samples = json.loads(row["samples"])
        assert row["median"] == pytest.approx(float(np.median(samples)), rel=1e-6)
    assert math.isnan(df[df["status"] == "n/a"]["median"].iloc[0])


def test_baseline_override_and_unknown_baseline(tmp_path):
    synthetic_matrix(tmp_path / "cells")
    summary = build(tmp_path / "cells", tmp_path / "out", baseline="tf2.0-cpu", generated=GENERATED)
    assert summary.baseline == "tf2.0-cpu (chosen)"
    dom = parse_html((tmp_path / "out" / "index.html").read_text())
    table = dom.find("table", cls="xv")
    n_params = len(table.find("thead").find_all("th", cls="param"))
    for tr in table.find("tbody").find_all("tr"):
        tds = tr.find_all("td")[n_params:]
        if tds[1].text.strip() not in ("n/a", "error", "–"):
            assert "baseline" in tds[1].classes
            assert "baseline" not in tds[0].classes
    with pytest.raises(UserError, match="baseline 'nope': no such cell"):
        build(tmp_path / "cells", tmp_path / "out2", baseline="nope")
    with pytest.raises(UserError, match="baseline 'tf2.9-cpu': that cell has no results"):
        build(tmp_path / "cells", tmp_path / "out2", baseline="tf2.9-cpu")


def test_gpu_cell_with_records_but_no_gpu_is_flagged_in_its_column(tmp_path):
    # an older or hand-made results file: ok, with records, but TF saw no GPU
    recs = [record("training.question", training_params(), noisy(0.002))]
    res = results_doc(recs, tf="2.0.4", target="cpu")
    res["cell"]["target"] = "gpu"
    res["gpu"] = {"requested": True, "visible": [], "ok": True}
    write(tmp_path / "cells", cell_doc("tf2.0-gpu", "2.0", results=res, target="gpu"))
    summary = build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    assert any("ran WITHOUT a GPU" in w for w in summary.warnings)
    dom = parse_html((tmp_path / "out" / "index.html").read_text())
    th = dom.find("th", cls="cellcol", data_cell="tf2.0-gpu")
    assert "NO GPU" in th.text


# -- real results from the suite -------------------------------------------------------

REAL_CELLS = ("tf1.15-cpu", "tf2.0-keras2.3.1-cpu", "tf2.21-keras3-cpu")


@pytest.fixture(scope="session")
def real_cells(venv_cell, tmp_path_factory):
    """Three real cell documents from the venv runner, a real GPU-less GPU run, a failed and a skipped cell."""
    work = tmp_path_factory.mktemp("real")
    cells = work / "cells"
    for name in REAL_CELLS:
        write(cells, venv_cell(name))
    # A GPU cell that sees no GPU: the suite itself, for real, asked for a GPU in the TF 2.0 cell's virtualenv.
    python = str(Path(venv_cell("tf2.0-keras2.3.1-cpu")["runner"]["venv"]) / "bin" / "python")
    results, log, code = run_suite(python, work / "gpu.results.json", "tf2.0-keras2.3.1-gpu",
                                   ["training.answer*model=small*"], target="gpu")
    assert results is not None and code == 3, log[-3000:]
    write(cells, cell_doc("tf2.0-keras2.3.1-gpu", "2.0.4", status="failed", results=results, target="gpu",
                          reason=results.get("error"), log_tail="\n".join(log.splitlines()[-60:])))
    write(cells, cell_doc("tf2.4-cpu", "2.4", status="failed", reason="pip could not install the cell's wheels",
                          log_tail="ERROR: No matching distribution found for tensorflow-cpu==2.4.4"))
    write(cells, cell_doc("tf2.15-gpu", "2.15", status="skipped", target="gpu",
                          reason="the venv runner runs CPU cells only"))
    return cells


@pytest.mark.tf
def test_real_cells_report(real_cells, tmp_path):
    summary = build(real_cells, tmp_path, generated=GENERATED)
    assert summary.statuses == {"ok": 3, "failed": 2, "skipped": 1}
    dom = parse_html((tmp_path / "index.html").read_text())
    # tables: real cells in TF order
    for bench in ("training.answer", "inference.tiny"):
        table = dom.find("table", cls="xv", data_benchmark=bench)
        cols = [th.attrs["data-cell"] for th in table.find_all("th", cls="cellcol")]
        assert cols == ["tf1.15-cpu", "tf2.0-keras2.3.1-cpu", "tf2.21-keras3-cpu"], bench
        cells = [td for td in table.find_all("td") if "v" in td.classes]
        assert any("v-ok" in td.classes for td in cells)
        assert all(td.attrs.get("title") for td in cells if "v-na" in td.classes)   # every n/a says why
    # the GPU cell that saw no GPU, the failed cell and the skipped GPU cell
    loud = " ".join(li.text for li in dom.by_id("warnings").find_all("li", cls="w-loud"))
    assert "tf2.0-keras2.3.1-gpu" in loud and "ran WITHOUT a GPU" in loud and "tf2.4-cpu" in loud
    assert GPU_MISSING.split(":")[0] in dom.by_id("failure-tf2.0-keras2.3.1-gpu").text
    assert "tf2.15-gpu" in dom.by_id("warnings").text
    # the questions answered from real data, each line with a ratio and an interval
    _, _, lines = _question(tmp_path, dom, "tf2_vs_tf1")
    assert {(ln["cell"], ln["ref_cell"]) for ln in lines} == {("tf2.0-keras2.3.1-cpu", "tf1.15-cpu"),
                                                              ("tf2.21-keras3-cpu", "tf1.15-cpu")}
    assert all(ln["ci_low"] <= ln["ratio"] <= ln["ci_high"] for ln in lines)
    _, _, lines = _question(tmp_path, dom, "predict_after_compile")
    assert {ln["cell"] for ln in lines} >= {"tf1.15-cpu", "tf2.0-keras2.3.1-cpu", "tf2.21-keras3-cpu"}
    _, _, lines = _question(tmp_path, dom, "call_vs_predict")
    assert lines
    _, _, lines = _question(tmp_path, dom, "tf_function_vs_eager")                 # graphs.matmul_bias
    assert {"tf2.0-keras2.3.1-cpu", "tf2.21-keras3-cpu"} <= {ln["cell"] for ln in lines}
    _, empty, lines = _question(tmp_path, dom, "keras_vs_tf_keras")
    compared = {ln["cell"] for ln in lines}
    assert "tf2.0-keras2.3.1-cpu" in compared and "tf2.21-keras3-cpu" not in compared
    assert any(r["cell"] == "tf2.21-keras3-cpu" and r["reason"].startswith("keras is n/a") for r in empty)
    df = pd.read_csv(tmp_path / "results.csv")
    assert set(df["cell"]) == {"tf1.15-cpu", "tf2.0-keras2.3.1-cpu", "tf2.21-keras3-cpu"}
    assert (df.groupby("cell")["id"].nunique() == df.groupby("cell").size()).all()


@pytest.mark.tf
def test_real_cells_claims(real_cells, tmp_path):
    """Every claim answered per real CPU cell, or marked cannot-exist with a reason; the seed's 001 cell holds."""
    from tfmatrix.analysis.claims.files import builtin
    SEED_CLAIMS = builtin()
    from tfmatrix.analysis.claims.answers import CANNOT, HOLDS, compute_claims

    cells = load_dir(real_cells).cells
    results = {r.claim.key: r for r in compute_claims(build_frame(cells), cells)}
    assert set(results) == {c.key for c in SEED_CLAIMS}
    for key, result in results.items():
        for cell in result.cells:
            assert cell.lines or cell.reason, (key, cell.name)
            for line in cell.lines:
                ci = line.comparison.ci
                assert ci.low <= ci.ratio <= ci.high and line.verdict != CANNOT, (key, cell.name)
    predict = {c.name: c for c in results["predict_slower_after_compile"].cells}
    seed = predict["tf2.0-keras2.3.1-cpu"]
    assert seed.seed_cell and len(seed.lines) == 1 and seed.lines[0].verdict == HOLDS   # the seed's 30x, for real
    matmul = {c.name for c in results["tf_matmul_faster_than_np_dot"].cells if c.lines}
    assert {"tf2.0-keras2.3.1-cpu", "tf2.21-keras3-cpu"} <= matmul
    # no TF 1.14 + Keras 2.2.5 among the real cells: the seed's pair says so instead of comparing another
    assert not results["tf1_faster_train_on_batch"].cells
    assert any("TF 1.14 + Keras 2.2.5" in n for n in results["tf1_faster_train_on_batch"].notes)
    summary = build(real_cells, tmp_path, generated=GENERATED)
    rows = pd.read_csv(summary.claims_csv, keep_default_na=False)
    from tfmatrix.analysis.claims.files import questions
    assert set(rows["claim"]) == set(results) | {q.key for q in questions()}      # the seeds' questions after them
    (pair,) = rows[rows["claim"] == "tf1_faster_train_on_batch"].to_dict("records")
    assert pair["verdict"] == CANNOT and "TF 1.14 + Keras 2.2.5" in pair["reason"]


def test_a_side_with_several_values_pairs_with_each(tmp_path):
    # XLA on vs off: off is jit_compile=false or none; each pairing is its own line, named
    def xla(call, jit, t, seed):
        return record("graphs.xla", {"model": "mobilenetv2", "input_shape": [1, 32, 32, 3], "call": call,
                                     "jit_compile": jit, "api": "tf.keras", "mode": "eager"},
                      noisy(t, seed=seed), seed="003")
    recs = [xla("eager", "none", 0.05, 1), xla("tf.function", "none", 0.010, 2),
            xla("tf.function", "false", 0.011, 3), xla("tf.function", "true", 0.005, 4)]
    write(tmp_path / "cells", cell_doc("tf2.15-cpu", "2.15", results=results_doc(recs, tf="2.15.1")))
    build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    dom = parse_html((tmp_path / "out" / "index.html").read_text())
    _, _, lines = _question(tmp_path / "out", dom, "xla_vs_tf_function")
    assert sorted(ln["b"] for ln in lines) == ["XLA off [jit_compile=false]", "XLA off [jit_compile=none]"]
    assert all(ln["verdict"] == A_FASTER and 1 / ln["ratio"] == pytest.approx(2.1, abs=0.15) for ln in lines)
    _, _, lines = _question(tmp_path / "out", dom, "tf_function_vs_eager")
    assert len(lines) == 1 and 1 / lines[0]["ratio"] == pytest.approx(5.0, abs=0.15)
    words = " ".join(dom.by_id("claim-tf_function_vs_eager").find("div", cls="cl-line").text.split())
    assert re.search(r"tf\.function (4\.9|5\.0)\d*× faster", words)


def test_baseline_error_names_where_the_baseline_came_from(tmp_path):
    synthetic_matrix(tmp_path / "cells")
    with pytest.raises(UserError, match=r"^matrix.toml: baseline 'tf9': no such cell in the results; cells are: "):
        build(tmp_path / "cells", tmp_path / "out", baseline="tf9", baseline_source="matrix.toml: baseline")


# -- readability: collapsed warnings, two-line x labels, no empty panels ------------------------------


def test_repeated_warnings_collapse_into_one_line_listing_the_cells(tmp_path):
    for name, tf in (("tf2.0-cpu", "2.0"), ("tf2.9-cpu", "2.9"), ("tf2.15-cpu", "2.15")):
        recs = [record("training.question", training_params(), noisy(0.002, spread=0.6))]
        write(tmp_path / "cells", cell_doc(name, tf, results=results_doc(recs, tf=tf + ".1")))
    for name, tf in (("tf2.0-gpu", "2.0"), ("tf2.9-gpu", "2.9"), ("tf2.15-gpu", "2.15")):
        write(tmp_path / "cells", cell_doc(name, tf, status="skipped", target="gpu",
                                           reason="the Docker engine has no NVIDIA runtime"))
    build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    dom = parse_html((tmp_path / "out" / "index.html").read_text())
    items = [" ".join(li.text.split()) for li in dom.by_id("warnings").find_all("li")]
    unstable = [w for w in items if "UNSTABLE" in w]
    assert len(unstable) == 1 and all(n in unstable[0] for n in ("tf2.0-cpu", "tf2.9-cpu", "tf2.15-cpu"))
    skipped = [w for w in items if "skipped" in w]
    assert len(skipped) == 1 and "tf2.0-gpu, tf2.9-gpu, tf2.15-gpu (the Docker engine has no NVIDIA runtime)" \
        in skipped[0]


def test_chart_labels_are_tf_versions_with_keras_below_and_no_empty_gpu_panel(synthetic_report):
    _, _, dom, _ = synthetic_report
    fig = dom.by_id("chart-question_small")
    assert not [p for p in fig.find_all("div", cls="panel") if p.attrs.get("data-target") == "gpu"]
    note = " ".join(fig.find("p", cls="panel-note").text.split())
    assert note.startswith("No GPU results for this chart") and "tf2.10-gpu skipped" in note
    labels = [t for t in fig.find_all("text", cls="tick") if t.find_all("tspan")]
    assert [lab.children[1].strip() for lab in labels] == ["1.15", "2.0", "2.10"]
    assert all(lab.find("tspan").text == "tf.keras" for lab in labels)
    assert not any("rotate" in t.attrs.get("transform", "") for t in fig.find_all("text", cls="tick"))
