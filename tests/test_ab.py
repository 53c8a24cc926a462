"""A/B inside one run (``tfmatrix ab``): the suite's sides, the host's env, the analysis, the command's errors.

The real run (Docker, a cell's image, both files mounted) is
``test_e2e_ab.py``; these are pure or use synthetic cell files shaped as
the suite writes them: both sides of a case sampled in the same window of
the same process, round after round.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from report_docs import record, write_interleaved_cell

from suite import plugins, sides
from suite.definitions import PRESETS, Benchmark, Prepared, Preset, Variant, make_variant
from suite.schema import PLUGINS_ENV
from suite.worker import windows
from tfmatrix import cli
from tfmatrix.analysis.cells import load_file
from tfmatrix.analysis.compare.ab import compare_sides, side_rows, summary_lines
from tfmatrix.analysis.frame import build_frame
from tfmatrix.matrix.user_benchmarks import plugins_value
from tfmatrix.runners import docker as docker_runner


class Fake(Benchmark):
    """A benchmark whose prepare says which side built it."""

    def __init__(self, name: str, tag: str, cases: int) -> None:
        self.name, self.seed, self.title, self.tag, self.cases = name, "user", name, tag, cases

    def variants(self, preset: Preset) -> list[Variant]:
        return [make_variant(self, "eager", "tf", case=i) for i in range(self.cases)]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        assert variant.param("side") is None, "a side's own benchmark never sees the side parameter"
        return Prepared(step=lambda: None, info={"built_by": self.tag, "case": variant.param("case")})


def test_both_sides_of_a_case_are_neighbours_and_never_split_by_a_window() -> None:
    (both,) = sides.pair_up([("base", [Fake("own.x", "b", 13)]), ("head", [Fake("own.x", "h", 13)])])
    listed = both.variants(PRESETS["quick"])
    assert [v.param("side") for v in listed[:4]] == ["base", "head", "base", "head"]
    assert listed[0].id == "own.x[case=0,side=base,api=tf,mode=eager]"
    for window in windows(listed, {"own.x": both}, 24):
        cases = [v.param("case") for v in window]
        assert all(cases.count(c) == 2 for c in cases), cases   # a pair is never cut in two
    assert both.prepare(listed[1], None).info == {"built_by": "h", "case": 0}
    assert both.prepare(listed[2], None).info == {"built_by": "b", "case": 1}


def test_a_benchmark_one_side_lacks_is_still_measured_on_the_other() -> None:
    listed = [v.id for b in sides.pair_up([("base", [Fake("own.x", "b", 2)]),
                                           ("head", [Fake("own.x", "h", 1), Fake("own.new", "h", 1)])])
              for v in b.variants(PRESETS["quick"])]
    assert listed == ["own.x[case=0,side=base,api=tf,mode=eager]", "own.x[case=0,side=head,api=tf,mode=eager]",
                      "own.x[case=1,side=base,api=tf,mode=eager]", "own.new[case=0,side=head,api=tf,mode=eager]"]


BENCH = '''from suite.api import UserBenchmark
class Work(UserBenchmark):
    name = "own.work"
    params = {"n": [1, 2]}
    apis = ("tf",)
    def setup(self, p, env):
        return lambda: %s
BENCHMARKS = [Work()]
'''


def test_two_versions_of_one_file_load_side_by_side(tmp_path: Path) -> None:
    """Same file name on both sides: two modules, one benchmark; a head that fails to import is its own error."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "bench.py").write_text(BENCH % "1")
    (tmp_path / "b" / "bench.py").write_text(BENCH % "2")
    value = plugins_value([str(tmp_path / "a" / "bench.py"), str(tmp_path / "b" / "bench.py")], ("base", "head"))
    assert value == f"base={tmp_path}/a/bench.py:head={tmp_path}/b/bench.py"
    assert plugins.split_sides(value) == ("", [("base", f"{tmp_path}/a/bench.py"), ("head", f"{tmp_path}/b/bench.py")])
    (work,) = plugins.load_plugins(value)
    ids = [v.id for v in work.variants(PRESETS["quick"])]
    assert ids == ["own.work[n=1,side=base,api=tf,mode=eager]", "own.work[n=1,side=head,api=tf,mode=eager]",
                   "own.work[n=2,side=base,api=tf,mode=eager]", "own.work[n=2,side=head,api=tf,mode=eager]"]
    (tmp_path / "b" / "bench.py").write_text("raise ImportError('head is broken')\n")
    found = plugins.load_plugins(value)
    names = sorted(v.id for b in found for v in b.variants(PRESETS["quick"]))
    assert "bench.import[file=bench.py,side=head]" in names
    assert "own.work[n=1,side=base,api=tf,mode=eager]" in names


