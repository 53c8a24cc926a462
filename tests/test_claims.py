"""Claims: each seed's claim at the seed's own configuration, from hand-made cells with known ratios.

The cells are synthetic (``report_docs``), so every ratio is known: a claim
must find it at the seed's configuration even where eleven other
configurations say the opposite, name the exact cell pair seed 000 compared,
give every verdict word, and write the same rows to claims.csv and
claims.json as the page shows.
"""
from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest
from report_docs import cell_doc, noisy, parse_html, record, results_doc, write

from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claims.answers import (
    A_FASTER,
    B_FASTER,
    CANNOT,
    HOLDS,
    NOT_MEASURED,
    REVERSED,
    compute_claims,
    verdict,
)
from tfmatrix.analysis.claims.files import builtin, questions
from tfmatrix.analysis.claims.records import NOT_A
from tfmatrix.analysis.frame import build_frame
from tfmatrix.analysis.statistics.inference import RatioCI
from tfmatrix.analysis.statistics.words import THIN, UNCLEAR
from tfmatrix.report.build import build
from tfmatrix.report.claims_view import ROW_COLUMNS

SEED_CLAIMS = builtin()      # the seeds' claims (tfmatrix/data/claims/seeds.toml)

GENERATED = "2026-01-02T03:04:05+00:00"


def _cell(cells: Path, name: str, tf: str, recs: list[dict], keras: str = "2.3.1", target: str = "cpu",
          installed: str | None = None) -> None:
    gpus = ["/physical_device:GPU:0"] if target == "gpu" else None
    doc = cell_doc(name, tf, results=results_doc(recs, tf=installed or tf + ".0", target=target, gpus=gpus),
                   target=target)
    doc["cell"]["keras"]["version"] = keras
    write(cells, doc)


def _claims(cells: Path) -> dict:
    loaded = load_dir(cells).cells
    return {r.claim.key: r for r in compute_claims(build_frame(loaded), loaded)}


def _report(cells: Path, out: Path):
    build(cells, out, generated=GENERATED)
    html = (out / "index.html").read_text()
    return html, parse_html(html)


def test_the_table_names_real_questions_and_every_seed():
    keys = [c.key for c in SEED_CLAIMS]
    assert len(keys) == len(set(keys)) >= 13
    assert {c.seed for c in SEED_CLAIMS} == {"000", "001", "002", "003", "004"}
    asked = {q.key for q in questions()}
    assert len(asked) == 14 and all(q.is_question for q in questions())
    assert all(c.question in asked for c in SEED_CLAIMS if c.question)
    assert all(c.expect in ("a", "b", NOT_A) and c.seed_figure and c.seed_setup and c.seed_size for c in SEED_CLAIMS)


def _ci(low: float, high: float, replicated: bool = True) -> RatioCI:
    return RatioCI(math.sqrt(low * high), low, high, 3, 3, replicated=replicated)


@pytest.mark.parametrize(("interval", "expect", "word"), [
    ((0.5, 0.8), "a", HOLDS), ((1.2, 1.5), "a", REVERSED), ((0.9, 1.1), "a", UNCLEAR),
    ((1.2, 1.5), "b", HOLDS), ((0.5, 0.8), "b", REVERSED), ((0.9, 1.1), "b", UNCLEAR),
    # "does not help" is judged against a 10% margin, not against 1: unclear is not "holds" (absence of evidence)
    ((0.5, 0.8), NOT_A, REVERSED), ((1.2, 1.5), NOT_A, HOLDS), ((0.95, 1.05), NOT_A, HOLDS),
    ((0.85, 1.2), NOT_A, UNCLEAR), ((0.97, 0.99), NOT_A, HOLDS),
])
def test_verdict_words(interval: tuple[float, float], expect: str, word: str) -> None:
    assert verdict(_ci(*interval), expect) == word


def test_one_process_a_side_is_no_verdict_for_any_claim() -> None:
    for expect in ("a", "b", NOT_A):
        assert verdict(_ci(0.1, 0.2, replicated=False), expect) == THIN      # issue 51: never "no clear difference"


# -- a 30x effect at the seed's configuration, hidden among eleven unchanged ones ----------

def _inference(model: str, stage: str, api: str, mode: str, t: float, seed: int) -> dict:
    shape = [32, 4] if model == "tiny" else [8, 40, 16]
    return record(f"inference.{model}", {"model": model, "batch_shape": shape, "width": 1.0, "path": "predict",
                                         "stage": stage, "api": api, "mode": mode}, noisy(t, seed=seed), seed="001")


