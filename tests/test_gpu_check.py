"""``scripts/gpu_check.py``: the matrix file it writes loads as four existing-environment cells, one per framework
and device, and its command answers the claims in sequential rounds within a time budget, or runs the seed
002/004 benchmarks and a few cheap others whole (nothing is run here: the script is for a machine with a GPU, JAX
and PyTorch; its budget is run for real in test_e2e_venv.py)."""
from __future__ import annotations

import fnmatch
from collections.abc import Callable
from pathlib import Path

from scripts_loader import load_script

from tfmatrix.matrix import Matrix

ROOT = Path(__file__).resolve().parent.parent


def test_the_matrix_file_is_four_existing_cells_one_per_framework_and_device(
        load_snippet: Callable[..., Matrix]) -> None:
    gpu_check = load_script("gpu_check")
    m = load_snippet(gpu_check.matrix_toml("/opt/py312/bin/python3"))
    cells = {c.name: c for c in m.cells}
    assert sorted(cells) == ["jax-cpu", "jax-gpu", "torch-cpu", "torch-gpu"]
    for cell in cells.values():
        assert cell.existing and cell.interpreter == "/opt/py312/bin/python3" and cell.preset == "seed"
        assert cell.target == cell.name.split("-")[1]
        assert dict(cell.env)["KERAS_BACKEND"] == cell.name.split("-")[0]
    assert dict(cells["jax-cpu"].env)["JAX_PLATFORMS"] == "cpu"
    assert dict(cells["torch-cpu"].env)["CUDA_VISIBLE_DEVICES"] == ""
    assert "JAX_PLATFORMS" not in dict(cells["jax-gpu"].env)
    assert "CUDA_VISIBLE_DEVICES" not in dict(cells["torch-gpu"].env)


def test_the_command_answers_the_claims_in_sequential_rounds_within_8_minutes(tmp_path: Path) -> None:
    gpu_check = load_script("gpu_check")
    cmd = gpu_check.matrix_command(tmp_path / "m.toml", tmp_path / "reports")
    assert cmd[1:4] == ["-m", "tfmatrix", "matrix"] and cmd[cmd.index("--rounds") + 1] == "auto"
    assert cmd[cmd.index("--budget") + 1] == "8m" and cmd[cmd.index("--variants") + 1] == "claims"
    assert cmd[cmd.index("--claims") + 1] == "seeds" and "--bench" not in cmd
    assert "--budget" not in gpu_check.matrix_command(tmp_path / "m.toml", tmp_path / "r", budget=None)


def test_bench_all_runs_the_seed_002_004_benchmarks_and_a_few_cheap_others_whole(tmp_path: Path) -> None:
    from suite.definitions import PRESETS
    from suite.registry import all_variants, select

    gpu_check = load_script("gpu_check")
    cmd = gpu_check.matrix_command(tmp_path / "m.toml", tmp_path / "reports", "2", benches=gpu_check.BENCHES)
    assert cmd[cmd.index("--rounds") + 1] == "2" and "--variants" not in cmd
    assert cmd[cmd.index("--runner") + 1] == "venv" and cmd[cmd.index("--preset") + 1] == "seed"
    patterns = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--bench"]
    chosen = select(all_variants(PRESETS["seed"]), patterns)
    benchmarks = {v.benchmark for v in chosen}
    assert benchmarks == {"tensor_ops.matmul", "tensor_ops.batched_matmul", "graphs.power", "graphs.matmul_bias",
                          "graphs.tracing", "inference.tiny", "compiled.application"}
    assert any(fnmatch.fnmatchcase(v.id, "graphs.tracing*") and v.api == "backend" for v in chosen)


def test_the_lines_the_budget_left_open_are_read_back_from_the_cell_files(tmp_path: Path) -> None:
    import json

    gpu_check = load_script("gpu_check")
    cells = tmp_path / "cells"
    cells.mkdir()
    lines = [["seed_002", "jax-cpu", "a", "b", 1, "still open after round 1: the budget left 0:10, too little"],
             ["seed_004", "jax-cpu", "c", "d", 2, "decided after round 2"]]
    doc = {"results": {"config": {"schedule": {"sequential": {"lines": lines}}}}}
    (cells / "jax-cpu.json").write_text(json.dumps(doc))
    fixed = {"results": {"config": {"schedule": {"rounds_asked": 3, "budget": {"seconds": 480, "rounds": 1}}}}}
    (cells / "torch-cpu.json").write_text(json.dumps(fixed))
    (cells / "broken.json").write_text("{")
    assert gpu_check.left_open(tmp_path) == [
        "seed_002 in jax-cpu: still open after round 1: the budget left 0:10, too little",
        "torch-cpu: 1 of the 3 rounds asked"]


def test_what_stops_the_check_is_said() -> None:
    gpu_check = load_script("gpu_check")
    ok = {"keras": "3.15.1", "jax": "0.10.2", "torch": "2.14.1", "tensorflow": False}
    assert gpu_check.problems(ok) == []
    assert gpu_check.problems(dict(ok, keras="MISSING: ModuleNotFoundError: No module named 'namex'")) == [
        "keras: MISSING: ModuleNotFoundError: No module named 'namex'"]
    assert "without it" in gpu_check.problems(dict(ok, tensorflow=True))[0]


def test_several_presets_make_one_cell_per_preset_for_the_crossover(load_snippet: Callable[..., Matrix]) -> None:
    gpu_check = load_script("gpu_check")
    m = load_snippet(gpu_check.matrix_toml("/opt/py/bin/python3", presets=("quick", "seed")))
    cells = {c.name: c for c in m.cells}
    assert len(cells) == 8 and cells["jax-gpu-quick"].preset == "quick" and cells["torch-cpu-seed"].preset == "seed"
    assert "--preset" not in gpu_check.matrix_command(Path("m.toml"), Path("r"), preset=None)
