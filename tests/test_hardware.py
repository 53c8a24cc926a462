"""The hardware axis in the report: which cells differ only in hardware, their side-by-side numbers, the page.

Cells are small synthetic documents (``report_docs``) with a pool in their
matrix spec and a CPU model in their fingerprint, as a Ray run on two pools
writes them.
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from report_docs import cell_doc, noisy, parse_html, record, results_doc, table_rows, training_params, write

from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claims.answers import compute_claim
from tfmatrix.analysis.claims.files import builtin, questions
from tfmatrix.analysis.facts import CellFacts, CellSpec, HostFacts
from tfmatrix.analysis.frame import build_frame
from tfmatrix.analysis.hardware import Hardware, hardware_groups, hardware_of, same_hardware, stack_key
from tfmatrix.analysis.statistics.inference import time_interval
from tfmatrix.report.build import build
from tfmatrix.report.hardware_view import hardware_csv, hardware_pairs
from tfmatrix.report.tables import fmt_seconds

SEED_CLAIMS = builtin()      # the seeds' claims (tfmatrix/data/claims/seeds.toml)

GENERATED = "2026-01-02T03:04:05+00:00"
EPYC, XEON = "AMD EPYC 7B13", "Intel Xeon Platinum 8481C"
TINY = {"model": "tiny", "batch": 8, "api": "tf.keras", "mode": "eager"}


def _inference(path: str, stage: str, center: float, seed: int, status: str = "ok") -> dict[str, Any]:
    return record("inference.tiny", {**TINY, "path": path, "stage": stage}, noisy(center, spread=0.01, seed=seed),
                  status=status, reason=None if status == "ok" else "ResourceExhaustedError: out of memory", seed="001")


def _noisy_twice(factor: float) -> dict[str, Any]:
    """Ten processes, every other one 30% slower: a 10% difference between two such cells is narrow (the
    interval excludes 1) but within their between-process noise."""
    per_process = [noisy((1e-3 if i % 2 == 0 else 1.3e-3) * factor, spread=0.005, seed=i) for i in range(10)]
    return record("inference.tiny", {**TINY, "path": "call", "stage": "uncompiled"}, per_process=per_process,
                  seed="001")


def _cell(name: str, records: list[dict[str, Any]], pool: str | None, cpu: str, tf: str = "2.0",
          python: str = "3.7", preset: str = "quick") -> dict[str, Any]:
    installed = {"2.0": "2.0.4", "1.15": "1.15.0", "1.14": "1.14.0"}[tf]
    results = results_doc(records, tf=installed, cell=name)
    results["environment"]["host"]["cpu"]["model"] = cpu
    doc = cell_doc(name, tf, results=results, python=python)
    if pool:
        doc["cell"]["pool"] = pool
    doc["cell"]["preset"] = doc["request"]["preset"] = preset
    return doc


def _twins(cells_dir: Path) -> None:
    """tf2.0 on pools epyc and xeon (xeon: predict 2x slower, compile the same, call 10% slower within the noise,
    one variant out of memory), plus cells that must not pair: tf1.15 on epyc only, tf2.0 with Python 3.8 on xeon."""
    write(cells_dir, _cell("tf2.0-cpu-epyc", [
        _inference("predict", "uncompiled", 1e-3, 1), _inference("predict", "compiled", 30e-3, 2),
        _inference("predict_on_batch", "compiled", 0.5e-3, 3), _noisy_twice(1.0)], "epyc", EPYC))
    write(cells_dir, _cell("tf2.0-cpu-xeon", [
        _inference("predict", "uncompiled", 2e-3, 11), _inference("predict", "compiled", 30e-3, 12),
        _inference("predict_on_batch", "compiled", 0, 13, status="error"), _noisy_twice(1.1)], "xeon", XEON))
    write(cells_dir, _cell("tf1.15-cpu-epyc", [_inference("predict", "uncompiled", 1e-3, 21)], "epyc", EPYC,
                           tf="1.15"))
    write(cells_dir, _cell("tf2.0-py38-cpu-xeon", [_inference("predict", "uncompiled", 2e-3, 31)], "xeon", XEON,
                           python="3.8"))


@pytest.fixture
def twins(tmp_path: Path) -> list[Any]:
    _twins(tmp_path / "cells")
    return load_dir(tmp_path / "cells").cells


# --------------------------------------------------------------------------- grouping (pure)


def test_a_cells_hardware_is_its_pool_and_the_models_it_measured(twins):
    by = {c.name: c for c in twins}
    assert hardware_of(by["tf2.0-cpu-epyc"]) == Hardware("epyc", EPYC, "")
    assert hardware_of(by["tf2.0-cpu-xeon"]).label == f"pool xeon · {XEON}"
    assert hardware_of(by["tf2.0-cpu-xeon"]).short == "pool xeon"
    assert Hardware("", XEON, "").short == XEON and Hardware("", EPYC, "NVIDIA H100").short == "NVIDIA H100"


def test_only_cells_identical_but_for_hardware_are_grouped(twins):
    groups = hardware_groups(twins)
    assert [[c.name for c in g.cells] for g in groups] == [["tf2.0-cpu-epyc", "tf2.0-cpu-xeon"]]
    assert groups[0].label == "TF 2.0.4 · keras 2.3.1 · py3.7 · cpu"
    assert [(a.name, b.name) for a, b in groups[0].pairs()] == [("tf2.0-cpu-epyc", "tf2.0-cpu-xeon")]


@pytest.mark.parametrize("change", ["python", "preset", "env", "pins", "tf"])
def test_cells_that_differ_in_anything_besides_hardware_are_not_paired(tmp_path, change):
    recs = [_inference("predict", "uncompiled", 1e-3, 1)]
    a = _cell("a", recs, "epyc", EPYC)
    b = _cell("b", recs, "xeon", XEON, python="3.8" if change == "python" else "3.7",
              preset="seed" if change == "preset" else "quick", tf="1.15" if change == "tf" else "2.0")
    if change == "env":
        b["cell"]["env"] = {"TF_NUM_INTRAOP_THREADS": "1"}
    if change == "pins":
        b["cell"]["requirements"] = ["tensorflow-cpu==2.0.4", "h5py==2.10.0"]
    write(tmp_path / "cells", a)
    write(tmp_path / "cells", b)
    cells = load_dir(tmp_path / "cells").cells
    assert stack_key(cells[0]) != stack_key(cells[1])
    assert hardware_groups(cells) == []


def test_names_keras_home_timeouts_and_pools_do_not_make_cells_different(tmp_path):
    recs = [_inference("predict", "uncompiled", 1e-3, 1)]
    a, b = _cell("keras3-jax-cpu-a", recs, "a", EPYC), _cell("keras3-jax-cpu-b", recs, "b", EPYC)
    for doc, name in ((a, "keras3-jax-cpu-a"), (b, "keras3-jax-cpu-b")):
        doc["cell"]["env"] = {"KERAS_BACKEND": "jax", "KERAS_HOME": f"/home/bench/.keras-cells/{name}"}
        doc["cell"]["origin"] = f"matrix.toml: product[0] pool={name[-1]}"
    b["cell"]["timeout_s"] = 60
    write(tmp_path / "cells", a)
    write(tmp_path / "cells", b)
    (group,) = hardware_groups(load_dir(tmp_path / "cells").cells)
    assert [c.name for c in group.cells] == ["keras3-jax-cpu-a", "keras3-jax-cpu-b"]   # same models, two pools


def test_the_same_cell_on_the_same_hardware_twice_is_no_hardware_comparison(tmp_path):
    recs = [_inference("predict", "uncompiled", 1e-3, 1)]
    write(tmp_path / "cells", _cell("run-1", recs, None, EPYC))
    write(tmp_path / "cells", _cell("run-2", recs, None, EPYC))
    write(tmp_path / "cells", _cell("run-3", recs, None, XEON))      # no pool, but another CPU model: hardware
    (group,) = hardware_groups(load_dir(tmp_path / "cells").cells)
    assert [(a.name, b.name) for a, b in group.pairs()] == [("run-1", "run-3")]


def test_same_hardware_prefers_the_cells_own_hardware_then_the_first():
    def cell(name: str, pool: str) -> Any:
        facts = CellFacts(host=HostFacts.of({"cpu": {"model": EPYC}}), spec=CellSpec.of({"pool": pool}))
        return SimpleNamespace(name=name, target="cpu", facts=facts)

    a, b1, b2 = cell("a", "two"), cell("b1", "one"), cell("b2", "two")
    assert same_hardware(a, [b1, b2]) is b2
    assert same_hardware(cell("x", "three"), [b1, b2]) is b1
    assert same_hardware(a, []) is None


# --------------------------------------------------------------------------- side by side (the report's numbers)


def test_hardware_pairs_give_ratio_interval_and_a_verdict_that_respects_the_noise(twins):
    (pair,) = hardware_pairs(build_frame(twins), twins)
    assert (pair.cell_a, pair.cell_b) == ("tf2.0-cpu-epyc", "tf2.0-cpu-xeon")
    slow = next(r for r in pair.view.rows if "path=predict," in r.id and "stage=uncompiled" in r.id)
    same = next(r for r in pair.view.rows if "path=predict," in r.id and "stage=compiled" in r.id)
    within = next(r for r in pair.view.rows if "path=call" in r.id)
    assert len(pair.view.rows) == 3
    assert slow.ci.ratio == pytest.approx(2.0, rel=0.03) and slow.ci.low > 1.9
    assert pair.verdict(slow.verdict) == "slower on pool xeon"
    assert same.verdict == "no clear difference"
    # the processes alternate 1.0 and 1.3 ms: their spread (a standard deviation of ~15%) is the noise, and
    # Welch's interval over the ten processes a side spans 1: 10% is inside that noise
    sd = float(np.std(np.log([1.0, 1.3] * 5), ddof=1))
    assert within.noise == pytest.approx(math.expm1(sd), rel=0.05) and within.ci.low < 1.0 < within.ci.high
    assert within.verdict == "no clear difference"
    (oom,) = pair.view.unpaired
    assert "path=predict_on_batch" in oom.id and (oom.baseline, oom.candidate) == ("ok", "error")
    assert pair.line().startswith("tf2.0-cpu-xeon (pool xeon · Intel Xeon Platinum 8481C) against tf2.0-cpu-epyc "
                                  "(pool epyc · AMD EPYC 7B13): 3 variants in both; 1 slower, 0 faster, 2 no clear")


def test_hardware_csv_has_a_row_per_variant_with_both_sides(twins):
    rows = list(csv.DictReader(io.StringIO(hardware_csv(hardware_pairs(build_frame(twins), twins)))))
    assert len(rows) == 4 and {r["cell_a"] for r in rows} == {"tf2.0-cpu-epyc"}
    assert {r["hardware_b"] for r in rows} == {f"pool xeon · {XEON}"}
    slow = next(r for r in rows if "path=predict," in r["id"] and "stage=uncompiled" in r["id"])
    assert float(slow["ratio"]) == pytest.approx(2.0, rel=0.03) and slow["verdict"] == "slower on pool xeon"
    assert float(slow["ci_low"]) < float(slow["ratio"]) < float(slow["ci_high"])
    oom = next(r for r in rows if "predict_on_batch" in r["id"])
    assert (oom["verdict"], oom["status_b"], oom["ratio"]) == ("ok on pool epyc only", "error", "")
    assert "pool xeon: error (ResourceExhaustedError: out of memory)" in oom["reason"]
    assert hardware_csv([]).splitlines() == [",".join(
        ["group", "cell_a", "hardware_a", "cell_b", "hardware_b", "benchmark", "id", "time_a_s", "time_b_s", "ratio",
         "ci_low", "ci_high", "noise", "verdict", "status_a", "status_b", "reason"])]


# --------------------------------------------------------------------------- the page


def test_the_report_shows_both_pools_side_by_side_and_points_the_warning_there(tmp_path):
    _twins(tmp_path / "cells")
    summary = build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    dom = parse_html((tmp_path / "out" / "index.html").read_text())
    section = dom.by_id("hardware")
    assert "AMD EPYC 7B13" in section.text and "Intel Xeon Platinum 8481C" in section.text
    (table,) = section.find_all("table", cls="hardware")
    assert (table.attrs["data-cell-a"], table.attrs["data-cell-b"]) == ("tf2.0-cpu-epyc", "tf2.0-cpu-xeon")
    head, rows = table_rows(table)
    assert head[2:5] == ["A: tf2.0-cpu-epyc", "B: tf2.0-cpu-xeon", "ratio B/A"]
    slow = next(r for r in rows if "path=predict," in r[1].text and "stage=uncompiled" in r[1].text)
    # the times the ratio is made of: the geometric mean of the three processes' 10th percentiles (record() deals
    # the samples to three processes)
    epyc, xeon = noisy(1e-3, spread=0.01, seed=1), noisy(2e-3, spread=0.01, seed=11)
    epyc_s = time_interval([epyc[i::3] for i in range(3)])[0]
    xeon_s = time_interval([xeon[i::3] for i in range(3)])[0]
    assert (slow[2].text, slow[3].text) == (fmt_seconds(epyc_s), fmt_seconds(xeon_s))
    assert float(slow[4].text) == pytest.approx(xeon_s / epyc_s, rel=0.01) and slow[7].text == "slower on pool xeon"
    assert "tf1.15-cpu-epyc" not in section.text and "tf2.0-py38-cpu-xeon" not in section.text
    assert dom.find("a", href="#hardware").text == "Hardware"
    loud = [w for w in summary.warnings if w.startswith("Cells were measured on different CPU models")]
    assert len(loud) == 1
    assert "the Hardware section shows side by side the 2 cells that differ only in hardware" in loud[0]
    assert summary.hardware_pairs == 1 and "1 cell pair compared across hardware" in summary.line()
    assert len((tmp_path / "out" / "hardware.csv").read_text().splitlines()) == 5


def test_one_hardware_means_no_hardware_section(tmp_path):
    recs = [_inference("predict", "uncompiled", 1e-3, 1)]
    write(tmp_path / "cells", _cell("tf2.0-cpu", recs, None, EPYC))
    write(tmp_path / "cells", _cell("tf1.15-cpu", recs, None, EPYC, tf="1.15"))
    summary = build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    html = (tmp_path / "out" / "index.html").read_text()
    assert 'id="hardware"' not in html and 'href="#hardware"' not in html
    assert summary.hardware_pairs == 0 and not any("hardware" in w for w in summary.warnings)
    assert len((tmp_path / "out" / "hardware.csv").read_text().splitlines()) == 1


def test_mixed_hardware_without_twins_says_how_to_compare_the_hardware(tmp_path):
    recs = [_inference("predict", "uncompiled", 1e-3, 1)]
    write(tmp_path / "cells", _cell("tf2.0-cpu", recs, "epyc", EPYC))
    write(tmp_path / "cells", _cell("tf1.15-cpu", recs, "xeon", XEON, tf="1.15"))
    summary = build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    dom = parse_html((tmp_path / "out" / "index.html").read_text())
    assert "No cell ran on more than one of them" in dom.by_id("hardware-none").text
    (loud,) = [w for w in summary.warnings if "different CPU models" in w]
    assert 'make pool an axis (pool = ["a", "b"] in a [[product]])' in loud


# --------------------------------------------------------------------------- versions stay on one hardware


def test_cross_version_questions_pair_cells_on_the_same_hardware(tmp_path):
    """TF 2.0 and TF 1.15 on two pools: TF 2.0 on epyc is compared with TF 1.15 on epyc, not with the
    newest TF 1.x cell wherever it ran."""
    for tf, t in (("2.0", 0.008), ("1.15", 0.004)):
        for pool, cpu, factor in (("epyc", EPYC, 1.0), ("xeon", XEON, 1.5)):
            recs = [record("training.question", training_params(), noisy(t * factor, seed=len(tf) + len(pool)))]
            write(tmp_path / "cells", _cell(f"tf{tf}-cpu-{pool}", recs, pool, cpu, tf=tf))
    cells = load_dir(tmp_path / "cells").cells
    question = next(q for q in questions() if q.key == "tf2_vs_tf1")
    result = compute_claim(question, build_frame(cells), cells)
    assert sorted(c.name for c in result.cells) == ["tf2.0-cpu-epyc vs tf1.15-cpu-epyc",
                                                    "tf2.0-cpu-xeon vs tf1.15-cpu-xeon"]
    ratios = [ln.comparison.ci.ratio for c in result.cells for ln in c.lines]
    assert ratios and all(r == pytest.approx(2.0, rel=0.05) for r in ratios)   # versions, not hardware


def test_a_cross_cell_claim_takes_the_seeds_pair_on_each_cells_own_hardware(tmp_path):
    """Seed 000's TF 2.0 vs TF 1.14 on two pools: each TF 2.0 cell against the TF 1.14 cell of its pool."""
    q = {"loop": "train_on_batch", "input": "numpy", "api": "keras"}
    for tf, mode, t in (("2.0", "eager", 0.008), ("1.14", "graph", 0.004)):
        for pool, cpu, factor in (("epyc", EPYC, 1.0), ("xeon", XEON, 1.5)):
            recs = [record("training.question", training_params(**q, mode=mode), noisy(t * factor, seed=7))]
            doc = _cell(f"tf{tf}-cpu-{pool}", recs, pool, cpu, tf=tf)
            doc["cell"]["keras"]["version"] = "2.3.1" if tf == "2.0" else "2.2.5"
            write(tmp_path / "cells", doc)
    cells = load_dir(tmp_path / "cells").cells
    claim = next(c for c in SEED_CLAIMS if c.key == "tf1_faster_train_on_batch")
    answered = compute_claim(claim, build_frame(cells), cells).cells
    assert sorted(c.name for c in answered) == ["tf2.0-cpu-epyc vs tf1.14-cpu-epyc",
                                                 "tf2.0-cpu-xeon vs tf1.14-cpu-xeon"]
    ratios = [line.comparison.ci.ratio for c in answered for line in c.lines]
    assert len(ratios) == 2 and ratios == pytest.approx([2.0, 2.0], rel=0.05)        # versions, not hardware
