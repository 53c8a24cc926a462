"""``tfmatrix timeline`` and the report's Timeline and "When did it change" sections, from real cell files.

The cells are the golden quick run of the default matrix (tests/golden/
default-matrix.tar.gz): six TF releases from 1.15 to 2.21, each read as a
timeline cell would be. What the history package writes (``timeline_json``) is
what the report reads: these tests tie the two halves with real output.
The real timeline and bisect runs are in tests/test_e2e_bisect.py.
"""
from __future__ import annotations

import csv
import io
import json
import re
import tarfile
from pathlib import Path

import pytest

from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claims.files import builtin
from tfmatrix.history.axis import tf_axis
from tfmatrix.history.bisect import bisect
from tfmatrix.history.search import Measure
from tfmatrix.history.targets import claim_target
from tfmatrix.history.timeline import (
    changes,
    flickers,
    points_for,
    selection,
    summary_lines,
    timeline_claims,
    timeline_csv,
    timeline_json,
)
from tfmatrix.matrix.releases import load_table
from tfmatrix.report.build import build
from tfmatrix.results.history_docs import TIMELINE_COLUMNS, TimelinePoint

SEED_CLAIMS = builtin()      # the seeds' claims (tfmatrix/data/claims/seeds.toml)

CELLS = ["tf1.15-cpu", "tf2.1-cpu", "tf2.9-cpu", "tf2.15-cpu", "tf2.16-keras3-cpu", "tf2.21-keras3-cpu"]


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    root = tmp_path_factory.mktemp("golden")
    with tarfile.open(Path(__file__).parent / "golden" / "default-matrix.tar.gz") as tar:
        tar.extractall(root, filter="data")
    return root, {c.name: c for c in load_dir(root / "cells").cells}


def timeline_points(cells) -> tuple[list[str], list[TimelinePoint]]:
    releases = [cells[name].tf_installed for name in CELLS]
    return releases, [p for name, r in zip(CELLS, releases, strict=True) for p in points_for(r, cells[name], name)]


def test_the_timeline_runs_every_variant_the_one_cell_claims_compare_and_leaves_out_the_cross_cell_one():
    keys = [c.key for c in timeline_claims()]
    assert "tf1_faster_train_on_batch" not in keys and len(keys) == len(SEED_CLAIMS) - 1
    ids = selection("seed")
    assert len(ids) == len(set(ids))
    assert any("path=predict," in i and "stage=compiled" in i for i in ids)
    assert any(i.startswith("tensor_ops.matmul[") for i in ids) and any(i.startswith("graphs.power[") for i in ids)
    assert not any(i.startswith(("input_pipelines.", "selfcheck.")) for i in ids)


@pytest.mark.slow
def test_every_claim_gets_one_point_per_release_with_a_verdict_or_the_reason_it_has_none(golden):
    _, cells = golden
    releases, points = timeline_points(cells)
    assert len(points) == len(releases) * len(timeline_claims())
    for p in points:
        if p.ratio is not None:
            assert p.verdict in ("holds", "reversed", "no clear difference", "not enough replication")
            # the golden cells ran one process a variant: no interval, and no verdict ("not enough replication")
            assert (p.low is None and p.high is None and p.verdict == "not enough replication") or \
                p.low <= p.ratio <= p.high
        else:
            assert p.reason and p.verdict in ("cannot exist here", "not measured in this run")
    assert any(p.ratio is not None for p in points) and any(p.ratio is None for p in points)
    rows = list(csv.DictReader(io.StringIO(timeline_csv(points))))
    assert tuple(rows[0]) == TIMELINE_COLUMNS and len(rows) == len(points)


def test_a_verdict_change_is_found_between_consecutive_measured_releases_beyond_the_noise():
    def pt(release: str, verdict: str, ratio: float | None, low: float = 0, high: float = 0) -> TimelinePoint:
        return TimelinePoint("einsum_faster_than_loop", release, "cell", ratio, low or ratio, high or ratio, verdict)
    points = [pt("2.0", "holds", 0.5), pt("2.1", "cannot exist here", None), pt("2.2", "no clear difference", 1.0),
              pt("2.3", "no clear difference", 1.0), pt("2.4", "reversed", 2.0)]
    assert [(a.release, b.release) for a, b in changes(points)] == [("2.0", "2.2"), ("2.3", "2.4")]
    # a verdict flickering at the edge of "no clear difference": intervals overlap, so no change
    edge = [pt("2.0", "holds", 0.71, 0.66, 0.76), pt("2.1", "no clear difference", 0.78, 0.70, 1.01),
            pt("2.2", "holds", 0.72, 0.69, 0.75), pt("2.3", "no clear difference", 26.0, 24.0, 28.0)]
    assert [(a.release, b.release) for a, b in changes(edge)] == [("2.2", "2.3")]
    assert flickers(edge) == 2
    [line] = [s for s in summary_lines(edge) if s.startswith("einsum_faster_than_loop")]
    assert line.endswith("changed 1 times: 2.2 holds -> 2.3 no clear difference "
                         "(and 2 verdict differences within the noise)")
    [line] = [s for s in summary_lines(edge[:3]) if s.startswith("einsum_faster_than_loop")]
    assert "no change beyond the noise in 3 releases measured (holds in 2, no clear difference in 1" in line


