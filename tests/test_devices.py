"""One environment on two devices (or thread settings): which cells pair, their ratios, the crossover, the page.

Cells are synthetic documents written as an interleaved run of two existing
environments writes them: one interpreter, ``target = "gpu"`` beside
``target = "cpu"`` with ``JAX_PLATFORMS=cpu`` (the H200 run of issue 42), or
two CPU cells that differ only in ``OMP_NUM_THREADS`` (the same question where
no GPU is lent).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from report_docs import noisy, parse_html, record, results_doc

from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claim_file import builtin
from tfmatrix.analysis.claims import compute_claim
from tfmatrix.analysis.devices import (
    SIZE_AXES,
    SizePoint,
    crossover_at,
    device_groups,
    device_setting,
    gpu_pair,
    seed_gpu_note,
)
from tfmatrix.analysis.frame import build_frame
from tfmatrix.report.build import build
from tfmatrix.report.charts import ratio_size_svg
from tfmatrix.report.devices_view import device_pairs
from tfmatrix.results.documents import SuiteResults
from tfmatrix.results.store import CellOutcome, cell_document, write_cell

SEED_CLAIMS = builtin()      # the seeds' claims (tfmatrix/data/claims/seeds.toml)

PYTHON = "/opt/envs/keras3-jax/bin/python"
SIZES = (128, 512, 2048)
GENERATED = "2026-01-02T03:04:05+00:00"


def _matmul(n: int, t: float, seed: int, impl: str = "numpy.dot") -> dict[str, Any]:
    """Seed 002's product at size ``n``: three processes, one per round of the interleaved run."""
    api = "numpy" if impl == "numpy.dot" else "tf"
    rec = record("tensor_ops.matmul", {"impl": impl, "n": n, "dtype": "float64", "api": api, "mode": "eager"},
                 noisy(t, spread=0.01, seed=seed), seed="002")
    rec["schedule"] = {"rounds": [3] * 3, "stopped": ["repeats"] * 3, "passes": [1, 2, 3]}
    return rec


def _existing(out: Path, name: str, target: str, env: dict[str, str], records: list[dict[str, Any]],
              python: str = PYTHON, gpu: str | None = "NVIDIA H200", preset: str = "seed") -> None:
    """An existing environment's cell of one interleaved run (three rounds, seed 7), as the runner writes it."""
    doc = results_doc(records, tf="2.15.1", cell=name, target=target,
                      gpus=["/physical_device:GPU:0"] if target == "gpu" else None)
    doc["config"].update(rounds=3, schedule={"kind": "interleaved", "run": "run-7", "seed": 7})
    doc["preset"] = preset
    if target == "gpu" and gpu:
        doc["environment"]["host"]["nvidia_smi"] = {"gpus": [{"name": gpu}]}
    results = SuiteResults.from_json(doc, Path(f"{name}.json"))
    spec = {"name": name, "tf": "", "tf_release": "", "python": "", "target": target, "preset": preset,
            "keras": {"flavour": "as installed", "version": None}, "env": env, "interpreter": python}
    runner = {"name": "existing", "interpreter": python}
    write_cell(out / f"{name}.json", cell_document(spec, CellOutcome(name, "ok", None, runner, {"run_s": 1.0}, results),
                                                   {"preset": preset}))


def _pair(out: Path, gpu_over_cpu: tuple[float, ...], cpu_s: tuple[float, ...] = (1e-3, 8e-3, 0.5)) -> None:
    """One JAX environment on the GPU and (JAX_PLATFORMS=cpu) on the CPU: np.dot-sized products at ``SIZES``."""
    cpu = [_matmul(n, t, i) for i, (n, t) in enumerate(zip(SIZES, cpu_s, strict=True))]
    gpu = [_matmul(n, t * r, 10 + i) for i, (n, t, r) in enumerate(zip(SIZES, cpu_s, gpu_over_cpu, strict=True))]
    _existing(out, "keras3-jax-h200", "gpu", {}, gpu)
    _existing(out, "keras3-jax-cpu", "cpu", {"JAX_PLATFORMS": "cpu"}, cpu)


def test_one_environment_on_gpu_and_cpu_pairs_cpu_first(tmp_path: Path) -> None:
    _pair(tmp_path, (3.0, 0.5, 0.2))
    cells = load_dir(tmp_path).cells
    groups = device_groups(cells)
    assert [[c.name for c in g.cells] for g in groups] == [["keras3-jax-cpu", "keras3-jax-h200"]]
    assert [device_setting(c).label for c in groups[0].cells] == ["CPU, JAX_PLATFORMS=cpu", "GPU"]
    assert gpu_pair(cells)


def test_cells_of_other_interpreters_or_other_variables_do_not_pair(tmp_path: Path) -> None:
    _existing(tmp_path, "a-gpu", "gpu", {}, [_matmul(128, 1e-3, 1)])
    _existing(tmp_path, "b-cpu", "cpu", {"JAX_PLATFORMS": "cpu"}, [_matmul(128, 1e-3, 2)], python="/opt/b/bin/python")
    _existing(tmp_path, "a-onednn-cpu", "cpu", {"TF_ENABLE_ONEDNN_OPTS": "0"}, [_matmul(128, 1e-3, 3)])
    cells = load_dir(tmp_path).cells
    assert device_groups(cells) == [] and not gpu_pair(cells)


