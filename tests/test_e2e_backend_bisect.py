"""``tfmatrix bisect --axis jax`` end to end: real JAX cells built on demand (virtualenvs), a user file that plants a
step in one JAX release.

The file's one variant does three times the work from JAX 0.8 on (it reads
``jax.__version__`` in the cell): a bisect from 0.6 (good) to 0.9 (bad) must
name 0.7.2 -> 0.8.3 as the boundary, which a bisect that measured the wrong
cells, or none, cannot (any other boundary, or none, fails). Each probe's cell
file must hold the JAX release it asked for. Timings are printed, not asserted:
the boundary is the assertion.
"""
from __future__ import annotations

import json

import pytest
from e2e import tfmatrix

pytestmark = pytest.mark.tf
VARIANT = "own.jax_step[n=64,api=keras,mode=eager]"
FILE = '''"""A step planted in one JAX release: three times the work from JAX 0.8 on."""
from suite.api import UserBenchmark


class Step(UserBenchmark):
    name = "own.jax_step"
    params = {"n": [64]}
    apis = ("keras",)

    def setup(self, p, env):
        import jax
        minor = tuple(int(x) for x in jax.__version__.split(".")[:2])
        work = range(p["n"] * (3000 if minor >= (0, 8) else 1000))   # pure Python: no BLAS threads, one speed

        def step():
            total = 0
            for i in work:
                total += i
            return total
        return step


BENCHMARKS = [Step()]
'''


def test_a_bisect_over_jax_releases_finds_the_release_a_user_file_planted_its_step_in(tmp_path):
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "jax_step.py").write_text(FILE)
    (tmp_path / "matrix.toml").write_text('[matrix]\npreset = "quick"\n\n[suite]\npaths = ["benchmarks/"]\n\n'
                                          '[[cell]]\nbackend = "jax"\n')     # a matrix has a cell; bisect makes its own
    reports = tmp_path / "reports"
    done = tfmatrix("bisect", "--matrix", str(tmp_path / "matrix.toml"), "--bench", VARIANT, "--axis", "jax",
                    "--good", "0.6", "--bad", "0.9", "--rounds", "2", "--runner", "venv", "--no-explain",
                    "--reports", str(reports))
    print(done.stdout, done.stderr[-2000:])
    assert done.returncode == 0, done.stderr[-3000:]
    [answer] = (reports / "bisect").glob("*.json")
    doc = json.loads(answer.read_text())
    assert doc["axis"] == "jax" and doc["keras"] and doc["found"], doc
    assert (doc["last_good"], doc["first_bad"]) == ("0.7.2", "0.8.3"), doc
    assert done.stdout.splitlines()[0].startswith(f"bisect time of {VARIANT}, JAX (under Keras ")
    for probe in doc["probes"]:
        [path] = (reports / "releases" / "cells").glob(f"keras*-jax{probe['release']}-cpu.json")
        cell = json.loads(path.read_text())
        assert cell["status"] == "ok", cell.get("reason")
        assert cell["results"]["environment"]["tf"]["packages"]["jax"] == probe["release"]
        assert cell["cell"]["backend_version"] == probe["release"]
