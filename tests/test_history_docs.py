"""The bisect answer and the timeline: one typed, versioned document each, written by history/ and read by report/.

What ``tfmatrix bisect``/``timeline`` write loads back into the same record;
files from before the documents had a version (no ``schema`` key: the golden
inputs are such files) load as version 1; a newer version or another
document is refused with one line naming the file.
"""
from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from tfmatrix.errors import UserError
from tfmatrix.history.axis import tf_axis
from tfmatrix.history.bisect import bisect
from tfmatrix.history.search import Measure
from tfmatrix.history.targets import claim_target
from tfmatrix.history.timeline import timeline_doc, timeline_json
from tfmatrix.matrix.releases import load_table
from tfmatrix.report.timeline_view import timeline_view
from tfmatrix.results.history_docs import BISECT_DIR, BisectDoc, TimelineDoc, TimelinePoint, history_in, timeline_file

GOLDEN = Path(__file__).parent / "golden" / "report-inputs.tar.gz"


def _answer() -> BisectDoc:
    truth = {"2.0.4": Measure(24.0, 22.0, 27.0), "2.1.4": Measure(0.97, 0.9, 1.04)}
    result = bisect(claim_target("predict_slower_after_compile", "seed"), tf_axis(load_table()), "2.1.4", "2.0.4",
                    lambda r, attempt: truth[r], patches=False)
    return result.doc()


def test_a_bisect_answer_is_written_with_its_version_and_read_back_as_the_same_record(tmp_path):
    doc = _answer()
    written = json.loads(json.dumps(doc.to_json()))
    assert list(written)[:3] == ["schema", "schema_version", "target"]
    assert (written["schema"], written["schema_version"]) == ("tfmatrix.bisect", 1)
    assert BisectDoc.from_json(written, tmp_path / "a.json") == doc
    assert doc.found and doc.probes[0].release in ("2.1.4", "2.0.4")


def test_a_timeline_is_written_with_its_version_and_read_back_as_the_same_record(tmp_path):
    points = [TimelinePoint("einsum_faster_than_loop", "2.1.4", "tf2.1-cpu", 0.5, 0.4, 0.6, "holds")]
    doc = timeline_doc(points, tf_axis(load_table()), ["2.1.4"], "quick")
    written = json.loads(json.dumps(timeline_json(points, tf_axis(load_table()), ["2.1.4"], "quick")))
    assert (written["schema"], written["schema_version"]) == ("tfmatrix.timeline", 1)
    assert TimelineDoc.from_json(written, tmp_path / "t.json") == doc
    assert doc.of("einsum_faster_than_loop") == points and doc.of("nothing") == []


def test_files_from_before_the_version_load_as_version_one(tmp_path):
    with tarfile.open(GOLDEN) as tar:
        tar.extractall(tmp_path, filter="data")
    out = tmp_path / "out"
    for path in [*(out / BISECT_DIR).glob("*.json"), out / timeline_file("tf")]:
        assert "schema" not in json.loads(path.read_text())
    found = history_in(out)
    assert len(found.bisections) == 1 and found.unreadable_bisections == []
    assert len(found.timelines) == 1 and found.unreadable_timelines == []
    assert timeline_view(found.timelines[0]).releases


@pytest.mark.parametrize(("change", "says"), [
    ({"schema_version": 2}, "schema_version 2 is newer than this tfmatrix reads"),
    ({"schema": "tfmatrix.cell"}, "is not a bisect answer"),
    ({"probes": [{"release": "2.0"}]}, "not a bisect answer this tfmatrix reads"),
])
def test_a_file_it_cannot_read_is_one_line_naming_it(tmp_path, change, says):
    path = tmp_path / "x.json"
    with pytest.raises(UserError, match=says) as e:
        BisectDoc.from_json({**_answer().to_json(), **change}, path)
    assert str(e.value).startswith(str(path)) and "\n" not in str(e.value)


def test_the_report_lists_an_unreadable_answer_and_goes_on(tmp_path):
    (tmp_path / BISECT_DIR).mkdir()
    (tmp_path / BISECT_DIR / "new.json").write_text(json.dumps({**_answer().to_json(), "schema_version": 9}))
    (tmp_path / BISECT_DIR / "ok.json").write_text(json.dumps(_answer().to_json()))
    found = history_in(tmp_path)
    assert [b.file for b in found.bisections] == [f"{BISECT_DIR}/ok.json"]
    bad = found.unreadable_bisections
    assert len(bad) == 1 and bad[0].startswith(f"{BISECT_DIR}/new.json: UserError:")
