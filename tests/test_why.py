"""The why panels: call trees rebuilt from caller edges, the differential icicle, a profile file kept across explain
runs, and the report's panel for a claim line whose two sides were profiled (pure; the browser sees it in
``test_report_browser.py``, the real profile in a Docker cell in ``test_e2e_explain.py``)."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from report_docs import synthetic_matrix

from suite.schema import validate_profiles
from tfmatrix.analysis.explain.calltree import call_tree, diff_tree, speedscope
from tfmatrix.analysis.explain.profiles import profile_of
from tfmatrix.execution.profiling import failed_doc, keep
from tfmatrix.matrix import load
from tfmatrix.report.build import build
from tfmatrix.report.why_view import icicle_svg
from tfmatrix.results.profile_docs import ProfilesDoc

ROOT = Path(__file__).resolve().parent.parent
STEP = ("/opt/tfmatrix/suite/benchmarks/inference.py", 10, "step")
KERAS = "/x/site-packages/keras/src/engine/"


def _row(where: tuple[str, int, str], calls: int, own: float, cum: float,
         callers: list[tuple[tuple[str, int, str], float]] = ()) -> dict[str, Any]:   # type: ignore[assignment]
    return {"file": where[0], "line": where[1], "name": where[2], "calls": calls, "self_s": own, "cum_s": cum,
            "callers": [[c[0], c[1], c[2], calls, t] for c, t in callers]}


def _record(vid: str, wall: float, rows: list[dict[str, Any]], steps: int = 10) -> dict[str, Any]:
    return {"id": vid, "benchmark": vid.split("[")[0], "params": {}, "status": "ok", "reason": None,
            "profiler": "cProfile", "step_calls": steps, "wall_s": wall, "functions": rows,
            "rest": {"functions": 0, "self_s": 0.0}, "extra": {}, "info": {}, "first_call_s": None}


PREDICT = (KERAS + "training.py", 1, "predict")
ADAPTER = (KERAS + "data_adapter.py", 2, "__init__")
CALL = (KERAS + "base_layer.py", 3, "__call__")
EXECUTE = ("~", 0, "<built-in method TFE_Py_FastPathExecute>")


def _direct(vid: str = "inference.tiny[path=direct_call]") -> dict[str, Any]:
    return _record(vid, 0.1, [
        _row(STEP, 10, 0.002, 0.1),
        _row(CALL, 30, 0.05, 0.098, [(STEP, 0.098)]),
        _row(EXECUTE, 40, 0.048, 0.048, [(CALL, 0.048)]),
    ])


def _predict(vid: str = "inference.tiny[path=predict]") -> dict[str, Any]:
    return _record(vid, 1.2, [
        _row(STEP, 10, 0.002, 1.2),
        _row(PREDICT, 10, 0.3, 1.198, [(STEP, 1.198)]),
        _row(ADAPTER, 10, 0.65, 0.65, [(PREDICT, 0.65)]),
        _row(CALL, 30, 0.05, 0.248, [(PREDICT, 0.248)]),
        _row(EXECUTE, 90, 0.198, 0.198, [(CALL, 0.198)]),
    ])


def test_a_chain_of_calls_is_rebuilt_exactly_per_step() -> None:
    tree = call_tree(profile_of(_predict(), "tf2.15-cpu"))
    step = "suite/benchmarks/inference.py:step"
    predict = (step, "keras/src/engine/training.py:predict")
    assert tree[(step,)] == pytest.approx(0.12)
    assert tree[predict] == pytest.approx(0.1198)
    assert tree[predict + ("keras/src/engine/data_adapter.py:__init__",)] == pytest.approx(0.065)
    assert tree[predict + ("keras/src/engine/base_layer.py:__call__", "<built-in method TFE_Py_FastPathExecute>")] \
        == pytest.approx(0.0198)


def test_a_function_with_two_callers_shares_its_callees_out_by_the_edges_time() -> None:
    f, g, h = ("/x/f.py", 1, "f"), ("/x/g.py", 1, "g"), ("/x/h.py", 1, "h")
    rec = _record("v", 1.0, [
        _row(STEP, 1, 0.0, 1.0),
        _row(f, 1, 0.0, 0.75, [(STEP, 0.75)]),
        _row(g, 1, 0.0, 0.25, [(STEP, 0.25)]),
        _row(h, 2, 0.4, 0.4, [(f, 0.3), (g, 0.1)]),
    ], steps=1)
    tree = call_tree(profile_of(rec, "c"))
    step = "suite/benchmarks/inference.py:step"
    assert tree[(step, "/x/f.py:f", "/x/h.py:h")] == pytest.approx(0.3)
    assert tree[(step, "/x/g.py:g", "/x/h.py:h")] == pytest.approx(0.1)
    assert sum(t for p, t in tree.items() if len(p) == 2) <= tree[(step,)] + 1e-12


def test_the_icicle_draws_the_slower_side_on_top_and_colours_the_path_only_it_takes() -> None:
    a, b = profile_of(_direct(), "tf2.15-cpu"), profile_of(_predict(), "tf2.15-cpu")
    frames = diff_tree(a, b)
    only_b = [f for f in frames if f.a_s == 0]
    assert {f.key for f in only_b} >= {"keras/src/engine/training.py:predict",
                                       "keras/src/engine/data_adapter.py:__init__"}
    svg = icicle_svg(frames, a, b, "A = direct call", "B = predict")
    heads = re.findall(r'class="ic-head"[^>]*>([^<]*)', svg)
    assert heads[0].startswith("B = predict: 120 ms per step") and heads[1].startswith("A = direct call: 10 ms")
    adapter = re.search(r'<g class="ic-f" data-side="b"><title>keras/src/engine/data_adapter.py:__init__[^<]*</title>'
                        r'<rect [^>]*width="([\d.]+)"[^>]*fill="hsl\((\d+),', svg)
    assert adapter is not None
    assert float(adapter.group(1)) == pytest.approx(1200 * 0.065 / 0.12, rel=0.01)     # its share of B's step
    assert adapter.group(2) == "4"                                                      # red: more time on B
    assert 'viewBox="0 0 1200 ' in svg


def test_speedscope_file_holds_each_profile_with_weights_that_sum_to_its_tree() -> None:
    p = profile_of(_predict(), "tf2.15-cpu")
    doc = speedscope([p], "x")
    prof = doc["profiles"][0]
    assert prof["type"] == "sampled" and prof["unit"] == "milliseconds"
    assert sum(prof["weights"]) == pytest.approx(120.0, rel=0.01)        # the step's time, in ms
    names = [f["name"] for f in doc["shared"]["frames"]]
    assert all(max(s) < len(names) for s in prof["samples"])
    assert "keras/src/engine/data_adapter.py:__init__" in names


def _cell() -> Any:
    return next(c for c in load(ROOT / "matrix.toml").cells if c.name == "tf2.15-cpu")


def _doc(records: list[dict[str, Any]], image: str = "img:1") -> ProfilesDoc:
    header = dict(failed_doc(_cell(), "x", "seed").header, status="ok", error=None,
                  cell={"name": "tf2.15-cpu", "target": "cpu", "image": image})
    return ProfilesDoc("tf2.15-cpu", {r["id"]: r for r in records}, header)


def test_a_failed_profile_never_replaces_a_good_one_and_other_variants_stay(tmp_path: Path) -> None:
    target = tmp_path / "tf2.15-cpu.json"
    keep(target, _doc([_direct()]), ["inference.tiny[path=direct_call]"])
    keep(target, _doc([_predict()]), ["inference.tiny[path=predict]"])
    ids = {r["id"]: r["status"] for r in json.loads(target.read_text())["records"]}
    assert ids == {"inference.tiny[path=direct_call]": "ok", "inference.tiny[path=predict]": "ok"}
    keep(target, failed_doc(_cell(), "failed: the image could not be built", "seed"),
         ["inference.tiny[path=predict]", "inference.tiny[path=other]"])
    doc = json.loads(target.read_text())
    assert validate_profiles(doc) == []
    ids = {r["id"]: (r["status"], r.get("reason")) for r in doc["records"]}
    assert ids["inference.tiny[path=predict]"] == ("ok", None)
    assert ids["inference.tiny[path=other]"] == ("error", "failed: the image could not be built")
    keep(target, _doc([_predict()], image="img:2"), ["inference.tiny[path=predict]"])    # a rebuilt image
    assert [r["id"] for r in json.loads(target.read_text())["records"]] == ["inference.tiny[path=predict]"]


def test_a_cell_that_never_profiled_still_gets_a_valid_file_with_its_reason(tmp_path: Path) -> None:
    target = tmp_path / "c.json"
    keep(target, failed_doc(_cell(), "skipped: no engine", None), ["a", "b"])
    doc = json.loads(target.read_text())
    assert validate_profiles(doc) == []
    assert [(r["id"], r["reason"]) for r in doc["records"]] == [("a", "skipped: no engine"),
                                                                ("b", "skipped: no engine")]


def test_the_report_gains_a_why_panel_for_a_profiled_claim_line(tmp_path: Path) -> None:
    cells, out = tmp_path / "cells", tmp_path / "out"
    synthetic_matrix(cells)
    build(cells, out)
    assert 'id="why"' not in (out / "index.html").read_text()          # nothing profiled: no section
    rows = json.loads((out / "claims.json").read_text())["rows"]
    row = next(r for r in rows if r["a_id"] and r["b_id"] and r["verdict"] not in ("cannot exist here",))
    (out / "profiles").mkdir()
    (out / "profiles" / f"{row['cell']}.json").write_text(json.dumps(dict(
        _doc([_direct(row["a_id"]), _predict(row["b_id"])]).to_json(), cell={"name": row["cell"], "target": "cpu"})))
    summary = build(cells, out)
    page = (out / "index.html").read_text()
    anchor = re.search(r'class="why-link" href="#([^"]+)"', page)
    assert anchor is not None and f'id="{anchor.group(1)}"' in page
    panel = page[page.index(f'id="{anchor.group(1)}"'):]
    assert "B takes 120 ms per step against 10 ms for A" in panel
    assert "<svg class=\"icicle\"" in panel and "data_adapter.py:__init__" in panel
    scope = json.loads((out / "profiles" / f"{row['cell']}.speedscope.json").read_text())
    assert len(scope["profiles"]) == 2
    assert not summary.warnings or all("profile" not in w for w in summary.warnings)


def test_a_claim_line_whose_side_could_not_be_profiled_says_why_and_a_bad_file_is_a_warning(tmp_path: Path) -> None:
    cells, out = tmp_path / "cells", tmp_path / "out"
    synthetic_matrix(cells)
    build(cells, out)
    rows = json.loads((out / "claims.json").read_text())["rows"]
    row = next(r for r in rows if r["a_id"] and r["b_id"] and r["verdict"] not in ("cannot exist here",))
    (out / "profiles").mkdir()
    (out / "profiles" / f"{row['cell']}.json").write_text(json.dumps(dict(
        _doc([_direct(row["a_id"]), {"id": row["b_id"], "status": "error", "reason": "MemoryError: out of memory"}])
        .to_json(), cell={"name": row["cell"], "target": "cpu"})))
    (out / "profiles" / "broken.json").write_text("{")
    summary = build(cells, out)
    page = (out / "index.html").read_text()
    assert f"could not profile {row['b_id']} in {row['cell']}: MemoryError: out of memory" in page
    assert any(w.startswith("a profile could not be read: ") and "broken.json" in w for w in summary.warnings)


def test_a_bisect_boundary_says_how_each_side_moved_and_where_the_one_that_moved_most_changed() -> None:
    from tfmatrix.analysis.claims.files import builtin
    SEED_CLAIMS = builtin()
    from tfmatrix.history.targets import Target
    from tfmatrix.history.why import boundary_lines

    claim = next(c for c in SEED_CLAIMS if c.key == "predict_slower_after_compile")
    after, before = "inference.tiny[path=predict,stage=compiled]", "inference.tiny[path=predict,stage=uncompiled]"
    target = Target(claim.key, "label", (after, before), claim)
    good = ProfilesDoc("tf2.0-cpu", {after: _direct(after), before: _direct(before)})     # both 10 ms a step
    bad = ProfilesDoc("tf2.1-cpu", {after: _predict(after), before: _direct(before)})     # after compile: 120 ms
    lines = boundary_lines(target, "TensorFlow", "2.0.4", "2.1.4", good, bad)
    assert lines[0] == (f"predict after compile ({after}): 10 ms per step in TensorFlow 2.0.4, 120 ms in 2.1.4 "
                        "(profiler included)")
    assert lines[1].startswith(f"predict before compile ({before}): 10 ms per step in TensorFlow 2.0.4, 10 ms")
    assert lines[2] == f"predict after compile ({after}) moved most; where:"
    assert lines[3] == ("TensorFlow 2.1.4 takes 120 ms per step against 10 ms for TensorFlow 2.0.4 (12.00x, profiler "
                        "included): 110 ms more per step.")
    assert any("training.py:predict" in line for line in lines[4:])
    missing = boundary_lines(target, "TensorFlow", "2.0.4", "2.1.4", ProfilesDoc("tf2.0-cpu", {}), bad)
    assert missing == [f"could not profile {after} in tf2.0-cpu: the profiled run has no such variant"]


def test_a_bisect_answer_keeps_where_it_changed_and_the_report_shows_it(tmp_path: Path) -> None:
    from tfmatrix.results.history_docs import BisectDoc

    doc = BisectDoc("k", "label", "tf", "", "2.0.4", "2.2.3", True, "2.0.4", "2.1.4", "changed between ...",
                    why=["where: B spends 96% of its step under training.py:predict"])
    again = BisectDoc.from_json(json.loads(json.dumps(doc.to_json())), tmp_path / "x.json")
    assert again.why == doc.why
    older = {k: v for k, v in doc.to_json().items() if k != "why"}              # an answer written before
    assert BisectDoc.from_json(older, tmp_path / "x.json").why == []
    cells, out = tmp_path / "cells", tmp_path / "out"
    synthetic_matrix(cells)
    (out / "bisect").mkdir(parents=True)
    (out / "bisect" / "k.json").write_text(json.dumps(doc.to_json()))
    build(cells, out)
    assert "where: B spends 96% of its step under training.py:predict" in (out / "index.html").read_text()