@pytest.mark.slow
def test_the_report_draws_a_chart_per_claim_and_marks_where_its_verdict_changed(golden, tmp_path):
    root, cells = golden
    releases, points = timeline_points(cells)
    out = tmp_path / "out"
    out.mkdir()
    (out / "timeline.json").write_text(json.dumps(timeline_json(points, tf_axis(load_table()), releases, "quick")))
    build(root / "cells", out, generated="2026-11-25T00:00:00+00:00")
    html = (out / "index.html").read_text()
    section = html[html.index('<section id="timeline">'):]
    section = section[:section.index("</section>")]
    assert section.count('<svg xmlns="http://www.w3.org/2000/svg" class="timeline"') == len(timeline_claims())
    assert section.count('class="point"') == sum(1 for p in points if p.ratio is not None)
    marks = section.count('class="change"')
    assert marks == sum(len(changes([p for p in points if p.claim == c.key])) for c in timeline_claims())
    assert "tf1_faster_train_on_batch" in section.split("Left out:")[1]
    assert 'href="#timeline"' in html
    lines = summary_lines(points)
    assert len(lines) == len(timeline_claims()) and all(re.match(r"^[a-z0-9_]+: ", line) for line in lines)


@pytest.mark.slow
def test_the_report_shows_each_bisect_answer_with_its_probes(golden, tmp_path):
    root, _ = golden
    axis = tf_axis(load_table())
    truth = {"2.0.4": Measure(24.0, 22.0, 27.0), "2.1.4": Measure(0.97, 0.9, 1.04), "2.1.0": Measure(1.0, 0.9, 1.1),
             "2.1.1": Measure(1.0, 0.9, 1.1), "2.1.2": "cannot exist here: no wheel", "2.1.3": Measure(1.0, 0.9, 1.1)}
    result = bisect(claim_target("predict_slower_after_compile", "seed"), axis, "2.1.4", "2.0.4",
                    lambda r, attempt: truth[r], patches=True)
    result.how = {"2.1.4": "reused cells/tf2.1-cpu.json"}
    out = tmp_path / "out"
    (out / "bisect").mkdir(parents=True)
    (out / "bisect" / "a.json").write_text(json.dumps(result.to_json()))
    (out / "bisect" / "broken.json").write_text("{")
    summary = build(root / "cells", out, generated="2026-11-25T00:00:00+00:00")
    html = (out / "index.html").read_text()
    section = html[html.index('<section id="bisect">'):]
    section = section[:section.index("</section>")]
    assert "Answer: changed between 2.1.0 and 2.0.4" in section
    assert section.count('<tr class="probe-') == len(result.path)
    assert "reused cells/tf2.1-cpu.json" in section
    assert any("bisect/broken.json" in w for w in summary.warnings)


def test_the_log_axis_labels_1x_and_never_prints_two_labels_on_top_of_each_other():
    import math

    from tfmatrix.report.timeline_view import y_ticks

    for low, high in ((0.132, 1.2), (0.00741, 1.0), (0.82, 27.6), (0.9, 1.1), (1.0, 35.0)):
        lo, hi = math.log10(low), math.log10(high)
        ticks = y_ticks(lo, hi, 116)
        assert ticks[0] == 1.0
        px = sorted(math.log10(t) / (hi - lo) * 116 for t in ticks)
        assert all(b - a >= 13 for a, b in zip(px, px[1:], strict=False)), (low, high, ticks)
        assert all(low * 0.999 <= t <= high * 1.001 for t in ticks)
    wide = y_ticks(math.log10(0.00741), 0.0, 116)
    assert 0.01 in [round(t, 6) for t in wide] and 0.1 in [round(t, 6) for t in wide]
    assert round(y_ticks(math.log10(0.132), math.log10(1.2), 116)[-1], 3) == 0.132   # the low end, labelled


def test_a_release_without_an_interval_is_never_a_change_beyond_the_noise():
    """One process a side gives a ratio but no interval: it cannot be apart from a neighbour's interval."""
    from tfmatrix.analysis.timeline import changed, reading

    assert not changed(reading("holds", 2.0, 3.0), reading("no clear difference", None, None))
    assert changed(reading("holds", 2.0, 3.0), reading("reversed", 0.4, 0.6))
