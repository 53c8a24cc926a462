"""The report's inputs, on small synthetic documents: version order, statistics, loading cell files (schema
versions, refused files) and the tidy frame. Whole reports are in tests/test_report.py.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from report_docs import (
    cell_doc,
    noisy,
    record,
    results_doc,
    synthetic_matrix,
    training_params,
    write,
)

from suite import stats as suite_stats
from tfmatrix.analysis.cells import load_dir, load_file
from tfmatrix.analysis.frame import build_frame
from tfmatrix.analysis.statistics.inference import contrast, ratio_ci, side_of
from tfmatrix.analysis.statistics.stats import spread
from tfmatrix.analysis.statistics.words import UNCLEAR
from tfmatrix.errors import UserError
from tfmatrix.versions import major, version_key

# -- ordering --------------------------------------------------------------------


def test_versions_order_numerically_with_prereleases_first():
    versions = ["2.10", "1.15.0", "2.2", "2.16.0rc1", "2.0", "1.14", "2.16", "2.9.3", "2.16.0.dev2", "nightly",
                "2.16.1", "2.1"]
    assert sorted(versions, key=version_key) == [
        "1.14", "1.15.0", "2.0", "2.1", "2.2", "2.9.3", "2.10", "2.16.0.dev2", "2.16.0rc1", "2.16", "2.16.1",
        "nightly"]
    assert version_key("2.0") == version_key("2.0.0")
    assert major("1.15.0") == 1 and major("2.21") == 2 and major("?") is None


# -- statistics ---------------------------------------------------------------------


@pytest.mark.parametrize("seconds, text", [
    (0.0009996, "1 ms"), (0.000999, "999 µs"), (9.996e-7, "1 µs"), (9.994e-7, "999 ns"), (0.9996, "1 s"),
    (0.0123, "12.3 ms"), (2.5e-10, "0.25 ns"), (999.6, "1000 s"), (4321.0, "4321 s"), (-0.0009996, "-1 ms"),
    (0, "0 s"), (None, ""), (float("nan"), ""),
])  # fmt: skip
def test_fmt_seconds_rolls_the_unit_over_after_rounding(seconds, text):
    from tfmatrix.report.tables import fmt_seconds

    assert fmt_seconds(seconds) == text


def test_spread_is_from_raw_samples_like_the_suite():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    s = spread(values)
    ref = suite_stats.summarize(values)
    assert s is not None
    assert (s.median, s.q1, s.q3, s.iqr, s.n) == pytest.approx((ref["median"], ref["q1"], ref["q3"], ref["iqr"], 6))
    assert spread([]) is None


def test_a_ratio_and_its_interval_come_from_the_same_numbers():
    """The review's B1: the ratio is exp(mean of per-round log 10th percentiles), its interval centred on it."""
    a = [noisy(0.002, n=8, seed=i) for i in range(3)]
    b = [noisy(0.001, n=8, seed=10 + i) for i in range(3)]
    c = contrast(side_of(a, label="a"), side_of(b, label="b"))
    assert c is not None and not c.paired and c.d == 4
    logs_a = [math.log(np.quantile(p, 0.1)) for p in a]
    logs_b = [math.log(np.quantile(p, 0.1)) for p in b]
    assert c.ratio == pytest.approx(math.exp(np.mean(logs_a) - np.mean(logs_b)))
    ci = ratio_ci(c)
    assert ci.low < ci.ratio < ci.high and ci.ratio == pytest.approx(math.sqrt(ci.low * ci.high))
    assert ci.low > 1.9 and ci.high < 2.1 and ci.verdict == "b" and ci.clear   # a takes twice as long
    same = ratio_ci(contrast(side_of([noisy(0.001, n=8, seed=i) for i in range(3)], label="a"),
                             side_of([noisy(0.001, n=8, seed=20 + i) for i in range(3)], label="b")))  # type: ignore[arg-type]
    assert same.low < 1.0 < same.high and same.verdict == UNCLEAR and "could resolve" in same.why_unclear
    assert contrast(side_of([[]]), side_of(b)) is None


def test_processes_that_disagree_widen_the_interval():
    steady = [noisy(0.001, n=8, seed=i) for i in range(4)]
    shifted = [noisy(0.001 * (1 + 0.3 * (i % 2)), n=8, seed=i) for i in range(4)]
    base = [noisy(0.001, n=8, seed=9 + i) for i in range(4)]
    narrow = contrast(side_of(steady, label="a"), side_of(base, label="b"))
    wide = contrast(side_of(shifted, label="a"), side_of(base, label="b"))
    assert narrow is not None and wide is not None
    (nl, nh), (wl, wh) = narrow.interval(), wide.interval()
    assert (wh - wl) > 2 * (nh - nl)


# -- loading and schema versions -------------------------------------------------------


def _one_cell(tmp_path: Path) -> dict:
    recs = [record("training.question", training_params(), noisy(0.002))]
    return cell_doc("tf2.0-cpu", "2.0", results=results_doc(recs))


def test_newer_schema_is_refused_naming_the_file(tmp_path):
    doc = _one_cell(tmp_path)
    doc["schema_version"] = 99
    path = write(tmp_path / "cells", doc)
    with pytest.raises(UserError) as e:
        load_file(path)
    msg = str(e.value)
    assert str(path) in msg and "schema_version 99 is newer" in msg and "\n" not in msg


def test_older_unknown_results_schema_is_refused(tmp_path):
    doc = _one_cell(tmp_path)
    doc["results"]["schema_version"] = 0
    path = write(tmp_path / "cells", doc)
    with pytest.raises(UserError, match=r"suite results schema_version 0 is older than this tfmatrix reads") as e:
        load_file(path)
    assert str(path) in str(e.value)


