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

from suite.frameworks import DATA_ON_DEVICE
from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claims.answers import compute_claim
from tfmatrix.analysis.claims.files import builtin
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


def _matmul(n: int, t: float, seed: int, impl: str = "numpy.dot", rounds: int = 3) -> dict[str, Any]:
    """Seed 002's product at size ``n``: ``rounds`` processes, one per round of the interleaved run
    (``impl``: numpy.dot, the backend's matmul or tf.matmul)."""
    api = {"numpy.dot": "numpy", "matmul": "backend"}.get(impl, "tf")
    rec = record("tensor_ops.matmul", {"impl": impl, "n": n, "dtype": "float64", "api": api, "mode": "eager"},
                 per_process=[noisy(t, 3, 0.01, seed * 10 + i) for i in range(rounds)], seed="002")
    rec["schedule"] = {"rounds": [3] * rounds, "stopped": ["repeats"] * rounds, "passes": list(range(1, rounds + 1))}
    if api == "backend":            # the suite's backend step says where its data lives
        rec["info"] = dict(rec.get("info") or {}, data=DATA_ON_DEVICE)
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


def _pair(out: Path, gpu_over_cpu: tuple[float, ...], cpu_s: tuple[float, ...] = (1e-3, 8e-3, 0.5),
          control: float = 1.0, sizes: tuple[int, ...] = SIZES, rounds: int = 3) -> None:
    """One JAX environment on the GPU and (JAX_PLATFORMS=cpu) on the CPU: jnp.matmul products at ``sizes``, and
    NumPy's np.dot at the largest, the control (on the CPU in both: GPU/CPU ``control``)."""
    cpu = [_matmul(n, t, i, "matmul", rounds) for i, (n, t) in enumerate(zip(sizes, cpu_s, strict=True))]
    gpu = [_matmul(n, t * r, 10 + i, "matmul", rounds)
           for i, (n, t, r) in enumerate(zip(sizes, cpu_s, gpu_over_cpu, strict=True))]
    cpu.append(_matmul(sizes[-1], 0.3, 20, rounds=rounds))
    gpu.append(_matmul(sizes[-1], 0.3 * control, 21, rounds=rounds))
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
    assert {c.verdict for c in pair.view.rows} == {"slower", "faster", "no clear difference"}   # the control: same
    assert all(c.ci.rounds == 3 for c in pair.view.rows)           # two cells of one interleaved run: by round
    assert not pair.void
    (x,) = pair.crossovers                                         # the control (np.dot) is no device question
    assert x.axis.param == "n" and [p.size for p in x.points] == list(SIZES) and "impl=matmul" in x.config
    assert [p.ratio for p in x.points] == pytest.approx([3.0, 0.5, 0.2], rel=0.03)
    assert x.bracket is not None and (x.bracket.below, x.bracket.above) == (128, 512)
    # between 128 (3.0) and 512 (0.5): log n moves 1.0986 / (1.0986 + 0.6931) of the way
    assert x.at == pytest.approx(math.exp(math.log(128) + 1.0986 / 1.7918 * math.log(4)), rel=0.03)
    assert "GPU pays from matrix size n between 128 and 512 (≈ 299 interpolated" in x.text()
    assert "GPU/CPU 2.99 [2.97, 3.02] at 128" in x.text()
    assert x.text().endswith("; inputs on the device (copied there once), the result copied to the host each call")


def test_no_crossover_within_the_measured_sizes(tmp_path: Path) -> None:
    _pair(tmp_path, (3.0, 1.5, 1.2))
    cells = load_dir(tmp_path).cells
    (pair,) = device_pairs(build_frame(cells), cells)
    (x,) = pair.crossovers
    assert x.at is None and x.bracket is None
    assert x.text().startswith("no crossover shown within the measured sizes (matrix size n): GPU is not shown "
                               "faster at the largest measured size, 2048 (slower)")


def test_one_environment_at_several_presets_pools_its_sizes_for_one_crossover(tmp_path: Path) -> None:
    """One preset measures one n (256 in quick, 2000 in seed): pairs of one environment at both give the curve."""
    for preset, n, cpu_s, ratio in (("quick", 256, 2e-3, 2.0), ("seed", 2000, 0.8, 0.25)):
        _existing(tmp_path, f"jax-gpu-{preset}", "gpu", {}, [_matmul(n, cpu_s * ratio, 1, "matmul")], preset=preset)
        _existing(tmp_path, f"jax-cpu-{preset}", "cpu", {"JAX_PLATFORMS": "cpu"}, [_matmul(n, cpu_s, 2, "matmul")],
                  preset=preset)
    cells = load_dir(tmp_path).cells
    pairs = device_pairs(build_frame(cells), cells)
    assert len(pairs) == 2 and len(pairs[0].family) == 2 and pairs[1].crossovers == []
    (x,) = pairs[0].crossovers
    assert [p.size for p in x.points] == [256, 2000]
    assert x.at == pytest.approx(math.exp(math.log(256) + math.log(2) / math.log(8) * math.log(2000 / 256)), rel=0.05)


