"""Sequential rounds end to end: real Docker, real TensorFlow, the default's way of running (claims, rounds auto).

Two cells of the Docker matrix (TF 1.15 and TF 2.21 with Keras 3), quick preset,
only the variants a claim compares, ``--rounds auto``, run twice into one
reports directory. The first run has no noise history here: round 1 is a look
on the noise prior shipped with tfmatrix for the variants it knows
(``analysis.runs.prior``), and a variant it does not know (most of the quick
preset's) runs round 2 before its lines can stop; every line says how many
rounds it took and why it stopped, in the cell files, claims.csv and the page;
its report keeps the noise history. The second run starts warm: round 1 is
judged with the first run's noise, and the history then holds both runs.
"""
from __future__ import annotations

import csv

import pytest
from e2e import MATRICES, cell_docs, require, tfmatrix

from tfmatrix.analysis.claims.files import questions
from tfmatrix.analysis.runs.noise_model import CONTROL, history_at
from tfmatrix.analysis.runs.prior import shipped
from tfmatrix.analysis.stopping import LOOK_ALPHA, MAX_ROUNDS
from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.docker
CELLS = ("tf1.15-cpu", "tf2.21-keras3-cpu")


def test_a_sequential_claims_run_stops_each_line_when_it_is_decided_and_starts_warm_the_second_time(tmp_path):
    require(docker_engine.engine() is not None, "no Docker engine answers (scripts/host-setup installs one)")
    reports = tmp_path / "reports"
    args = ["matrix", "--matrix", str(MATRICES / "docker.toml"), "--runner", "docker", "--reports", str(reports),
            "--preset", "quick", "--variants", "claims", "--rounds", "auto", "--redo",
            *(a for c in CELLS for a in ("--only", c))]
    first = tfmatrix(*args)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "no noise history of these cells here yet: round 1 judged with the prior shipped with tfmatrix" \
        in first.stderr
    known = set(shipped().variances)
    docs = cell_docs(reports)
    for name in CELLS:
        doc = docs[name]
        assert doc["status"] == "ok", doc["reason"]
        assert doc["request"]["sequential"] is True and doc["request"]["rounds"] == MAX_ROUNDS
        assert len(doc["request"]["only"]) > 0        # the claims' variants, named
        seq = doc["results"]["config"]["schedule"]["sequential"]
        assert seq["first_look"] == 1 and seq["prior"] is True and seq["alpha"] == pytest.approx(LOOK_ALPHA)
        assert 2 <= doc["results"]["config"]["rounds"] <= MAX_ROUNDS
        for claim, _cell, _a, _b, rounds, why in seq["lines"]:
            assert 1 <= rounds <= MAX_ROUNDS and why, (claim, rounds, why)
        measured = [r for r in doc["results"]["records"] if r["status"] == "ok"]
        assert measured and all(r["schedule"]["passes"] for r in measured)
        # a line with a side the prior does not know has no variance at round 1: it never stops there
        unknown = [row for row in seq["lines"] if row[2] not in known or row[3] not in known]
        assert unknown and all(row[4] >= 2 for row in unknown), unknown
    with open(reports / "claims.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["cell"] in CELLS and r["ratio"]]
    asked = {q.key for q in questions()}        # the seeds' questions: answered on what ran, never in the looks
    assert rows and all(r["stopped"] for r in rows if r["claim"] not in asked)
    assert any(r["claim"] in asked and not r["stopped"] for r in rows)
    assert "Sequential rounds" in (reports / "index.html").read_text()
    history = history_at(reports)           # the run archive keeps each cell's variances with it
    assert len(history.runs) == 1
    model = history.runs[0][1]
    assert model.variances and all(key in model.means for key in model.variances)     # run means, for run_spread
    assert {cell for cell, vid in model.variances if vid == CONTROL} == set(CELLS)     # each reference workload

    second = tfmatrix(*args)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "round 1 judged with the noise history (" in second.stderr
    docs = cell_docs(reports)
    for name in CELLS:
        assert docs[name]["results"]["config"]["schedule"]["sequential"]["first_look"] == 1
    assert len(history_at(reports).runs) == 2
