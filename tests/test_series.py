"""The series of kept runs on the path a user's runs take: each run a report build, the steps the series names,
on the page, in ``series.csv`` and from the ``series`` command; the claim lines whose verdict changed."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from report_docs import parse_html
from series_runs import run_series

from tfmatrix.analysis.series.answers import WHOLE, cell_series, line_changes
from tfmatrix.cli import main
from tfmatrix.results import archive
from tfmatrix.results.archive import KeptRun, read_archive

SLOW = {"loop": "fit", "mode": "graph", "input": "tf.data"}


def _one_variant_slower(k: int, v: dict[str, str]) -> float:
    return 1.2 if k >= 5 and v == SLOW else 1.0


@pytest.mark.slow
def test_one_variant_20_percent_slower_from_run_6_is_named_with_its_run(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run_series(tmp_path, 8, _one_variant_slower)
    (series,) = cell_series(read_archive(tmp_path).runs)
    stepped = [v for v in series.stepped if any(s.kind == "regression" for s in v.answer.steps)]
    assert [v.variant for v in stepped] == [
        "training.question[model=small,data=question,batch_shape=8x40x16,width=0.125,loop=fit,input=tf.data,"
        "api=tf.keras,mode=graph]"]
    (step,) = stepped[0].answer.steps
    assert step.when.startswith("2026-11-06") and step.after == 3 and step.low > 1.1
    assert main(["series", "--reports", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "slower [" in out and "since run" in out and "confirmed by 3 runs" in out
    page = parse_html((tmp_path / "index.html").read_text())
    section = page.by_id("series")
    assert "confirmed by 3 runs" in section.text
    assert "loop=fit" in (tmp_path / "series.csv").read_text()
    # the kept runs as a CI gate's baseline: a confirmed step above 10% among the newest 3 runs fails it
    assert main(["series", "--reports", str(tmp_path), "--fail-on", "slower:10%"]) == 1
    out = capsys.readouterr().out
    assert "tfmatrix: gate: offender: tf2.15-cpu: training.question[" in out
    assert "tfmatrix: gate: 1 offender(s) for --fail-on slower:10% (a confirmed regression among each series' " \
        "newest 3 runs; 0 suspect(s) in the newest run alone) (listed first)" in out
    assert main(["series", "--reports", str(tmp_path), "--fail-on", "slower:10%", "--within", "2"]) == 0
    assert main(["series", "--reports", str(tmp_path), "--fail-on", "slower:30%"]) == 0
    # compare with a run archive as A: B joins its cells' series (here it is their newest run already)
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "runs"), str(tmp_path / "cells"), "--fail-on", "slower:10%"]) == 1
    out = capsys.readouterr().out
    assert "tfmatrix: gate: offender: tf2.15-cpu: training.question[" in out and "1 offender(s)" in out
    assert main(["compare", str(tmp_path / "runs"), str(tmp_path / "cells"), "--fail-on", "slower:10%",
                 "--last", "2"]) == 0          # two runs are no series: insufficient data


@pytest.mark.slow
def test_a_step_in_the_newest_run_only_is_suspicious(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_series(tmp_path, 7, lambda k, v: 1.3 if k == 6 and v == SLOW else 1.0)
    (series,) = cell_series(read_archive(tmp_path).runs)
    kinds = [s.kind for v in series.stepped for s in v.answer.steps]
    assert kinds == ["suspicious"]
    assert main(["series", "--reports", str(tmp_path), "--fail-on", "slower:10%"]) == 0     # one run fails nothing
    assert "suspect: tf2.15-cpu:" in capsys.readouterr().out


@pytest.mark.slow
def test_the_whole_cell_slower_is_a_step_of_the_cell_not_of_each_variant(tmp_path: Path) -> None:
    run_series(tmp_path, 8, lambda k, v: 1.25 if k >= 5 else 1.0)
    (series,) = cell_series(read_archive(tmp_path).runs)
    assert series.stepped and series.stepped[0].variant == WHOLE
    assert [s.kind for s in series.whole.answer.steps] == ["regression"]
    assert not any(v.answer.steps for v in series.variants)


@pytest.mark.slow
def test_a_step_where_nothing_measured_changed_is_the_hosts_and_fails_no_gate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_series(tmp_path, 8, _one_variant_slower, code="the same file every run")
    (series,) = cell_series(read_archive(tmp_path).runs)
    (step,) = [s for v in series.stepped for s in v.answer.steps]
    assert step.kind == "host" and series.measured_same(step)
    assert main(["series", "--reports", str(tmp_path), "--fail-on", "slower:10%"]) == 0
    out = capsys.readouterr().out
    assert "nothing measured changed in that run (the code, the environment): the host's state" in out
    assert "tfmatrix: gate: 0 offender(s) for --fail-on slower:10% (a confirmed regression" in out


@pytest.mark.slow
def test_unchanged_runs_name_no_step(tmp_path: Path) -> None:
    run_series(tmp_path, 8, lambda k, v: 1.0)
    (series,) = cell_series(read_archive(tmp_path).runs)
    assert series.stepped == [] and series.whole.answer.status == "steady"


def test_one_run_shows_no_series_section(tmp_path: Path) -> None:
    run_series(tmp_path, 1, lambda k, v: 1.0)
    assert 'id="series"' not in (tmp_path / "index.html").read_text()
    assert not (tmp_path / "series.csv").exists()


def _run(day: int, verdict: str) -> KeptRun:
    return KeptRun("c", f"r{day}", f"2026-11-{day:02d}", str(day), archive.Testbed(), "q", None,
                   lines={"x | n=2": verdict})


def test_a_claim_line_whose_verdict_changed_says_when() -> None:
    runs = [_run(1, "holds"), _run(2, "not enough replication"), _run(3, "holds"), _run(4, "reversed"),
            _run(5, "reversed")]
    (change,) = line_changes(runs)
    assert (change.before, change.after, change.run, change.held) == ("holds", "reversed", "r4", 2)
    assert line_changes(runs[:3]) == []        # a run that could not answer is not a change


@pytest.mark.slow
def test_a_cell_line_points_to_more_rounds_only_where_its_series_cannot_resolve_20_percent(tmp_path: Path) -> None:
    from tfmatrix.report.series_view import head_line

    run_series(tmp_path / "quiet", 5, lambda k, v: 1.0)
    run_series(tmp_path / "loud", 5, lambda k, v: 1.0, noise=0.25)
    (quiet,) = cell_series(read_archive(tmp_path / "quiet").runs)
    (loud,) = cell_series(read_archive(tmp_path / "loud").runs)
    assert (quiet.resolves() or 9) < 1.2 < (loud.resolves() or 0)
    assert "--rounds N" not in head_line(quiet) and "stands out" in head_line(quiet)
    assert "more rounds a run resolve smaller steps: --rounds N, docs/series.md" in head_line(loud)


@pytest.mark.slow
def test_every_series_value_is_kept_with_its_interval_and_a_claim_lines_ratio_steps_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The variant TF2 graph of seed claim tf2_graph_no_help (standalone keras) 20% slower from run 6 on: the
    variant steps, and so does the claim line's ratio (time graph/eager), its verdict unchanged."""
    import csv

    graph = {"loop": "train_on_batch", "mode": "graph", "input": "numpy"}
    run_series(tmp_path, 8, lambda k, v: 1.2 if k >= 5 and v == graph else 1.0, api="keras")
    rows = list(csv.DictReader((tmp_path / "series-values.csv").open()))
    slow = [r for r in rows if r["kind"] == "variant" and "loop=train_on_batch,input=numpy,api=keras,mode=graph"
            in r["series"]]
    assert len(slow) == 8 and all(r["unit"] == "s" and float(r["low"]) < float(r["value"]) < float(r["high"])
                                  for r in slow)
    assert [round(float(r["against_move"]), 1) for r in slow] == [1.0] * 5 + [1.2] * 3
    assert len([r for r in rows if r["kind"] == "cell"]) == 8
    lines = [r for r in rows if r["kind"] == "claim line" and r["series"].startswith("tf2_graph_no_help")]
    assert len(lines) == 8 and all(r["unit"] == "ratio" and r["verdict"] == "holds" for r in lines)
    assert all(float(r["low"]) < float(r["value"]) < float(r["high"]) for r in lines)
    kept = read_archive(tmp_path).runs[-1]
    assert set(kept.values) == set(kept.lines) and all(math.isfinite(v[3]) for v in kept.values.values())
    assert set(kept.rounds.values()) == {3}          # three processes a variant: its interval a t on 2 df
    mean, var = kept.means[slow[-1]["series"]]
    assert math.log(float(slow[-1]["high"])) - mean == pytest.approx(4.302653 * math.sqrt(var), rel=2e-3)
    (series,) = cell_series(read_archive(tmp_path).runs)
    (line,) = series.stepped_lines
    (step,) = line.answer.steps
    assert line.variant.startswith("tf2_graph_no_help") and step.kind == "regression" and step.index == 5
    assert step.low < 1.2 < step.high
    assert main(["series", "--reports", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "claim line tf2_graph_no_help" in out and "its ratio (time A/B) x1.2" in out
    assert "claim line tf2_graph_no_help" in (tmp_path / "series.csv").read_text()
    page = parse_html((tmp_path / "index.html").read_text()).by_id("series")
    heads = " ".join(th.text for th in page.find_all("th"))
    assert "mode=graph" in heads and "claim line tf2_graph_no_help" in heads


def _drifting(refs: list[float], step_at: int, step: float, residual: float, seed: int = 3) -> list[KeptRun]:
    """Kept runs of one cell of eight variants, each run's host reference ``refs[k]``: every variant follows the host
    up to a ``residual`` of the whole run (what the reference workload does not share), and ``step`` from run
    ``step_at`` on (the whole file slower)."""
    import dataclasses
    import random

    from report_docs import kept_run

    rnd = random.Random(seed)
    out = []
    for k, ref in enumerate(refs):
        whole = math.log(ref / refs[0]) + rnd.gauss(0, residual) + (math.log(step) if k >= step_at else 0.0)
        means = {f"v{i}": (i * 0.1 + whole + rnd.gauss(0, 0.01), 0.01 ** 2 / 3) for i in range(8)}
        run = kept_run("mine", f"run{k}", {v: (0.01 ** 2, 2.0) for v in means}, n=k, means=means, rounds=3)
        out.append(dataclasses.replace(run, host_reference_s=ref, code=f"code{int(k >= step_at)}"))
    return out


def test_a_host_that_moved_more_than_the_series_resolves_is_cannot_tell_never_no_step() -> None:
    """Issue 63: the host reference moved by 54% over the runs and the whole file went 20% slower from run 4; the
    reference does not follow the work closely (a 10% residual a run): beyond a steady day's move the host's
    measured wander is not lent (``CellSeries.steady``) and the series' own seven runs cannot tell the step. It
    says it cannot tell, and how far the host moved, instead of "no step"."""
    from tfmatrix.report.series_view import cell_lines

    refs = [0.0168, 0.0225, 0.0181, 0.0258, 0.0170, 0.0249, 0.0190]
    (series,) = cell_series(_drifting(refs, 4, 1.2, 0.10))
    assert not series.steady() and not series.whole.answer.steps
    assert series.cannot_tell() == pytest.approx(0.0258 / 0.0168)
    text = "\n".join(cell_lines(series))
    assert "the cell as a whole: cannot tell: the host moved 54% between these runs" in text
    assert "no step in any variant" not in text
    # on a steady host the same residual leaves nothing to say but what the series found
    (steady,) = cell_series(_drifting([0.0102, 0.0104, 0.0103, 0.0101, 0.0105, 0.0103, 0.0102], 99, 1.0, 0.01))
    assert steady.cannot_tell() is None and "no step in any variant" in "\n".join(cell_lines(steady))