def _hidden_effect(cells: Path) -> None:
    recs, seed = [], 0
    for model, stages in (("tiny", ("compiled", "train_built")), ("medium", ("compiled",))):
        for api in ("tf.keras", "keras"):
            for mode in ("eager", "graph"):
                base = 0.001 if model == "tiny" else 0.01
                seed += 1
                recs.append(_inference(model, "uncompiled", api, mode, base, seed))
                for stage in stages:
                    slow = model == "tiny" and api == "tf.keras" and mode == "eager" and stage == "compiled"
                    seed += 1
                    recs.append(_inference(model, stage, api, mode, base * (30 if slow else 1), seed))
    _cell(cells, "tf2.0-keras2.3.1-cpu", "2.0", recs)


def test_a_claim_finds_the_effect_that_a_median_over_configurations_hides(tmp_path):
    _hidden_effect(tmp_path / "cells")
    result = _claims(tmp_path / "cells")["predict_slower_after_compile"]
    (cell,) = result.cells
    assert cell.seed_cell and cell.name == "tf2.0-keras2.3.1-cpu"
    (line,) = cell.lines                                  # the seed's configuration only: one line
    assert line.comparison.ci.ratio == pytest.approx(30, rel=0.05)
    assert line.comparison.ci.low > 25 and line.verdict == HOLDS
    assert line.size == "batch_shape=32x4"
    # the question over all twelve configurations counts them; the seed's line is one of them
    html, dom = _report(tmp_path / "cells", tmp_path / "out")
    (answer,) = [" ".join(li.text.split()) for li in dom.by_id("claim-predict_after_compile")
                 .find("ul", cls="claim-cells").find_all("li")]
    assert answer.startswith("tf2.0-keras2.3.1-cpu predict after compile faster in") and "(of 12)" in answer
    assert re.search(r"\b(29\.\d|3\d\.?\d*) \(\d", answer)                     # the 30x line among them
    # no single median over stage=compiled and stage=train_built: one per side
    assert "[stage=compiled]" in answer and "[stage=train_built]" in answer


# -- every verdict word from cells with known ratios -----------------------------------

def _matmul(impl: str, t: float, seed: int, status: str = "ok", reason: str | None = None) -> dict:
    api = "numpy" if impl == "numpy.dot" else "tf"
    return record("tensor_ops.matmul", {"impl": impl, "n": 256, "dtype": "float64", "api": api, "mode": "eager"},
                  noisy(t, seed=seed) if status == "ok" else None, status=status, reason=reason, seed="002")


def test_every_verdict_word_per_cell(tmp_path):
    cells = tmp_path / "cells"
    _cell(cells, "tf1.15-cpu", "1.15", [_matmul("numpy.dot", 0.01, 1), _matmul(
        "tf.matmul", 0, 0, status="n/a", reason="TF 1.x graph mode: tf.matmul on tf.constant needs eager")])
    _cell(cells, "tf2.1-cpu", "2.1", [_matmul("numpy.dot", 0.01, 2), _matmul("tf.matmul", 0.005, 3)])
    _cell(cells, "tf2.9-cpu", "2.9", [_matmul("numpy.dot", 0.01, 4), _matmul("tf.matmul", 0.02, 5)])
    _cell(cells, "tf2.15-cpu", "2.15", [_matmul("numpy.dot", 0.01, 6), _matmul("tf.matmul", 0.01, 7)])
    result = _claims(cells)["tf_matmul_faster_than_np_dot"]
    by = {c.name: c for c in result.cells}
    assert [c.name for c in result.cells] == ["tf1.15-cpu", "tf2.1-cpu", "tf2.9-cpu", "tf2.15-cpu"]
    assert not by["tf1.15-cpu"].lines and "needs eager" in by["tf1.15-cpu"].reason
    assert [ln.verdict for ln in by["tf2.1-cpu"].lines] == [HOLDS]
    assert by["tf2.1-cpu"].lines[0].comparison.ci.ratio == pytest.approx(0.5, rel=0.05)
    assert [ln.verdict for ln in by["tf2.9-cpu"].lines] == [REVERSED]
    assert [ln.verdict for ln in by["tf2.15-cpu"].lines] == [UNCLEAR]
    assert any("GPU" in n and "CPU only" in n for n in result.notes)      # the seed's tf.matmul ran on a GPU
    # the page: one row, every word, a sparkline, links that resolve to table rows
    html, dom = _report(cells, tmp_path / "out")
    row = dom.by_id("claim-tf_matmul_faster_than_np_dot")
    text = " ".join(row.text.split())
    for word in (HOLDS, REVERSED, UNCLEAR, CANNOT):
        assert word in text
    assert "n=256" in text and "n=10000" in text                       # measured size next to the seed's
    assert row.find_all("svg", cls="spark")
    ids = {n.attrs["id"] for n in dom.find_all() if "id" in n.attrs}
    links = [a.attrs["href"] for a in dom.by_id("claims").find_all("a") if a.attrs.get("href", "").startswith("#")]
    assert links and all(h[1:] in ids for h in links), [h for h in links if h[1:] not in ids]
    row_links = [h for h in links if h.startswith("#row-")]
    assert row_links and all(h[1:] in ids for h in row_links)