def test_a_cpu_only_pair_in_two_thread_settings_pairs(tmp_path: Path) -> None:
    """Where no GPU is lent: one interpreter with OMP_NUM_THREADS=1 and =2 is a pair of its own."""
    cpu_s = (1e-3, 8e-3, 0.5)
    one = [_matmul(n, t, i) for i, (n, t) in enumerate(zip(SIZES, cpu_s, strict=True))]
    two = [_matmul(n, t * r, 10 + i) for i, (n, t, r) in enumerate(zip(SIZES, cpu_s, (1.2, 0.7, 0.55), strict=True))]
    _existing(tmp_path, "env-1t", "cpu", {"OMP_NUM_THREADS": "1"}, one)
    _existing(tmp_path, "env-2t", "cpu", {"OMP_NUM_THREADS": "2"}, two)
    cells = load_dir(tmp_path).cells
    assert not gpu_pair(cells)
    (pair,) = device_pairs(build_frame(cells), cells)
    assert pair.names == ("OMP_NUM_THREADS=1", "OMP_NUM_THREADS=2")
    (x,) = pair.crossovers
    assert [p.ratio for p in x.points] == pytest.approx([1.2, 0.7, 0.55], rel=0.03)
    assert x.at is not None and 128 < x.at < 512


def test_the_crossover_is_interpolated_on_log_size(tmp_path: Path) -> None:
    _pair(tmp_path, (3.0, 0.5, 0.2))
    cells = load_dir(tmp_path).cells
    (pair,) = device_pairs(build_frame(cells), cells)
    assert pair.names == ("CPU", "GPU")
    assert {c.verdict for c in pair.view.rows} == {"slower", "faster"}
    assert all(c.ci.rounds == 3 for c in pair.view.rows)           # two cells of one interleaved run: by round
    (x,) = pair.crossovers
    assert x.axis.param == "n" and [p.size for p in x.points] == list(SIZES)
    assert [p.ratio for p in x.points] == pytest.approx([3.0, 0.5, 0.2], rel=0.03)
    # between 128 (3.0) and 512 (0.5): log n moves 1.0986 / (1.0986 + 0.6931) of the way
    assert x.at == pytest.approx(math.exp(math.log(128) + 1.0986 / 1.7918 * math.log(4)), rel=0.03)
    assert not x.first and "GPU pays from matrix size n ≈ 30" in x.text()


def test_no_crossover_within_the_measured_sizes(tmp_path: Path) -> None:
    _pair(tmp_path, (3.0, 1.5, 1.2))
    cells = load_dir(tmp_path).cells
    (pair,) = device_pairs(build_frame(cells), cells)
    (x,) = pair.crossovers
    assert x.at is None
    assert x.text().startswith("GPU does not pay within the measured sizes (matrix size n; GPU/CPU 3.00 at 128")


def test_one_environment_at_several_presets_pools_its_sizes_for_one_crossover(tmp_path: Path) -> None:
    """One preset measures one n (256 in quick, 2000 in seed): pairs of one environment at both give the curve."""
    for preset, n, cpu_s, ratio in (("quick", 256, 2e-3, 2.0), ("seed", 2000, 0.8, 0.25)):
        _existing(tmp_path, f"jax-gpu-{preset}", "gpu", {}, [_matmul(n, cpu_s * ratio, 1)], preset=preset)
        _existing(tmp_path, f"jax-cpu-{preset}", "cpu", {"JAX_PLATFORMS": "cpu"}, [_matmul(n, cpu_s, 2)],
                  preset=preset)
    cells = load_dir(tmp_path).cells
    pairs = device_pairs(build_frame(cells), cells)
    assert len(pairs) == 2 and len(pairs[0].family) == 2 and pairs[1].crossovers == []
    (x,) = pairs[0].crossovers
    assert [p.size for p in x.points] == [256, 2000]
    assert x.at == pytest.approx(math.exp(math.log(256) + math.log(2) / math.log(8) * math.log(2000 / 256)), rel=0.05)


def test_crossover_rules() -> None:
    def pts(*ratios: float) -> list[SizePoint]:
        return [SizePoint(float(s), r, r, r, "") for s, r in zip(SIZES, ratios, strict=True)]

    assert crossover_at(pts(0.9, 0.5, 0.2)) == (128.0, True)          # pays at every size: at or below the first
    assert crossover_at(pts(0.8, 1.2, 0.5))[0] == pytest.approx(math.exp(
        math.log(512) + math.log(1.2) / (math.log(1.2) - math.log(0.5)) * math.log(4)))   # must stay below 1
    assert crossover_at(pts(0.5, 0.8, 1.0)) == (None, False)          # 1.0 is not paying
    assert crossover_at([]) == (None, False)