def test_foreign_and_broken_files_are_refused(tmp_path):
    cells = tmp_path / "cells"
    cells.mkdir()
    (cells / "notes.json").write_text(json.dumps({"schema": "something.else"}))
    with pytest.raises(UserError, match=r"notes.json: not a tfmatrix cell file \(schema 'something.else'"):
        load_file(cells / "notes.json")
    with pytest.raises(UserError, match=r"none of its 1 cell files can be read: .*notes.json: not a tfmatrix"):
        load_dir(cells)
    (cells / "notes.json").write_text("{half")
    with pytest.raises(UserError, match=r"notes.json: not valid JSON"):
        load_file(cells / "notes.json")
    (cells / "notes.json").unlink()
    with pytest.raises(UserError, match="no cell results"):
        load_dir(cells)
    with pytest.raises(UserError, match="no such directory"):
        load_dir(tmp_path / "missing")


def test_ok_cell_with_invalid_results_is_refused(tmp_path):
    doc = _one_cell(tmp_path)
    del doc["results"]["records"][0]["samples"]
    path = write(tmp_path / "cells", doc)
    with pytest.raises(UserError, match=r"suite results do not match schema tfmatrix.results v1: .*samples"):
        load_file(path)


def test_bare_suite_results_are_read_as_a_cell(tmp_path):
    res = results_doc([record("training.question", training_params(), noisy(0.002))], tf="2.15.1")
    write(tmp_path / "cells", res, "tf2.15-local.json")
    (cell,) = load_dir(tmp_path / "cells").cells
    assert cell.name == "tf2.15-local" and cell.status == "ok" and cell.tf == "2.15.1" and cell.target == "cpu"


def test_cells_are_ordered_by_tf_version_not_file_name(tmp_path):
    synthetic_matrix(tmp_path / "cells")
    names = [c.name for c in load_dir(tmp_path / "cells").cells]
    assert names == ["tf1.15-cpu", "tf2.0-cpu", "tf2.0-gpu", "tf2.9-cpu", "tf2.10-cpu", "tf2.10-gpu"]


# -- the tidy frame ---------------------------------------------------------------


def test_frame_has_one_row_per_cell_and_variant_with_medians_from_samples(tmp_path):
    paths = synthetic_matrix(tmp_path / "cells")
    doc = json.loads(paths["tf2.0"].read_text())
    rec = doc["results"]["records"][0]
    rec["stats"]["median"] = 123.0          # a wrong summary must not leak into the report
    paths["tf2.0"].write_text(json.dumps(doc))
    cells = load_dir(tmp_path / "cells").cells
    df = build_frame(cells)
    assert len(df) == sum(len(c.variants) for c in cells) == 18
    assert not df.duplicated(["cell", "id"]).any()
    row = df[(df["cell"] == "tf2.0-cpu") & (df["id"] == rec["id"])].iloc[0]
    assert row["median"] == pytest.approx(float(np.median(rec["samples"])))
    assert row["iqr"] == pytest.approx(row["q3"] - row["q1"])
    for col in ("tf", "keras_flavour", "keras_version", "python", "target", "runner", "status", "benchmark",
                "model", "loop", "input", "batch_shape", "mode", "api", "median", "iqr", "q1", "q3", "cv", "n",
                "unstable", "build_s", "first_call_s"):
        assert col in df.columns, col
    assert set(df["batch_shape"]) == {"8x40x16"}
    na = df[df["status"] == "n/a"]
    assert na["median"].isna().all() and na["reason"].str.contains("keras").all()


def test_window_mates_borrow_their_benchmarks_noise_from_the_same_run(tmp_path: Path):
    """A claim's line of three rounds: paired process by process (df 2 of its own), its variance moderated
    towards what the benchmark's variants measured in this run (``noise_model.annotate``), so its interval is not
    Student's t on 2 degrees of freedom."""
    from tfmatrix.analysis.claims.answers import compute_claim
    from tfmatrix.analysis.claims.records import QUESTION, Claim, Setup
    from tfmatrix.analysis.claims.specs import Compare, param_spec

    rng = np.random.default_rng(3)
    records = []
    for i in range(12):
        for mode, factor in (("a", 1.0), ("b", 1.5)):
            per_process = [list(1e-3 * factor * (1 + 0.05 * (i % 3)) * np.exp(rng.normal(0, 0.05)) *
                                (1 + np.abs(rng.normal(0, 0.01, 6)))) for _ in range(3)]
            rec = record("syn.pair", {"n": i, "side": mode}, per_process=per_process)
            rec["schedule"] = {"windows": [f"7:{r}" for r in range(3)], "rounds": [6] * 3, "stopped": ["repeats"] * 3}
            records.append(rec)
    write(tmp_path, cell_doc("syn-cpu", "2.15", results=results_doc(records, tf="2.15.1", cell="syn-cpu")))
    cell = load_dir(tmp_path).cells[0]
    question = Claim("syn", "000", "is b slower?", "a", "b",
                     (Setup(Compare(("syn.pair",), param_spec(side="a"), param_spec(side="b"))),), QUESTION, "", "", "",
                     ())
    (answered,) = compute_claim(question, build_frame([cell]), [cell]).cells
    assert len(answered.lines) == 12
    for c in (line.comparison for line in answered.lines):
        assert c.ci.paired and c.ci.df > 2 and c.ci.prior == "its benchmark in this run"
        assert c.ci.verdict == "a" and c.ci.ratio == pytest.approx(1 / 1.5, rel=0.15)