# -- seed 000: the exact pair of cells -----------------------------------------------------

def _question(api: str, mode: str, t: float, seed: int, model: str = "small", status: str = "ok",
              reason: str | None = None) -> dict:
    return record("training.question", {"model": model, "data": "question", "batch_shape": [8, 40, 16],
                                        "width": 0.125, "loop": "train_on_batch", "input": "numpy", "api": api,
                                        "mode": mode},
                  noisy(t, seed=seed) if status == "ok" else None, status=status, reason=reason)


def test_tf1_vs_tf2_compares_the_seeds_exact_pair(tmp_path):
    cells = tmp_path / "cells"
    no_eager = "standalone keras 2.2.5 builds tf.placeholder graphs and cannot run with TF1 eager execution"
    for name, tf, keras, graph in (("tf1.14-keras2.2.5-cpu", "1.14", "2.2.5", 0.002),
                                   ("tf1.15-cpu", "1.15", "2.2.4-tf", 0.004)):
        _cell(cells, name, tf, [_question("keras", "graph", graph, 1),
                                _question("keras", "eager", 0, 0, status="n/a", reason=no_eager)], keras=keras)
    _cell(cells, "tf2.0-keras2.3.1-cpu", "2.0", [_question("keras", "eager", 0.006, 2),
                                                 _question("keras", "graph", 0.006, 3)])
    _cell(cells, "tf2.9-cpu", "2.9", [_question("keras", "eager", 0.003, 4), _question("keras", "graph", 0.003, 5)])
    result = _claims(cells)["tf1_faster_train_on_batch"]
    names = [c.name for c in result.cells]
    assert names[0] == "tf2.0-keras2.3.1-cpu vs tf1.14-keras2.2.5-cpu"         # the seed's pair, first
    assert set(names) == {names[0], "tf2.9-cpu vs tf1.14-keras2.2.5-cpu"}      # TF 2.x only, against TF 1.14
    head = result.cells[0]
    assert head.seed_cell and head.lines[0].comparison.ci.ratio == pytest.approx(3.0, rel=0.05)
    assert head.lines[0].verdict == HOLDS
    assert result.cells[1].lines[0].verdict == HOLDS and not result.cells[1].seed_cell
    # the question compares each TF 2.x cell with the newest TF 1.x cell; the claim links to it
    html, dom = _report(cells, tmp_path / "out")
    asked = [" ".join(li.text.split()) for li in dom.by_id("claim-tf2_vs_tf1").find("ul", cls="claim-cells")
             .find_all("li")]
    assert [t.split(" TF 2.x faster")[0] for t in asked] == ["tf2.0-keras2.3.1-cpu vs tf1.15-cpu",
                                                              "tf2.9-cpu vs tf1.15-cpu"]
    assert dom.by_id("claim-tf1_faster_train_on_batch").find("a", href="#claim-tf2_vs_tf1") is not None


def test_no_reference_cell_says_so(tmp_path):
    _cell(tmp_path / "cells", "tf2.0-keras2.3.1-cpu", "2.0", [_question("keras", "eager", 0.006, 2)])
    result = _claims(tmp_path / "cells")["tf1_faster_train_on_batch"]
    assert not result.cells and any("no TF 1.14 + Keras 2.2.5 cell ran" in n for n in result.notes)


# -- seed 003: a stand-in where the seed's model cannot exist, and a claim that flips on a GPU ----------

def _xla(model: str, call: str, jit: str, t: float, seed: int, status: str = "ok") -> dict:
    return record("graphs.xla", {"model": model, "input_shape": [1, 32, 32, 3], "call": call, "jit_compile": jit,
                                 "api": "tf.keras", "mode": "eager"},
                  noisy(t, seed=seed) if status == "ok" else None, status=status,
                  reason="EfficientNetV2S needs tf.keras 2.8+" if status != "ok" else None, seed="003")