def _verdict(ratio: float, low: float, high: float) -> str:
    if not math.isfinite(low):
        return "not enough replication"
    return "faster" if high < 1 else "slower" if low > 1 else "no clear difference"


def test_crossover_rules() -> None:
    """A crossover only from verdicts: decided faster from some size up, decided slower or the same just below."""
    def pts(*ratios: float | tuple[float, float, float], sizes: tuple[int, ...] = SIZES) -> list[SizePoint]:
        out = []
        for s, r in zip(sizes, ratios, strict=True):
            ratio, low, high = r if isinstance(r, tuple) else (r, r * 0.95, r * 1.05)
            out.append(SizePoint(float(s), ratio, low, high, "", _verdict(ratio, low, high)))
        return out

    bracket, why = crossover_at(pts(0.8, 1.2, 0.5))
    assert why == "" and bracket is not None and (bracket.below, bracket.above) == (512, 2048)
    assert bracket.estimate == pytest.approx(math.exp(
        math.log(512) + math.log(1.2) / (math.log(1.2) - math.log(0.5)) * math.log(4)))   # must stay below 1
    # the same (a replicated interval spanning 1) below a decided faster: a crossover; the estimate stays inside
    bracket, _ = crossover_at(pts((0.97, 0.9, 1.05), 0.6, 0.3))
    assert bracket is not None and (bracket.below, bracket.above) == (128, 512)
    assert 128 <= bracket.estimate <= 512
    assert crossover_at(pts(0.9, 0.5, 0.2)) == (None, "B is faster at every measured size, from the smallest (128): "
                                                      "the crossover lies below it")
    assert crossover_at(pts(0.5, 0.8, 1.0))[0] is None                # 1.0 is not paying
    assert "not shown faster at the largest" in crossover_at(pts(2.0, 1.5, (0.7, 0.4, 1.2)))[1]   # spans 1: open
    nan = math.nan
    bracket, why = crossover_at(pts(2.0, (0.89, nan, nan), 0.3))       # one round where the side changes
    assert bracket is None and why.startswith("not enough replication at 512 (one round)")
    assert crossover_at(pts((0.89, nan, nan), sizes=(2000,))) == (None, "one measured size: a crossover needs "
                                                                         "sizes on both sides of it")
    assert crossover_at([]) == (None, "no sizes")


def test_one_size_one_round_is_no_crossover_and_no_verdict(tmp_path: Path) -> None:
    """Issue 51: with one round and one size the page said "GPU pays ... at or below 2000 (GPU/CPU 0.89 at 2000)",
    "nan – nan" as intervals and a header of "0 faster on GPU, 0 slower on GPU, 0 no clear difference"."""
    _pair(tmp_path / "cells", (0.89,), cpu_s=(0.5,), sizes=(2000,), rounds=1)
    cells = load_dir(tmp_path / "cells").cells
    (pair,) = device_pairs(build_frame(cells), cells)
    assert {c.verdict for c in pair.view.rows} == {"not enough replication"}
    (x,) = pair.crossovers
    assert x.bracket is None and "one measured size" in x.text() and "0.89 (one round) at 2000" in x.text()
    assert pair.line().endswith("0 faster on GPU, 0 slower on GPU, 0 no clear difference, 2 not enough replication")
    build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    section = parse_html(page).by_id("devices")
    assert "nan" not in section.text and "pays" not in section.find("figure", cls="crossover").text
    assert "— (one round)" in section.text


def test_a_control_that_moves_voids_the_pair(tmp_path: Path) -> None:
    """NumPy runs on the CPU in both cells: moved beyond its margin, the cells differ in more than the device."""
    _pair(tmp_path / "cells", (3.0, 0.5, 0.2), control=1.5)
    cells = load_dir(tmp_path / "cells").cells
    (pair,) = device_pairs(build_frame(cells), cells)
    assert pair.void.startswith("the control tensor_ops.matmul[impl=numpy.dot") and "beyond ±10%" in pair.void
    assert pair.crossovers == []
    build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    section = parse_html((tmp_path / "out" / "index.html").read_text(encoding="utf-8")).by_id("devices")
    assert section.find("p", cls="dev-void") is not None and not section.find_all("figure", cls="crossover")
    assert device_pairs(build_frame(cells), cells)[0].view.rows      # the ratios stay shown, as measured


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
