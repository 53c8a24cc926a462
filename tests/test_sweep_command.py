"""``tfmatrix sweep``: its refusals (one line, exit 2) and a whole sweep through real suite processes.

The sweep's environment is an existing one whose python is the host's with
the stand-in TensorFlow (``tests/fake_tf``) on its path: the suite, its
``--set n=SIZE`` and NumPy's ``np.dot`` run for real, in two thread settings.
"""
from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from tfmatrix.cli import main

ROOT = Path(__file__).resolve().parent.parent
FAKE_TF = ROOT / "tests" / "fake_tf"
VERDICTS = {"faster", "slower", "no clear difference", "not enough replication"}


def _python(tmp_path: Path) -> Path:
    script = tmp_path / "env" / "bin" / "python"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n"
                      f'PYTHONPATH="{FAKE_TF}:$PYTHONPATH" exec {sys.executable} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _matrix(tmp_path: Path, python: str, other: str | None = None) -> Path:
    path = tmp_path / "threads.toml"
    path.write_text(f'[[cell]]\nname = "one"\npython = "{python}"\nenv = {{ OMP_NUM_THREADS = "1" }}\n'
                    f'[[cell]]\nname = "two"\npython = "{other or python}"\nenv = {{ OMP_NUM_THREADS = "2" }}\n'
                    '[[cell]]\ntf = "2.15"\n')
    return path


@pytest.mark.parametrize(("extra", "message"), [
    (["one", "tf2.15-cpu"], "sweep: tf2.15-cpu is not an existing environment"),
    (["one", "one"], "must be two cells of one interpreter"),
    (["one", "two", "--axis", "width"], "sweep: --axis width: not a size axis; choose one of batch, n, side"),
    (["one", "two", "--from", "64", "--to", "16"], "sweep: --from 64 --to 16: give two sizes, the first smaller"),
    (["one", "two", "--rounds", "4", "--max-rounds", "3"], "give 2 <= rounds <= max-rounds"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
                                          message: str) -> None:
    matrix = _matrix(tmp_path, str(_python(tmp_path)))
    code = main(["sweep", *extra, "--bench", "tensor_ops.matmul[impl=numpy.dot*", "--matrix", str(matrix),
                 "--reports", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and message in err, err


def test_two_interpreters_are_two_environments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = _matrix(tmp_path, str(_python(tmp_path)), other=sys.executable)
    assert main(["sweep", "one", "two", "--bench", "x", "--matrix", str(matrix)]) == 2
    assert "must be two cells of one interpreter" in capsys.readouterr().err


def test_a_variant_that_is_not_one_is_refused_after_its_first_process(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    matrix = _matrix(tmp_path, str(_python(tmp_path)))
    code = main(["sweep", "one", "two", "--bench", "tensor_ops.matmul*", "--matrix", str(matrix),
                 "--reports", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "must select one variant that runs in" in err and len(err.splitlines()) == 1


def test_a_size_inside_a_shape_is_set_by_its_element_in_real_suite_processes() -> None:
    """``--set batch_shape[0]=8`` (the sweep's batch axis) reaches the suite's catalogue: every variant with a batch
    shape has that batch, its id with it; a plain name and a malformed one as before."""
    import subprocess

    def ids(*sets: str) -> list[str]:
        done = subprocess.run([sys.executable, "-m", "suite", "list", "--preset", "quick", "--only", "inference.tiny*",
                               *[a for s in sets for a in ("--set", s)]], capture_output=True, text=True, cwd=ROOT,
                              env={"PYTHONPATH": str(FAKE_TF), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, done.stderr
        return [line.strip() for line in done.stdout.splitlines() if line.startswith("    ")]

    plain, set8 = ids(), ids("batch_shape[0]=8")
    assert plain and len(plain) == len(set8)
    assert all("batch_shape=32x4," in v for v in plain) and all("batch_shape=8x4," in v for v in set8)
    bad = subprocess.run([sys.executable, "-m", "suite", "list", "--set", "batch_shape[x]=8"], capture_output=True,
                         text=True, cwd=ROOT)
    assert bad.returncode == 2 and "NAME[INDEX]=VALUE" in bad.stderr


def test_a_sweep_along_an_axis_its_variant_does_not_have_is_refused(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    matrix = _matrix(tmp_path, str(_python(tmp_path)))
    code = main(["sweep", "one", "two", "--axis", "batch", "--bench", "tensor_ops.matmul[impl=numpy.dot*",
                 "--matrix", str(matrix), "--reports", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--axis batch sets batch_shape[0], which tensor_ops.matmul[impl=numpy.dot" in err


@pytest.mark.slow
def test_a_sweep_through_real_suite_processes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """np.dot at 16 and 64 in one and two threads: each size two paired rounds (fresh processes), the answer kept."""
    matrix = _matrix(tmp_path, str(_python(tmp_path)))
    out = tmp_path / "out"
    code = main(["sweep", "one", "two", "--bench", "tensor_ops.matmul[impl=numpy.dot*", "--from", "16", "--to", "64",
                 "--max-rounds", "2", "--matrix", str(matrix), "--reports", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    doc = json.loads((out / "one-two-n.json").read_text())
    assert doc["schema"] == "tfmatrix.sweep" and doc["setting_b"] == "CPU, OMP_NUM_THREADS=2"
    sizes = [p["size"] for p in doc["probes"]]
    assert {16, 64} <= set(sizes) and sizes == sorted(sizes) and len(sizes) <= 6 and all(16 <= s <= 64 for s in sizes)
    assert all(p["rounds"] == 2 for p in doc["probes"])       # --max-rounds 2: no size gets more
    assert doc["variant"].startswith("tensor_ops.matmul[impl=numpy.dot,n=")
    for p in doc["probes"]:
        assert p["verdict"] in VERDICTS and p["ratio"] > 0 and len(p["samples"]) == 2
        assert p["low"] <= p["ratio"] <= p["high"] and p["time_a"] > 0 and p["time_b"] > 0
    assert "n=16: OMP_NUM_THREADS=2/OMP_NUM_THREADS=1" in printed and doc["answer"] in printed
    assert (out / "one-two-n.log").is_file()