def test_stand_in_model_and_gpu_expectation(tmp_path):
    cells = tmp_path / "cells"
    old = [_xla("efficientnetv2s", c, j, 0, 0, status="n/a") for c, j in
           (("eager", "none"), ("tf.function", "none"), ("tf.function", "true"))]
    old += [_xla("mobilenetv2", "eager", "none", 0.05, 1), _xla("mobilenetv2", "tf.function", "none", 0.01, 2),
            _xla("mobilenetv2", "tf.function", "true", 0.005, 3)]
    _cell(cells, "tf2.4-cpu", "2.4", old)
    new = [_xla("efficientnetv2s", "eager", "none", 0.5, 4), _xla("efficientnetv2s", "tf.function", "none", 0.1, 5),
           _xla("efficientnetv2s", "tf.function", "true", 0.05, 6)]
    _cell(cells, "tf2.13-cpu", "2.13", new)
    _cell(cells, "tf2.13-gpu", "2.13", new, target="gpu")
    claims = _claims(cells)
    fn = {c.name: c for c in claims["tf_function_speeds_up_forward"].cells}
    assert fn["tf2.13-cpu"].seed_cell and fn["tf2.13-cpu"].lines[0].standin == ""
    assert fn["tf2.13-cpu"].lines[0].comparison.ci.ratio == pytest.approx(0.2, rel=0.05)
    stand = fn["tf2.4-cpu"].lines[0]
    assert "MobileNetV2" in stand.standin and "tf.keras 2.8+" in stand.standin and stand.verdict == HOLDS
    xla = {c.name: c for c in claims["xla_slower_on_cpu_faster_on_gpu"].cells}
    assert xla["tf2.13-cpu"].lines[0].verdict == REVERSED          # XLA 2x faster: the CPU half is reversed
    assert xla["tf2.13-gpu"].lines[0].verdict == HOLDS             # ... and the GPU half holds


# -- claims.csv and claims.json ------------------------------------------------------------------------

