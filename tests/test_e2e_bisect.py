"""``tfmatrix bisect`` end to end: real images built on demand, real TensorFlow, the quick preset.

One bisect of the claim that predict() is slower after compile() over three
TensorFlow releases (2.2, 2.1, 2.0: the ends and one probe between them when
they differ), then the same bisect again, which must measure nothing: every
probe is an ordinary cell file, reused. What the probes measured is printed,
never asserted (timings do not go into assertions).
"""
from __future__ import annotations

import json
import re

import pytest
from e2e import require, tfmatrix

from suite.schema import validate
from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.docker
CLAIM = "predict_slower_after_compile"


def test_a_bisect_over_three_releases_runs_ordinary_cells_and_a_second_one_reuses_them(tmp_path):
    require(docker_engine.engine() is not None, "no Docker engine answers (scripts/host-setup installs and starts one)")
    reports = tmp_path / "reports"
    argv = ["bisect", "--claim", CLAIM, "--good", "2.2", "--bad", "2.0", "--preset", "quick", "--rounds", "2",
            "--runner", "docker", "--reports", str(reports)]
    first = tfmatrix(*argv)
    print(first.stdout)
    assert first.returncode in (0, 1), first.stderr[-3000:]
    [answer_file] = (reports / "bisect").glob("*.json")
    doc = json.loads(answer_file.read_text())
    releases = [p["release"] for p in doc["probes"]]
    assert releases[:2] == ["2.2.3", "2.0.4"] and set(releases) <= {"2.2.3", "2.1.4", "2.0.4"}
    assert (len(releases) == 3) == (not doc["problem"]), doc      # the middle is probed when the ends differ
    assert doc["found"] == (first.returncode == 0)
    if doc["found"]:       # where it changed: both boundary releases profiled (history.why), or why not
        assert doc["why"], doc
        assert doc["why"][0].startswith(("predict after compile (inference.tiny[", "TensorFlow ")), doc["why"]
        assert "where, from profiles of both releases" in first.stdout
        profiled = {p.name for p in (reports / "profiles").glob("*.json")}
        assert {f"{doc['last_good']}", f"{doc['first_bad']}"} <= {n.split("-")[0][2:] for n in profiled}
    out = first.stdout.splitlines()
    assert out[0].startswith(f"bisect {CLAIM}: time predict after compile / predict before compile, TensorFlow")
    assert any(line.startswith(("answer: changed between", "no answer: ")) for line in out)
    for p in doc["probes"]:
        [path] = (reports / "releases" / "cells").glob(f"tf{p['release']}-*cpu.json")   # 2.0/2.1: + keras 2.3.1
        cell = json.loads(path.read_text())
        assert cell["status"] == "ok" and validate(cell["results"]) == []
        assert cell["results"]["environment"]["tf"]["tensorflow"]["version"] == p["release"]
        ids = {r["id"] for r in cell["results"]["records"]}
        assert ids and all(i.startswith("inference.tiny[") and "path=predict," in i for i in ids)
        assert p["how"].startswith("measured ") and p["value"] is not None and p["low"] <= p["value"] <= p["high"]

    again = tfmatrix(*argv)
    assert again.returncode == first.returncode, again.stderr[-3000:]
    redo = json.loads(answer_file.read_text())
    assert [p["how"].split()[0] for p in redo["probes"]] == ["reused"] * len(releases)
    assert [(p["release"], p["value"]) for p in redo["probes"]] == [(p["release"], p["value"]) for p in doc["probes"]]
    assert "bisect: measuring" not in again.stderr


def test_a_timeline_over_three_releases_writes_a_point_per_claim_and_release(tmp_path):
    """``timeline --from 2.0 --to 2.2``: three real cells, every one-cell claim in each, timeline.csv and .json."""
    require(docker_engine.engine() is not None, "no Docker engine answers (scripts/host-setup installs and starts one)")
    from tfmatrix.history.timeline import timeline_claims
    from tfmatrix.results.history_docs import TIMELINE_COLUMNS

    reports = tmp_path / "reports"
    proc = tfmatrix("timeline", "--from", "2.0", "--to", "2.2", "--preset", "quick", "--rounds", "1",
                    "--runner", "docker", "--reports", str(reports))
    print(proc.stdout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads((reports / "timeline.json").read_text())
    assert doc["releases"] == ["2.0.4", "2.1.4", "2.2.3"]
    rows = (reports / "timeline.csv").read_text().splitlines()
    assert rows[0] == ",".join(TIMELINE_COLUMNS) and len(rows) == 1 + 3 * len(timeline_claims())
    for p in doc["points"]:
        assert (p["ratio"] is not None) or p["reason"], p
        cell = json.loads((reports / p["source"]).read_text())
        assert cell["status"] == "ok" and cell["results"]["environment"]["tf"]["tensorflow"]["version"] == p["release"]
    assert sum(1 for p in doc["points"] if p["ratio"] is not None) >= 3
    # 2.0 and 2.1 run with their standalone Keras 2.3.1, so the keras-vs-tf.keras claim is asked there
    keras_claim = {p["release"]: p for p in doc["points"] if p["claim"] == "keras_slower_than_tf_keras"}
    assert keras_claim["2.0.4"]["cell"] == "tf2.0.4-keras2.3.1-cpu" and keras_claim["2.2.3"]["cell"] == "tf2.2.3-cpu"
    assert all("no standalone keras" not in keras_claim[r]["reason"] for r in ("2.0.4", "2.1.4"))
    summary = [line for line in proc.stdout.splitlines() if not line.startswith("written: ")]
    assert len(summary) == len(timeline_claims()) and all(re.match(r"^[a-z0-9_]+: ", line) for line in summary)