def test_size_axes_read_the_seeds_sizes() -> None:
    by = {a.seed: a for a in SIZE_AXES}
    assert by["002"].size({"n": 1024}) == 1024
    assert by["000"].size({"batch_shape": [32, 400, 16]}) == 32 and by["000"].covers("training.question")
    assert by["001"].size({"batch_shape": [8, 10]}) == 8 and by["001"].covers("inference.tiny")
    assert by["003"].size({"input_shape": [1, 224, 224, 3]}) == 224 and not by["003"].covers("graphs.retracing")
    assert by["002"].size({"n": True}) is None and by["000"].size({"batch_shape": []}) is None


def test_the_chart_is_log_x_with_a_line_at_one_and_the_crossover() -> None:
    svg = ratio_size_svg("m: GPU/CPU", "matrix size n", [(128, 3.0, 2.9, 3.1), (512, 0.5, 0.45, 0.55)], 300.0)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "matrix size n (log)" in svg and 'stroke-dasharray="5 3"' in svg and "crossover ≈ 300" in svg
    assert svg.count("<circle") == 2
    assert "no ratios" in ratio_size_svg("m", "n", [], None)


def test_the_page_shows_devices_and_hardware_points_there(tmp_path: Path) -> None:
    _pair(tmp_path / "cells", (3.0, 0.5, 0.2))
    summary = build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    assert summary.line().endswith("; 1 environment pair compared across devices (the Devices section)")
    dom = parse_html((tmp_path / "out" / "index.html").read_text(encoding="utf-8"))
    section = dom.by_id("devices")
    pair = section.find("div", cls="dev-pair")
    assert pair.attrs["data-cell-a"] == "keras3-jax-cpu" and pair.attrs["data-cell-b"] == "keras3-jax-h200"
    fig = section.find("figure", cls="crossover")
    assert "found" in fig.classes and fig.find("svg") and "GPU pays from matrix size n" in fig.text
    heads = [" ".join(th.text.split()) for th in section.find("table").find("thead").find_all("th")]
    assert heads[2:5] == ["A: CPU", "B: GPU", "ratio GPU/CPU"]
    none = " ".join(dom.by_id("hardware-none").text.split())
    assert "No cell ran on more than one" not in none and "1 environment pair ran on two devices" in none


def test_the_claims_note_says_cpu_only_only_when_no_gpu_cell_ran(tmp_path: Path) -> None:
    """The JAX GPU cell ran np.dot, not tf.matmul: it ran and could not answer, which is not 'CPU only'."""
    _existing(tmp_path, "keras3-jax-h200", "gpu", {}, [
        _matmul(128, 1e-3, 1), record("tensor_ops.matmul", {"impl": "tf.matmul", "n": 128, "dtype": "float64",
                                                            "api": "tf", "mode": "eager"}, status="n/a",
                                      reason="no TensorFlow in this cell", seed="002")])
    _existing(tmp_path, "tf-cpu", "cpu", {}, [_matmul(128, 1e-3, 2), _matmul(128, 5e-4, 3, "tf.matmul")],
              python="/opt/tf/bin/python")
    cells = load_dir(tmp_path).cells
    claim = next(c for c in SEED_CLAIMS if c.key == "tf_matmul_faster_than_np_dot")
    notes = compute_claim(claim, build_frame(cells), cells).notes
    assert not any("CPU only" in n for n in notes)
    assert any("the GPU cell keras3-jax-h200 ran but could not answer it" in n for n in notes)
    cpu = [c for c in cells if c.target == "cpu"]
    assert "CPU only (no GPU cell has it)" in seed_gpu_note(cpu, [])
    assert "none is a cell this claim compares" in seed_gpu_note(cells, [])


def test_the_docs_matrix_files_load_as_one_environment_in_two_settings(load_snippet: Any) -> None:
    """docs/gpu-without-docker.md's matrix files: existing environments whose pairs differ only in device/threads."""
    import re

    from tfmatrix.analysis.devices import DEVICE_ENV

    page = (Path(__file__).resolve().parent.parent / "docs" / "gpu-without-docker.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", page, re.S)
    assert len(blocks) == 2
    for block in blocks:
        a, b = load_snippet(block).cells
        assert a.existing and a.interpreter == b.interpreter
        rest = [{k: v for k, v in c.env if k not in DEVICE_ENV} for c in (a, b)]
        assert rest[0] == rest[1] and (a.target, a.env) != (b.target, b.env)


def test_the_report_line_counts_one_cell_as_one_cell(tmp_path: Path) -> None:
    """Issue 42's plurals: "(1 cells: ...)" was printed for a one-cell report."""
    from tfmatrix.report.build import Summary

    line = Summary(tmp_path / "index.html", tmp_path / "results.csv", 1, {"ok": 1}, 44, 0, 14, "c").line()
    assert "(1 cell: 1 ok; 44 results;" in line
    assert "(2 cells: " in Summary(tmp_path / "i.html", tmp_path / "r.csv", 2, {"ok": 2}, 9, 0, 14, "c").line()
