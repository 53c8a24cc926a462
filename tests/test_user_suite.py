"""Your own benchmarks inside a cell: suite.api declarations and suite.plugins loading (fake TensorFlow, fast)."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from suite import api
from suite.definitions import PRESETS
from suite.plugins import BrokenFile, PluginError, load_plugins
from suite.schema import validate

ROOT = Path(__file__).resolve().parent.parent
FAKE_TF = ROOT / "tests" / "fake_tf"
USER = ROOT / "tests" / "suite_plugins" / "user"
EXAMPLE = ROOT / "examples" / "own_benchmark" / "benchmarks"


class Grid(api.UserBenchmark):
    name = "own.grid"
    params = {"batch": [32, 64], "path": ["fit", "call"]}
    sizes = {"quick": {"batch": [8]}}


def test_variants_are_the_grid_for_any_preset_name():
    quick = [v.id for v in Grid().variants(PRESETS["quick"])]
    assert quick == ["own.grid[batch=8,path=fit,api=tf.keras,mode=eager]",
                     "own.grid[batch=8,path=call,api=tf.keras,mode=eager]"]
    # a preset the benchmark does not name (a new one, like "seed") uses params
    seed = dataclasses.replace(PRESETS["standard"], name="seed")
    assert len(Grid().variants(seed)) == 4
    assert all(v.seed == "user" and v.group == "eager:tf.keras" for v in Grid().variants(seed))


@pytest.mark.parametrize("attrs, message", [
    ({"params": {"batch": 8}}, "params['batch'] must be a non-empty list"),
    ({"params": {"mode": ["eager"]}}, "params['mode'] is reserved"),
    ({"apis": ("jax",)}, "apis has 'jax'"),
])
def test_bad_declarations_say_what_to_fix(attrs, message):
    bench = type("Bad", (api.UserBenchmark,), {"name": "own.bad", **attrs})()
    with pytest.raises((TypeError, ValueError), match=message.replace("[", r"\[").replace("]", r"\]")):
        bench.variants(PRESETS["quick"])


def test_a_file_that_fails_to_import_is_one_error_variant(tmp_path):
    found = {b.name: b for b in load_plugins(str(USER))}
    assert set(found) == {"broken.import", "own.sum", "own.picky"}
    broken = found["broken.import"]
    assert isinstance(broken, BrokenFile)
    (variant,) = broken.variants(PRESETS["quick"])
    assert variant.id == "broken.import[file=broken.py]"
    with pytest.raises(PluginError) as info:
        broken.prepare(variant, None)
    first, *rest = str(info.value).splitlines()
    assert first == ("broken.py failed to import: ModuleNotFoundError: No module named "
                     "'a_package_this_cell_does_not_have'")
    assert "broken.py\", line 2" in "\n".join(rest)


def test_a_broken_file_is_selected_whatever_the_filter(tmp_path, monkeypatch):
    """``--bench 'mine.*'`` must not hide that one of the user's files failed to import."""
    from suite.registry import all_variants, load_benchmarks, select

    (tmp_path / "good.py").write_text(
        "from suite.api import UserBenchmark\n\n"
        "class Mine(UserBenchmark):\n    name = 'mine.sum'\n    params = {'n': [1, 2]}\n\n"
        "BENCHMARKS = [Mine()]\n")
    (tmp_path / "bad.py").write_text("import a_package_nobody_has\n")
    monkeypatch.setenv("TFMATRIX_SUITE_PLUGINS", str(tmp_path))
    variants = all_variants(PRESETS["quick"], load_benchmarks())
    picked = [v.id for v in select(variants, ["mine.*"])]
    assert picked == ["bad.import[file=bad.py]", "mine.sum[n=1,api=tf.keras,mode=eager]",
                      "mine.sum[n=2,api=tf.keras,mode=eager]"]            # files in name order
    assert "bad.import[file=bad.py]" in [v.id for v in select(variants, ["training.*"])]
    assert not any(v.always for v in variants if v.benchmark != "bad.import")   # only the broken file's


def test_a_benchmark_whose_variants_cannot_be_listed_is_an_error_variant(tmp_path):
    (tmp_path / "listing.py").write_text(
        "from suite.api import UserBenchmark\n"
        "class B(UserBenchmark):\n    name = 'own.b'\n    params = {'n': 3}\n"
        "BENCHMARKS = [B()]\n")
    (broken,) = load_plugins(str(tmp_path / "listing.py"))
    assert isinstance(broken, BrokenFile) and broken.name == "listing.import"
    assert broken.message.startswith("listing.py cannot list the variants of own.b: TypeError: own.b: params['n']")


def _run(tmp_path: Path, cell: str, *only: str) -> dict:
    env = dict(os.environ)
    env.update({"PYTHONPATH": os.pathsep.join([str(FAKE_TF), str(ROOT)]), "TFMATRIX_SUITE_PLUGINS": str(USER),
                "TFMATRIX_CELL": cell, "OWN_FAIL_IN": "tf2.21-keras3-cpu"})
    out = tmp_path / f"{cell}.json"
    args = [a for o in only for a in ("--only", o)]
    proc = subprocess.run([sys.executable, "-m", "suite", "run", "--out", str(out), "--cell", cell, *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert validate(doc) == []
    return {r["id"]: r for r in doc["records"]}


def test_user_benchmarks_run_and_a_failure_in_one_cell_is_an_error_record_there_only(tmp_path):
    here = _run(tmp_path, "tf2.15-cpu", "own.*", "broken.*")
    there = _run(tmp_path, "tf2.21-keras3-cpu", "own.*", "broken.*")
    picky = "own.picky[k=1,api=tf,mode=eager]"
    assert here[picky]["status"] == "ok" and here[picky]["seed"] == "user"
    assert there[picky]["status"] == "error"
    assert there[picky]["reason"] == "RuntimeError: fails in this cell on purpose"
    assert "fails in this cell on purpose" in there[picky]["traceback"]
    for records in (here, there):
        broken = records["broken.import[file=broken.py]"]
        assert broken["status"] == "error" and broken["reason"].startswith("PluginError: broken.py failed to import")
        assert "No module named 'a_package_this_cell_does_not_have'" in broken["traceback"]
        summed = records["own.sum[n=100,api=tf,mode=eager]"]
        assert summed["status"] == "ok" and summed["info"]["n"] == 100 and summed["info"]["first_s"] >= 0


def test_the_example_lists_its_variants_without_tensorflow():
    """``python -m suite list`` must not import TensorFlow: the example imports it inside setup only."""
    env = dict(os.environ)
    env.update({"PYTHONPATH": str(ROOT), "TFMATRIX_SUITE_PLUGINS": str(EXAMPLE)})
    code = ("import sys, json; from suite.definitions import PRESETS; "
            "from suite.registry import load_benchmarks, all_variants;"
            "vs = all_variants(PRESETS['quick'], [b for b in load_benchmarks() if b.seed == 'user']);"
            "print(json.dumps([v.id for v in vs])); assert 'tensorflow' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    ids = json.loads(proc.stdout)
    assert any(i.startswith("own.transformer[") for i in ids) and any(i.startswith("own.resnet[") for i in ids)
    assert not any(".import[" in i for i in ids)
