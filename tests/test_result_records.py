"""The documents beside the cell files, each a record with one reader: the journal's head, the host's speed, the noise
history and a cell's profiles. Each reads back what its writer wrote, reads the versions before it, and says in one
line what it cannot read."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfmatrix.errors import UserError
from tfmatrix.results.documents import HostSpeedPoint, host_speed_points
from tfmatrix.results.journal import HEAD_FILE, JournalHead, read_head, write_head
from tfmatrix.results.noise_history import (
    NOISE_FILE,
    NoiseHistory,
    NoiseModel,
    noise_file_beside,
    noise_history_at,
    read_noise_history,
    write_noise_history,
)
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


def test_the_noise_history_reads_back_what_it_wrote_and_a_version_one_file(tmp_path: Path) -> None:
    history = NoiseHistory().with_run("r1", NoiseModel({("c", "v"): (0.01, 4.0), ("c", "w"): (0.02, 2.0)}, "cells",
                                                       {("c", "v"): (-6.5, 0.002)}))
    write_noise_history(tmp_path, history)
    assert noise_history_at(tmp_path) == history          # version 3: a run's means beside its variances
    two = json.loads((tmp_path / NOISE_FILE).read_text())
    two["schema_version"] = 2
    two["runs"][0]["variances"] = [row[:4] for row in two["runs"][0]["variances"]]
    (tmp_path / "two.json").write_text(json.dumps(two))
    assert dict(read_noise_history(tmp_path / "two.json").runs)["r1"].means == {}
    (tmp_path / "cells").mkdir()
    assert noise_file_beside(tmp_path / "cells") == tmp_path / NOISE_FILE
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema": "tfmatrix.noise-model", "schema_version": 1, "source": "cells",
                               "variances": [["c", "v", 0.01, 4.0]]}))
    assert read_noise_history(old) == NoiseHistory((("cells", NoiseModel({("c", "v"): (0.01, 4.0)}, "cells")),))
    old.write_text(json.dumps({"schema": "tfmatrix.noise-model", "schema_version": 4, "runs": []}))
    with pytest.raises(UserError, match="not a tfmatrix noise model"):
        read_noise_history(old)
    assert noise_history_at(tmp_path / "nowhere") == NoiseHistory()


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
    from tfmatrix.results.noise_history import KEEP_RUNS

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
