"""Your own model across the matrix, end to end through Docker: examples/own_benchmark on two existing cells.

One ``matrix`` run (quick preset) of the example's matrix file on TF 2.15 and
TF 2.21 + Keras 3, with the example's benchmarks, a Keras 2-only benchmark
that raises in the Keras 3 cell, and the built-in self-check beside them. The
files are mounted read-only into the containers; the results land in the
cell files, results.csv and the report (with its upgrade view); a second run
with nothing changed keeps both cells.
"""
from __future__ import annotations

import csv
import time
from types import SimpleNamespace

import pytest
from e2e import ROOT, cell_docs, records, require, tfmatrix

from suite.schema import validate
from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.docker
EXAMPLE = ROOT / "examples" / "own_benchmark"
KERAS2_ONLY = ROOT / "tests" / "suite_plugins" / "keras2_only.py"
CELLS = ("tf2.15-cpu", "tf2.21-keras3-cpu")


def _matrix(reports, *extra: str):
    args = ["matrix", "--matrix", str(EXAMPLE / "matrix.toml"), "--runner", "docker", "--reports", str(reports),
            "--preset", "quick", "--bench", "own.*", "--bench", "legacy.*", "--bench", "selfcheck.*",
            "--bench-path", str(EXAMPLE / "benchmarks"), "--bench-path", str(KERAS2_ONLY)]
    for cell in CELLS:
        args += ["--only", cell]
    return tfmatrix(*args, *extra, timeout=3000)


@pytest.fixture(scope="module")
def own_run(tmp_path_factory):
    require(docker_engine.engine() is not None, "no Docker engine answers (scripts/host-setup installs one)")
    reports = tmp_path_factory.mktemp("own-reports")
    t0 = time.monotonic()
    proc = _matrix(reports, "--redo")
    return SimpleNamespace(proc=proc, reports=reports, docs=cell_docs(reports), seconds=time.monotonic() - t0)


def test_the_example_runs_in_both_cells_and_a_keras2_only_benchmark_fails_only_under_keras3(own_run):
    assert own_run.proc.returncode == 0, own_run.proc.stderr[-3000:]
    assert set(own_run.docs) == set(CELLS)
    for name in CELLS:
        doc = own_run.docs[name]
        assert doc["status"] == "ok", doc["reason"]
        assert validate(doc["results"]) == []
        assert doc["request"]["bench"]                       # the files' hash is part of the request
        recs = records(doc)
        own = {i: r for i, r in recs.items() if r["benchmark"] in ("own.transformer", "own.resnet")}
        assert len(own) == 4 and all(r["status"] == "ok" and r["seed"] == "user" for r in own.values()), own
        assert {r["params"]["path"] for r in own.values()} == {"fit", "call"}
        fit = next(r for r in own.values() if r["benchmark"] == "own.transformer" and r["params"]["path"] == "fit")
        assert fit["info"]["first_s"] > 0 and fit["iterations"]["inner"] == 4
        assert any(r["benchmark"] == "selfcheck.overhead" and r["status"] == "ok" for r in recs.values())
    legacy = {n: next(r for r in records(own_run.docs[n]).values() if r["benchmark"] == "legacy.rescaling")
              for n in CELLS}
    assert legacy["tf2.15-cpu"]["status"] == "ok"
    bad = legacy["tf2.21-keras3-cpu"]
    assert bad["status"] == "error" and bad["reason"].startswith("AttributeError:") and "experimental" in bad["reason"]
    # the traceback's tail points into the user's file, mounted next to the suite
    assert "/opt/tfmatrix/bench/1/keras2_only.py" in bad["traceback"]


def test_results_csv_and_the_report_show_them_beside_the_built_in_ones(own_run):
    with open(own_run.reports / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    seen = {(r["cell"], r["benchmark"], r["status"]) for r in rows}
    for cell in CELLS:
        assert {(cell, "own.transformer", "ok"), (cell, "own.resnet", "ok"), (cell, "selfcheck.overhead", "ok")} <= seen
    assert ("tf2.21-keras3-cpu", "legacy.rescaling", "error") in seen
    page = (own_run.reports / "index.html").read_text()
    assert 'id="upgrade"' in page and "own.transformer[path=fit" in page and "bench-own.resnet" in page
    with open(own_run.reports / "upgrade.csv", newline="") as f:
        upgrade = list(csv.DictReader(f))
    assert sum(1 for r in upgrade if r["benchmark"].startswith("own.") and r["ratio"]) == 4
    broken = next(r for r in upgrade if r["benchmark"] == "legacy.rescaling")
    assert broken["verdict"] == "broken by the upgrade"
    print("own benchmark docker run: %.0f s" % own_run.seconds)


def test_a_second_run_with_unchanged_files_keeps_both_cells(own_run):
    proc = _matrix(own_run.reports)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("kept the results of") == len(CELLS)


CLAIM = "own_serving_cheaper_than_training"      # examples/own_benchmark/claims.toml


def test_a_claim_of_your_own_is_judged_like_a_seeds_and_explain_and_bisect_take_it(own_run):
    """The example's own claim (``[suite] claims``), over its own benchmark: a grid row and a Claims entry in the
    family "Your claims", a line per cell in claims.csv, a real ``explain --claim`` profiling both sides in a cell
    (the user's files mounted), and ``bisect --claim`` resolving it to the user's variants."""
    from tfmatrix.analysis.claims.files import every_builtin
    from tfmatrix.analysis.claims.sources import own_claims
    from tfmatrix.history.targets import claim_target
    from tfmatrix.matrix import load

    page = (own_run.reports / "index.html").read_text()
    assert f'data-claim="{CLAIM}"' in page and f'id="claim-{CLAIM}"' in page and ">Your claims</th>" in page
    with open(own_run.reports / "claims.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["claim"] == CLAIM]
    assert {r["cell"] for r in rows if r["ratio"]} == set(CELLS), rows
    verdicts = ("holds", "reversed", "no clear difference", "not enough replication")
    assert all(r["verdict"] in verdicts and r["seed"] == "our capacity plan" for r in rows if r["ratio"])
    explained = tfmatrix("explain", "--claim", CLAIM, "--cell", "tf2.15-cpu", "--matrix", str(EXAMPLE / "matrix.toml"),
                         "--reports", str(own_run.reports), "--runner", "docker", "--calls", "2", timeout=1500)
    print(explained.stdout)
    assert explained.returncode == 0, explained.stderr[-3000:]
    assert "A = own.resnet[" in explained.stdout and "path=call" in explained.stdout
    matrix = load(EXAMPLE / "matrix.toml")
    target = claim_target(CLAIM, "quick", every_builtin() + own_claims(matrix), matrix.settings.bench_paths)
    assert target.variant_ids and all(v.startswith("own.resnet[") for v in target.variant_ids)
