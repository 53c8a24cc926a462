"""``tfmatrix ab`` end to end: two versions of one benchmark file, one real run in a Docker cell, head against base.

Both files have the same name (as ``git show base:bench.py`` and the
checkout would), so the suite must load them as two modules. The head breaks
one case (it raises), which the gate must fail on whatever the timings; the
other cases are measured in the same processes as their base (their records
share windows), and the table, summary and gate lines are printed. No
timing is asserted.
"""
from __future__ import annotations

import re

import pytest
from e2e import cell_docs, records, require, tfmatrix

from tfmatrix.runners import engine as docker_engine

pytestmark = pytest.mark.docker
CELL = "tf2.15-cpu"

BENCH = '''from suite.api import UserBenchmark


class Work(UserBenchmark):
    name = "own.work"
    params = {{"n": [16, 32, 48]}}
    apis = ("tf",)

    def setup(self, p, env):
        if {broken} and p["n"] == 48:
            raise ValueError("head broke n=48")
        x = env.tf.ones((p["n"], p["n"]))
        return lambda: env.tf.matmul(x, x)


BENCHMARKS = [Work()]
'''


def test_ab_measures_both_versions_in_the_same_processes_and_gates_on_head(tmp_path):
    require(docker_engine.engine() is not None, "no Docker engine answers (scripts/host-setup installs one)")
    for side, broken in (("base", False), ("head", True)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "bench.py").write_text(BENCH.format(broken=broken))
    reports = tmp_path / "reports"
    proc = tfmatrix("ab", str(tmp_path / "base" / "bench.py"), str(tmp_path / "head" / "bench.py"), "--cell", CELL,
                    "--preset", "quick", "--rounds", "2", "--runner", "docker", "--reports", str(reports),
                    "--fail-on", "slower:50%", timeout=900)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert out.startswith("tfmatrix: gate: broke: tf2.15-cpu: own.work[n=48,api=tf,mode=eager]: ValueError: head "
                          "broke n=48"), out[:500]
    assert "3 variants" not in out and re.search(r"^2 variants, head against base, in the same processes of 1 cell",
                                                 out, re.M), out
    # what the gate resolves depends on this run's noise: "over 1000%" when two rounds of a loaded host say little
    assert re.search(r"^tfmatrix: gate: the gate finds a slowdown of (over )?\d+% or more", out, re.M), out
    assert "own.work[n=16,api=tf,mode=eager]" in out        # ids without the side, as the user wrote them
    (doc,) = cell_docs(reports).values()
    recs = records(doc)
    assert doc["request"]["bench"] and set(recs) == {f"own.work[n={n},side={s},api=tf,mode=eager]"
                                                     for n in (16, 32, 48) for s in ("base", "head")}
    for n in (16, 32):
        base, head = (recs[f"own.work[n={n},side={s},api=tf,mode=eager]"] for s in ("base", "head"))
        assert base["status"] == head["status"] == "ok"
        assert base["schedule"]["windows"] == head["schedule"]["windows"]      # window-mates, round by round
        assert len(base["per_process"]) == 2
    assert recs["own.work[n=48,side=head,api=tf,mode=eager]"]["status"] == "error"