def test_csv_and_json_have_the_pages_rows(tmp_path):
    _hidden_effect(tmp_path / "cells")
    summary = build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    assert summary.claims_csv == tmp_path / "out" / "claims.csv" and summary.claims_total == len(SEED_CLAIMS)
    with open(tmp_path / "out" / "claims.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    doc = json.loads((tmp_path / "out" / "claims.json").read_text())
    assert doc["schema"] == "tfmatrix.claims" and doc["columns"] == list(ROW_COLUMNS)
    assert len(rows) == len(doc["rows"]) and tuple(rows[0]) == ROW_COLUMNS
    assert [r["claim"] for r in rows] == [r["claim"] for r in doc["rows"]]
    assert {r["verdict"] for r in rows} <= {HOLDS, REVERSED, A_FASTER, B_FASTER, UNCLEAR, CANNOT, NOT_MEASURED}
    assert {r["verdict"] for r in rows if r["claim"] in {q.key for q in questions()}} & {A_FASTER, B_FASTER}
    (seed,) = [r for r in doc["rows"] if r["claim"] == "predict_slower_after_compile"]
    assert seed["cell"] == "tf2.0-keras2.3.1-cpu" and seed["seed_cell"] is True and seed["verdict"] == HOLDS
    assert seed["ratio"] == pytest.approx(30, rel=0.05) and seed["ci_low"] < seed["ratio"] < seed["ci_high"]
    assert seed["size"] == "batch_shape=32x4" and "1000 calls" in seed["seed_size"]
    (csv_seed,) = [r for r in rows if r["claim"] == "predict_slower_after_compile"]
    assert float(csv_seed["ratio"]) == pytest.approx(seed["ratio"]) and csv_seed["a_id"] == seed["a_id"]
    # a claim whose benchmark this run did not measure is a row too, with the reason: not measured, not impossible
    other = [r for r in doc["rows"] if r["claim"] == "tf_matmul_faster_than_np_dot"]
    assert other and all(r["verdict"] == NOT_MEASURED and r["reason"] for r in other)
    (pair,) = [r for r in doc["rows"] if r["claim"] == "tf1_faster_train_on_batch"]     # no TF 1.14 cell here
    assert pair["verdict"] == CANNOT and pair["cell"] is None and "TF 1.14 + Keras 2.2.5" in pair["reason"]
    # the page shows the same rows: a line each, the cells without one folded into one line per kind and claim
    html, dom = _report(tmp_path / "cells", tmp_path / "out2")
    claims = dom.by_id("claims")
    lines = len(claims.find_all("div", cls="cl-line"))
    folded = claims.find_all("li", cls="folded")
    nobody = [li for li in claims.find_all("li") if "folded" not in li.classes and li.find_all("span", cls="cl-cannot")]
    assert lines + sum(int(li.attrs["data-n"]) for li in folded) + len(nobody) == len(rows)
    unmeasured = [x for x in folded if NOT_MEASURED in x.text]
    assert all(any(r["cell"] in x.attrs["title"] for x in unmeasured) for r in rows if r["verdict"] == NOT_MEASURED)


def test_claims_section_comes_first(tmp_path):
    _hidden_effect(tmp_path / "cells")
    html, dom = _report(tmp_path / "cells", tmp_path / "out")
    main = dom.find("main")
    sections = [n.attrs.get("id") for n in main.children if not isinstance(n, str)]
    assert sections[:2] == ["grid", "claims"]            # the verdict grid, then each claim's detail
    assert html.index('href="#grid"') < html.index('href="#claims"') < html.index('href="#summary"')


def test_a_line_below_the_seeds_size_is_marked_and_one_at_it_is_not():
    from tfmatrix.report.claims_view import below_seed_size

    assert not below_seed_size("model=small, batch_shape=32x400x16, width=1.0", "batch_shape=32x400x16")
    assert below_seed_size("model=medium, batch_shape=32x400x16, width=0.125", "batch_shape=32x400x16")
    assert below_seed_size("n=2000", "n=10000")
    assert below_seed_size("a_shape=100x100x1000, b_shape=1000x1000", "a_shape=1000x100x1000, b_shape=1000x1000")
    assert not below_seed_size("batch_shape=32x4", "batch_shape=32x4, 1000 calls")
    assert not below_seed_size("", "scalar arguments")


def _tracing(arg: str, t: float, seed: int, traces: int, calls: int) -> dict:
    rec = record("graphs.tracing", {"arg": arg, "api": "tf", "mode": "eager"}, noisy(t, seed=seed), seed="004")
    rec["extra"] = {"traces": traces, "calls": calls}
    return rec


def test_a_retracing_line_says_its_trace_counts_beside_the_times(tmp_path):
    """Seed 004's 'a new Python number retraces every call': where a compile per call swamps the timing, the
    counts are the direct answer, so the Claims line says them beside the times."""
    from tfmatrix.report.claims_view import traces_text

    assert traces_text({"traces": 23, "calls": 23}) == "23 traces in 23 calls (one per call)"
    assert traces_text({"traces": 1, "calls": 10540}) == "1 trace in 10,540 calls"
    assert traces_text({"traces": 1}) == "" and traces_text({}) == ""
    cells = tmp_path / "cells"
    _cell(cells, "tf2.15-cpu", "2.15", [_tracing("python_distinct", 0.004, 1, 23, 23),
                                        _tracing("tensor", 0.0001, 2, 1, 10540)])
    _, dom = _report(cells, tmp_path / "out")
    text = " ".join(dom.by_id("claim-python_args_retrace").text.split())
    assert "measured beside: A: 23 traces in 23 calls (one per call); B: 1 trace in 10,540 calls" in text


def test_a_faster_side_with_a_dearer_first_call_says_after_how_many_calls_it_pays() -> None:
    from tfmatrix.analysis.break_even import break_even
    from tfmatrix.analysis.variant import Variant

    compiled = Variant.of({"id": "c", "setup": {"first_call_s": [13.8, 1.6, 1.7]}, "iterations": {"inner": 1}})
    eager = Variant.of({"id": "e", "setup": {"first_call_s": [0.0002, 0.0003, 0.0002]}})
    found = break_even(compiled, eager, 170e-6, 210e-6)         # 40 µs a call saved, 1.7 s more to start
    assert found is not None and found.calls == pytest.approx(1.6998 / 40e-6, abs=1)
    assert found.text("A") == "A's first call costs 1.7 s more: it pays after about 42,000 calls"
    assert break_even(eager, compiled, 170e-6, 210e-6) is None          # the faster side starts cheaper
    assert break_even(compiled, eager, 210e-6, 170e-6) is None          # not the faster side
    assert break_even(compiled, Variant.of({"id": "x"}), 170e-6, 210e-6) is None     # no first call recorded
    quick = Variant.of({"id": "q", "setup": {"first_call_s": [0.00025]}})
    assert break_even(quick, eager, 170e-6, 210e-6) is None             # pays within two calls: nothing to say