def test_the_docker_runner_names_each_mounted_file_with_its_side(tmp_path: Path) -> None:
    from tfmatrix.matrix import load

    a, b = tmp_path / "base.py", tmp_path / "head.py"
    a.write_text("BENCHMARKS = []\n")
    b.write_text("BENCHMARKS = []\n")
    cell = load(Path(__file__).resolve().parents[1] / "matrix.toml").cell("tf2.15-cpu")
    request = docker_runner.run_request(cell, "img", tmp_path, ["run"], [a, b], sides=("base", "head"))
    assert request["environment"][PLUGINS_ENV] == ("base=/opt/tfmatrix/bench/0/base.py:"
                                                   "head=/opt/tfmatrix/bench/1/head.py")


# --------------------------------------------------------------------------- the analysis, synthetic runs


def _ab_cell(tmp: Path, seed: int, change: dict[int, float], cases: int = 200, rounds: int = 3,
             shared_sd: float = 0.05, own_sd: float = 0.03, name: str = "syn-cpu") -> Path:
    """A cell file of an A/B run: per round one process, every case's two sides in its windows.

    Each process moves every variant in it alike (``shared_sd``: both sides
    of a case share it) and each variant's build on its own (``own_sd``).
    """
    rng = random.Random(seed)
    records = []
    for i in range(cases):
        center = 1e-3 * (1 + i % 7)
        by_side: dict[str, list[list[float]]] = {"base": [], "head": []}
        shared = [rng.lognormvariate(0.0, shared_sd) for _ in range(rounds)]
        for side in ("base", "head"):
            factor = change.get(i, 1.0) if side == "head" else 1.0
            for r in range(rounds):
                state = shared[r] * rng.lognormvariate(0.0, own_sd)
                by_side[side].append([center * factor * state * (1 + abs(rng.gauss(0.0, 0.01))) for _ in range(4)])
        for side in ("base", "head"):
            rec = record("own.work", {"case": i, "side": side, "api": "tf", "mode": "eager"},
                         per_process=by_side[side], seed="user")
            rec["schedule"] = {"windows": [f"{100 + r}:{i // 8}" for r in range(rounds)], "rounds": [4] * rounds,
                               "stopped": ["repeats"] * rounds, "passes": list(range(1, rounds + 1))}
            records.append(rec)
    return write_interleaved_cell(tmp / f"{seed}" / f"{name}.json", records, name, rounds, seed, runner="docker")


def test_the_sides_of_one_run_become_the_two_sides_of_a_comparison(tmp_path: Path) -> None:
    df = build_frame([load_file(_ab_cell(tmp_path, 1, {}, cases=3))])
    assert list(side_rows(df, "head")["id"]) == [f"own.work[case={i},api=tf,mode=eager]" for i in range(3)]
    assert list(side_rows(df, "base")["id"]) == list(side_rows(df, "head")["id"])


def test_at_this_hosts_ab_noise_unchanged_cases_stop_as_the_same_by_round_4_and_a_5_percent_change_does_not(
        tmp_path: Path) -> None:
    """Issue 41: ``ab`` ran all 10 rounds whatever the data, because no unchanged case could be shown within 2% of 1
    before the cap. At the per-round noise ``ab`` measured here (a case's ratio wanders 1.9-3.2% a round: own_sd 2%
    a side) and the look after round 4, most unchanged cases are the same and no 5% change is."""
    from tfmatrix.analysis.stopping import DECIDED, LOOK_ALPHA, SAME, case_state

    slowed = set(range(0, 28, 4))
    same, found, lost, alarms = [], [], 0, 0
    for seed in range(3):
        cell = load_file(_ab_cell(tmp_path, 40 + seed, {i: 1.05 for i in slowed}, cases=28, rounds=4, own_sd=0.02))
        for v in compare_sides([cell], alpha=LOOK_ALPHA).variants:
            state = case_state(v.ci)
            if int(v.id.split("case=")[1].split(",")[0]) in slowed:
                found.append(state == DECIDED)
                lost += state == SAME
            else:
                same.append(state == SAME)
                alarms += state == DECIDED
    assert sum(same) / len(same) >= 0.6 and alarms <= 0.05 * len(same), (sum(same) / len(same), alarms)
    assert lost == 0 and sum(found) / len(found) >= 0.5, (lost, sum(found) / len(found))


@pytest.mark.slow
def test_unchanged_code_is_called_different_at_most_about_5_percent_of_the_time(tmp_path: Path) -> None:
    alarms = []
    for seed in range(3):
        result = compare_sides([load_file(_ab_cell(tmp_path, seed, {}))])
        assert result.variants and all(v.contrast is not None and v.contrast.paired for v in result.variants)
        counts = result.verdicts()
        alarms.append((counts["slower"] + counts["faster"]) / len(result.variants))
    assert sum(alarms) / len(alarms) <= 0.07, alarms
    assert not result.offenders(0.0), "the gate is family-wise: an unchanged run fails it rarely"


