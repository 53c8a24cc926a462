"""The documents beside the cell files, each a record with one reader: the journal's head, the host's speed, the noise
history and a cell's profiles. Each reads back what its writer wrote, reads the versions before it, and says in one
line what it cannot read."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_docs import kept_run, write_archive

from tfmatrix.analysis.runs.noise_model import KEEP_RUNS, NoiseHistory, NoiseModel, history_at, history_beside
from tfmatrix.errors import UserError
from tfmatrix.results.documents import HostSpeedPoint, host_speed_points
from tfmatrix.results.journal import HEAD_FILE, JournalHead, read_head, write_head
from tfmatrix.results.profile_docs import PROFILES_DIR, ProfilesDoc, peek_profiles, profiles_in, write_profiles


def test_the_journal_head_reads_back_what_it_wrote_and_a_head_from_before_the_version(tmp_path: Path) -> None:
    head = JournalHead("abc", 7, "20261126T120000-7", [HostSpeedPoint(1, 1.5, 0.02)], [[1, 1, "s0", ["a"]]],
                       {"cap": 4, "lines": []}, {"duet": {"cpus": ["0", "1"]}})
    write_head(tmp_path, head)
    assert read_head(tmp_path) == head
    assert json.loads((tmp_path / HEAD_FILE).read_text())["duet"] == {"cpus": ["0", "1"]}     # kept as it was
    (tmp_path / HEAD_FILE).write_text(json.dumps({"identity": "abc", "seed": 7, "run": "r", "host_speed": []}))
    assert read_head(tmp_path) == JournalHead("abc", 7, "r")
    (tmp_path / HEAD_FILE).write_text("[")
    assert read_head(tmp_path) is None                    # unreadable: the run starts anew


def test_a_host_speed_series_is_parsed_once_and_a_malformed_point_is_left_out() -> None:
    assert host_speed_points([[1, 2.0, 0.02], [2, 3.0], "x", [3, 4.0, "slow"], [4, 5.0, 0.03]]) == [
        HostSpeedPoint(1, 2.0, 0.02), HostSpeedPoint(4, 5.0, 0.03)]
    assert host_speed_points(None) == [] and HostSpeedPoint(1, 2.0, 0.02).to_json() == [1, 2.0, 0.02]


def test_the_noise_history_is_read_from_the_run_archive_each_run_one_model_and_none_from_runs_kept_before(
        tmp_path: Path) -> None:
    """One memory of earlier runs: each kept cell's variances (``KeptRun.variances``) are its run's noise model, its
    cells together, with the means of its variants of two rounds or more beside them; an entry kept before the
    archive kept variances lends none; no archive: an empty history; a broken index: empty for a run's looks,
    one line for ``compare``."""
    runs = [kept_run("c", "r1", {"v": (0.01, 4.0), "w": (0.02, 2.0)}, 0, {"v": (-6.5, 0.002), "w": (-5.0, 0.001)}),
            kept_run("d", "r1", {"v": (0.03, 2.0)}, 1),
            kept_run("c", "r2", {}, 2),                                   # kept before variances were
            kept_run("c", "r3", {"v": (0.05, 2.0)}, 3, {"v": (-6.4, float("nan"))}, rounds=1)]
    write_archive(tmp_path, runs)
    history = history_at(tmp_path)
    assert [r for r, _ in history.runs] == ["r1", "r3"]
    first = dict(history.runs)["r1"]
    assert first.variances == {("c", "v"): (0.01, 4.0), ("c", "w"): (0.02, 2.0), ("d", "v"): (0.03, 2.0)}
    assert first.means[("c", "v")] == (-6.5, 0.002)
    assert dict(history.runs)["r3"].means == {}                           # one round: no run point
    (tmp_path / "cells").mkdir()
    beside = history_beside(tmp_path / "nowhere", tmp_path / "cells")
    assert beside is not None and beside == (history, tmp_path / "runs")
    assert history_at(tmp_path / "nowhere") == NoiseHistory() and history_beside(tmp_path / "nowhere") is None
    (tmp_path / "runs" / "index.json").write_text("[")
    assert history_at(tmp_path) == NoiseHistory()
    with pytest.raises(UserError, match="cannot read the run archive's index"):
        history_beside(tmp_path / "cells")


def test_profiles_beside_a_report_are_read_by_cell_and_a_bad_file_is_one_line(tmp_path: Path) -> None:
    where = tmp_path / PROFILES_DIR
    doc = ProfilesDoc("c1", {"v": {"id": "v", "status": "error", "reason": "no"}}, {
        "schema": "tfmatrix.profiles", "schema_version": 1, "suite_version": "", "status": "error", "error": "no",
        "preset": "seed", "config": {}, "cell": {"name": "c1"}, "environment": {}, "gpu": {}, "warnings": [],
        "started": "", "finished": "", "wall_s": 0.0})
    write_profiles(where / "c1.json", doc)
    assert peek_profiles(where / "c1.json") == doc
    (where / "c1.speedscope.json").write_text("{}")          # the report's own drawing: not a profiles file
    (where / "bad.json").write_text("{")
    found = profiles_in(tmp_path)
    assert list(found.by_cell) == ["c1"] and found.by_cell["c1"].records == doc.records
    assert len(found.unreadable) == 1 and "bad.json: not a readable profiles file" in found.unreadable[0]


def test_the_noise_history_keeps_each_variants_last_runs_not_the_last_runs() -> None:
    """A variant decided at round 1 of a sequential run has no variance in that run: its last measured noise must
    outlive five such runs (a history of "the last five runs" forgot it, and the next run waited for round 2)."""
    wide = NoiseModel({("c", "rare"): (0.04, 2.0), ("c", "often"): (0.01, 2.0)}, "cells")
    history = NoiseHistory().with_run("full", wide)
    for i in range(KEEP_RUNS + 2):
        history = history.with_run(f"r{i}", NoiseModel({("c", "often"): (0.02, 2.0)}, "cells"))
    runs = dict(history.runs)
    assert runs["full"].variances == {("c", "rare"): (0.04, 2.0)}        # kept for the variant nothing measured since
    assert sum(("c", "often") in m.variances for m in runs.values()) == KEEP_RUNS    # the others: their last five
    assert list(runs)[-KEEP_RUNS:] == [f"r{i}" for i in range(2, KEEP_RUNS + 2)] and "r0" not in runs
    again = history.with_run(f"r{KEEP_RUNS + 1}", NoiseModel({("c", "often"): (0.03, 2.0)}, "cells"))
    assert dict(again.runs)[f"r{KEEP_RUNS + 1}"].variances == {("c", "often"): (0.03, 2.0)}   # a rebuilt report
    assert len(again.runs) == len(history.runs)