def test_a_change_is_found_through_a_process_effect_that_both_sides_share(tmp_path: Path) -> None:
    """Each process moves its variants by 20% (SD) and a fifth of the cases do 10% more work: found, because the
    two sides of a case ran in the same process and the pairing takes the process out."""
    changed = {i: 1.10 for i in range(0, 200, 5)}
    result = compare_sides([load_file(_ab_cell(tmp_path, 7, changed, shared_sd=0.20, own_sd=0.02))])
    found = [v for v in result.variants if v.verdict == "slower" and int(v.id.split("case=")[1].split(",")[0])
             in changed]
    assert len(found) >= 0.9 * len(changed), len(found)
    gate = result.offenders(0.05)
    assert gate and all(line.startswith("slower: syn-cpu: own.work[") for line in gate)
    lines = summary_lines(result)
    assert lines[0].startswith("200 variants, head against base, in the same processes of 1 cell(s)")
    assert any(line.startswith("smallest change resolved") for line in lines)


def test_one_process_a_side_is_not_enough_replication(tmp_path: Path) -> None:
    result = compare_sides([load_file(_ab_cell(tmp_path, 3, {}, cases=10, rounds=1))])
    assert result.verdicts()["not enough replication"] == 10
    assert any("not enough replication" in line for line in summary_lines(result))


def test_a_case_that_breaks_in_head_fails_the_gate(tmp_path: Path) -> None:
    path = _ab_cell(tmp_path, 4, {}, cases=10)
    doc = json.loads(path.read_text())
    for rec in doc["results"]["records"]:
        if rec["id"] == "own.work[case=3,side=head,api=tf,mode=eager]":
            rec.update(status="error", reason="ValueError: head broke it", samples=[], per_process=[],
                       stats=None, between_process=None)
    path.write_text(json.dumps(doc))
    result = compare_sides([load_file(path)])
    assert result.offenders(0.10)[0] == "broke: syn-cpu: own.work[case=3,api=tf,mode=eager]: ValueError: head broke it"


# --------------------------------------------------------------------------- the command's refusals


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(argv)
    return code, capsys.readouterr().err


def test_a_directory_or_a_missing_cell_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "base.py").write_text("BENCHMARKS = []\n")
    code, err = _main(["ab", str(tmp_path / "base.py"), str(tmp_path), "--cell", "tf2.15-cpu"], capsys)
    assert code == 2 and err.strip().splitlines() == [
        f"tfmatrix: error: ab HEAD: {tmp_path} is a directory; name one .py file per side (two versions of the "
        "same file, e.g. `git show main:bench.py > base.py`)"]
    code, err = _main(["ab", str(tmp_path / "base.py"), str(tmp_path / "base.py")], capsys)
    assert code == 2 and "name the cell(s) to measure in with --cell NAME" in err
    code, err = _main(["ab", str(tmp_path / "base.py"), str(tmp_path / "nope.py"), "--cell", "tf2.15-cpu"], capsys)
    assert code == 2 and "ab HEAD:" in err and "does not exist" in err



def test_a_side_is_read_off_an_id_and_put_back() -> None:
    from tfmatrix.analysis.compare.ab import split_side

    assert split_side("own.work[case=1,side=head,api=tf,mode=eager]") == ("head", "own.work[case=1,api=tf,mode=eager]")
    assert split_side("own.work[case=1,api=tf,mode=eager]") == ("", "own.work[case=1,api=tf,mode=eager]")


def test_an_early_stopped_run_is_judged_at_its_per_look_level_and_each_case_is_decided_or_the_same(
        tmp_path: Path) -> None:
    """``ab`` stops when every case is decided or within 5% of 1 (``case_state``), looking up to ``LOOKS`` times:
    each look, and the final table and gate, test at 5% / LOOKS, so its intervals are wider than 95% ones."""
    from tfmatrix.analysis.stopping import DECIDED, LOOK_ALPHA, OPEN, SAME, case_state

    changed = {i: 1.10 for i in range(0, 40, 5)}
    cell = load_file(_ab_cell(tmp_path, 11, changed, cases=40, rounds=4, shared_sd=0.05, own_sd=0.005))
    plain, looked = compare_sides([cell]), compare_sides([cell], alpha=LOOK_ALPHA)
    assert looked.alpha == LOOK_ALPHA
    for p, q in zip(plain.variants, looked.variants, strict=True):
        assert q.ci.low < p.ci.low and q.ci.high > p.ci.high and q.ci.ratio == p.ci.ratio
    states = {v.id: case_state(v.ci) for v in looked.variants}
    slowed = {v.id for v in looked.variants if int(v.id.split("case=")[1].split(",")[0]) in changed}
    assert all(states[i] == DECIDED for i in slowed)
    same = [i for i in states if i not in slowed]
    assert sum(states[i] == SAME for i in same) >= 0.8 * len(same) and not any(states[i] == DECIDED for i in same)
    assert case_state(compare_sides([load_file(_ab_cell(tmp_path, 12, {}, cases=5, rounds=1))]).variants[0].ci) \
        == OPEN
