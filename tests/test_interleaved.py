"""The interleaved schedule: provision, then turns of slices in a seeded random order, paired by round.

A fake runner stands in for Docker and the venvs (the real ones run it in
test_e2e_venv.py and test_e2e_docker.py). Its cells' "TensorFlow" takes a
fixed time per variant, multiplied by the host's mood: a clock that advances
with every slice run and has a slow period over one stretch of the run.
"""
from __future__ import annotations

import io
import json
import random
import zlib
from pathlib import Path
from typing import Any

import pytest
from report_docs import record, results_doc
from rich.console import Console

from suite.schema import validate
from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claims.pairing import comparison_ci
from tfmatrix.analysis.frame import build_frame
from tfmatrix.analysis.statistics.words import UNCLEAR
from tfmatrix.execution import dispatch as execution
from tfmatrix.execution.interleaved import JOURNAL_DIR
from tfmatrix.execution.request import RunRequest
from tfmatrix.execution.turns import plan_turns
from tfmatrix.results.store import CellOutcome, load_cell
from tfmatrix.runners.base import Runner, SuiteExit
from tfmatrix.runners.whole import run_whole

BASE = {"a": {"v1": 1e-3, "v2": 2e-3}, "b": {"v1": 2e-3, "v2": 2e-3}}       # a/b: v1 0.5, v2 1.0


class FakeCell:
    def __init__(self, name: str) -> None:
        self.name, self.target, self.preset, self.repeats = name, "cpu", "quick", None
        self.timeout_s, self.memory = 600, "1g"
        self.existing = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tf": "2.15", "target": "cpu", "preset": "quick"}


def _params(vid: str) -> dict[str, Any]:
    return {"v": vid, "api": "tf", "mode": "eager" if vid == "v1" else "graph"}


def _id(vid: str) -> str:
    return str(record("fake.bench", _params(vid), [1.0])["id"])


SLICES = {"eager:tf": [_id("v1")], "graph:tf": [_id("v2")]}
VIDS = {"eager:tf": "v1", "graph:tf": "v2"}


class DriftingHost:
    """The host's speed: every slice run is one tick; ticks in ``slow`` run 1.5 times slower."""

    def __init__(self, slow: range) -> None:
        self.tick = 0
        self.slow = slow

    def factor(self) -> float:
        return 1.5 if self.tick in self.slow else 1.0


class FakeEnv:
    def __init__(self, runner: FakeRunner, cell: FakeCell, out_dir: Path) -> None:
        self.runner_ = runner
        self.cell = cell
        self.out_dir = out_dir
        self.runner = {"name": "fake", "inputs": "inputs-1"}
        self.timings = {"build_s": 0.0}

    def suite_path(self, name: str) -> str:
        return str(self.out_dir / name)

    def run_suite(self, args: list[str], log: Any, timeout_s: float, cpus: str | None = None) -> SuiteExit:
        opts = dict(zip(args[1::2], args[2::2], strict=False))
        out = Path(opts["--out"])
        if args[0] == "plan":
            doc = results_doc([], tf="2.15.1", cell=self.cell.name)
            doc["config"]["slices"] = SLICES
            doc["config"]["order"] = sorted((v for ids in SLICES.values() for v in ids), reverse=True)
            out.write_text(json.dumps(doc))
            return SuiteExit(0)
        key, round_no = opts.get("--slice"), int(opts.get("--pass", 1))
        self.runner_.calls.append((self.cell.name, key, round_no))
        if self.runner_.interrupt_at == len(self.runner_.calls):
            raise KeyboardInterrupt
        if (self.cell.name, round_no) in self.runner_.fail or (self.cell.name, round_no, key) in self.runner_.fail:
            return SuiteExit(1)
        if (self.cell.name, round_no, key) in self.runner_.fail_once:     # killed once, as `docker kill` does
            self.runner_.fail_once.discard((self.cell.name, round_no, key))
            return SuiteExit(137)
        keys = [key] if key else list(SLICES)
        records = []
        for k in keys:
            for vid in [VIDS[k]]:
                rng = random.Random(zlib.crc32(f"{self.cell.name}|{vid}|{self.runner_.host.tick}".encode()))
                center = BASE[self.cell.name][vid] * self.runner_.host.factor()
                rec = record("fake.bench", _params(vid), [center * (1 + 0.005 * rng.random()) for _ in range(5)])
                rec["schedule"] = {"windows": ["%s:%d" % (self.cell.name, self.runner_.host.tick)], "rounds": [5],
                                   "stopped": ["repeats"]}
                if key:
                    rec["schedule"]["passes"] = [round_no]
                records.append(rec)
            self.runner_.host.tick += 1
        doc = results_doc(records, tf="2.15.1", cell=self.cell.name)
        if key:         # the suite times the reference workload in the slice's container, before and after
            doc["config"]["reference_s"] = [0.015 * self.runner_.host.factor(), 0.016]
        out.write_text(json.dumps(doc))
        return SuiteExit(0, seconds=0.01)

    def close(self) -> None:
        self.runner_.closed.append(self.cell.name)


class FakeRunner(Runner):
    name = "fake"
    interleaves = True

    def __init__(self, tmp: Path, slow: range = range(0), fail: tuple[tuple[Any, ...], ...] = (),
                 interrupt_at: int = 0, fail_once: tuple[tuple[Any, ...], ...] = ()) -> None:
        self.tmp = tmp
        self.host = DriftingHost(slow)
        self.fail = set(fail)
        self.fail_once = set(fail_once)
        self.interrupt_at = interrupt_at
        self.calls: list[tuple[str, str | None, int]] = []
        self.prepared: list[str] = []
        self.closed: list[str] = []

    def inputs(self, cell: Any) -> str:
        return "inputs-1"

    def skip_reason(self, cell: Any) -> str | None:
        return None

    def prepare(self, job: Any, log: Any, progress: Any) -> FakeEnv | CellOutcome:
        cell = job.cell
        self.prepared.append(cell.name)
        out = self.tmp / "env" / cell.name
        out.mkdir(parents=True, exist_ok=True)
        return FakeEnv(self, cell, out)

    def run_cell(self, job: Any, log: Any, progress: Any) -> CellOutcome:
        return run_whole(self, job, log, progress)


CELLS = [FakeCell("a"), FakeCell("b")]


def _execute(reports: Path, runner: FakeRunner, schedule: str = "interleaved", rounds: int = 3,
             seed: int | None = 7, redo: bool = True) -> list[CellOutcome]:
    request = RunRequest(rounds=rounds, schedule=schedule, seed=seed)
    return execution.execute(CELLS, runner, request, reports, redo=redo, console=Console(file=io.StringIO()))


def _ratio(reports: Path, vid: str) -> Any:
    cells = load_dir(reports / "cells").cells
    df = build_frame(cells)
    ra = df[(df["cell"] == "a") & (df["variant"].str.contains(f"v={vid}"))].iloc[0]
    rb = df[(df["cell"] == "b") & (df["variant"].str.contains(f"v={vid}"))].iloc[0]
    return comparison_ci(ra, rb)


def test_the_interleaved_ratio_cancels_a_slow_period_that_the_sequential_order_does_not(tmp_path: Path) -> None:
    # sequential (today's order): a runs in the slow period (ticks 0-1), b after it
    _execute(tmp_path / "seq", FakeRunner(tmp_path, slow=range(0, 2)), schedule="sequential", rounds=1)
    seq = _ratio(tmp_path / "seq", "v1")
    assert seq.ratio == pytest.approx(0.75, rel=0.02)           # 1.5 x 0.5: the host, not the cells
    # interleaved: the slow period covers the first round's turns, both cells alike
    runner = FakeRunner(tmp_path, slow=range(0, 4))
    outcomes = _execute(tmp_path / "int", runner)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert runner.prepared == ["a", "b"] and len(runner.calls) == 2 * 2 * 3   # provisioned first, then 12 slices
    ci = _ratio(tmp_path / "int", "v1")
    assert ci.rounds == 3 and ci.ratio == pytest.approx(0.5, rel=0.02)
    assert ci.verdict == "a"                                      # a is clearly faster
    v2 = _ratio(tmp_path / "int", "v2")
    assert v2.ratio == pytest.approx(1.0, rel=0.02) and v2.verdict == UNCLEAR


def test_a_tables_times_divide_to_its_ratio_and_the_pooled_p10_stands_apart(tmp_path: Path) -> None:
    # issue 41: the tables showed the pooled 10th percentile beside a ratio made of per-round ones
    _execute(tmp_path, FakeRunner(tmp_path, slow=range(0, 4)))        # round 1 slow for both cells
    df = build_frame(load_dir(tmp_path / "cells").cells)
    ra = df[(df["cell"] == "a") & (df["variant"].str.contains("v=v1"))].iloc[0]
    rb = df[(df["cell"] == "b") & (df["variant"].str.contains("v=v1"))].iloc[0]
    assert float(ra["time"]) / float(rb["time"]) == pytest.approx(_ratio(tmp_path, "v1").ratio, rel=1e-9)
    assert float(ra["pooled_p10"]) < 0.95 * float(ra["time"])    # pooled: the fast rounds' samples alone


def test_every_round_draws_a_fresh_recorded_order_from_the_seed(tmp_path: Path) -> None:
    runner = FakeRunner(tmp_path)
    _execute(tmp_path, runner, seed=11)
    doc = load_cell(tmp_path / "cells" / "a.json")
    assert doc is not None and doc.results is not None
    assert validate(doc.results.to_json()) == []
    schedule = doc.results.config["schedule"]
    assert schedule["kind"] == "interleaved" and schedule["seed"] == 11 and schedule["rounds_asked"] == 3
    turns = schedule["turns"]
    assert turns == [t.to_json() for t in plan_turns(list(SLICES), ["a", "b"], 3, 11)]
    # the calls followed the recorded order, turn by turn
    assert [(c, k, r) for _, r, k, order in turns for c in order] == runner.calls
    assert len(doc.results.config["host_speed"]) == 6           # one probe of the host per turn
    # and each slice timed the same workload inside the cell's container, round by round
    assert [r[:2] for r in doc.results.config["container_reference"]] == sorted(
        [r, k] for r in (1, 2, 3) for k in SLICES)
    assert all(r[3] == 0.016 for r in doc.results.config["container_reference"])
    ids = [r["id"] for r in doc.results.records]                # the catalogue's order (the plan's), not the turns'
    assert ids == sorted(ids, reverse=True) and "order" not in doc.results.config
    # the order is random: over many seeds each cell goes first sometimes, and slices change places by round
    firsts = {plan_turns(["s1", "s2"], ["a", "b", "c"], 4, seed)[0].order[0] for seed in range(20)}
    assert firsts == {"a", "b", "c"}
    many = plan_turns(["s1", "s2", "s3"], ["a", "b", "c", "d"], 5, 3)
    assert len({t.order for t in many}) > 1 and len({tuple(t.slice for t in many[i:i + 3]) for i in (0, 3, 6, 9)}) > 1
    assert plan_turns(["s1", "s2"], ["a", "b"], 3, 5) == plan_turns(["s2", "s1"], ["b", "a"], 3, 5)


def test_an_interrupted_run_keeps_every_complete_slice_and_resumes(tmp_path: Path) -> None:
    first = FakeRunner(tmp_path, interrupt_at=7)
    with pytest.raises(KeyboardInterrupt):
        _execute(tmp_path, first, seed=None)
    assert len(first.calls) == 7 and sorted(first.closed) == ["a", "b"]      # containers stopped
    journal = tmp_path / JOURNAL_DIR
    assert len(list(journal.glob("*/r*.json"))) == 6                        # six slices complete
    for name in ("a", "b"):      # no cell file claims results it does not have
        doc = json.loads((tmp_path / "cells" / f"{name}.json").read_text())
        assert doc["status"] == "failed" and doc["reason"] == "interrupted"
    second = FakeRunner(tmp_path)
    outcomes = _execute(tmp_path, second, seed=None, redo=False)
    assert len(second.calls) == 6 and [o.status for o in outcomes] == ["ok", "ok"]
    assert first.calls[6] == second.calls[0]            # the interrupted slice first: same seed, same order
    doc = load_cell(tmp_path / "cells" / "a.json")
    assert doc is not None and doc.results is not None and doc.rounds == 3
    (rec,) = [r for r in doc.results.records if "v=v1" in r["id"]]
    assert rec["schedule"]["passes"] == [1, 2, 3] and len(rec["per_process"]) == 3
    assert not journal.exists()                           # a complete run leaves no journal


def test_a_slice_killed_once_is_measured_again_after_the_turns_in_a_fresh_environment(tmp_path: Path) -> None:
    """``docker kill`` mid-slice used to end the cell (0 results from a run that lost one slice): now the slice is
    measured again after the planned turns, in a new environment, and the cell is whole."""
    runner = FakeRunner(tmp_path, fail_once=(("a", 2, "graph:tf"),))
    outcomes = _execute(tmp_path, runner)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    a_calls = [c for c in runner.calls if c[0] == "a"]
    assert len([c for c in a_calls if c[2] == 3]) == 2                        # round 3 still ran
    assert a_calls[-1] == ("a", "graph:tf", 2)                                # the retry, after every planned turn
    assert runner.prepared.count("a") == 2                                    # a fresh environment for it
    a = load_cell(tmp_path / "cells" / "a.json")
    assert a is not None and a.results is not None and a.rounds == 3
    assert any("round 2, slice graph:tf failed (failed: " in w and "measured again after the planned turns" in w
               for w in a.results.warnings)
    assert validate(a.results.to_json()) == []
    assert not (tmp_path / JOURNAL_DIR).exists()


def test_a_slice_that_fails_again_is_given_up_and_the_cell_keeps_its_other_rounds(tmp_path: Path) -> None:
    runner = FakeRunner(tmp_path, fail=(("a", 2),))
    outcomes = _execute(tmp_path, runner)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    a_calls = [c for c in runner.calls if c[0] == "a"]
    assert len([c for c in a_calls if c[2] == 3]) == 2                        # the rest of the run went on
    assert sorted(a_calls[-2:]) == [("a", "eager:tf", 2), ("a", "graph:tf", 2)]   # each measured once more
    a = load_cell(tmp_path / "cells" / "a.json")
    b = load_cell(tmp_path / "cells" / "b.json")
    assert a is not None and a.results is not None and b is not None and b.results is not None
    assert a.rounds == 2 and b.rounds == 3
    failed = [w for w in a.results.warnings if w.startswith("round 2, slice ")]
    assert len(failed) == 2 and all("; then failed: " in w and "pool the other rounds only" in w for w in failed)
    assert all(len(r["per_process"]) == 2 for r in a.results.records if r["status"] == "ok")
    assert validate(a.results.to_json()) == []


def test_a_slice_that_fails_every_time_leaves_the_cell_failed_with_what_else_it_measured(tmp_path: Path) -> None:
    """A slice that fails in round 1 and again in round 2 is given up; with no whole round the cell is failed, and
    says which variants were never measured (its other slice's records stay in its file)."""
    for slice_key in SLICES:
        runner = FakeRunner(tmp_path / slice_key.replace(":", "_"),
                            fail=tuple(("a", r, slice_key) for r in (1, 2, 3)))
        outcomes = _execute(tmp_path / slice_key.replace(":", "_"), runner)
        assert [o.status for o in outcomes] == ["failed", "ok"], slice_key
        assert [c for c in runner.calls if c[0] == "a" and c[1] == slice_key] == [("a", slice_key, 1),
                                                                                   ("a", slice_key, 2)]
        assert outcomes[0].reason is not None and "were never measured" in outcomes[0].reason
        assert outcomes[0].results is not None and any(r["status"] == "ok" for r in outcomes[0].results.records)


def test_a_cell_whose_environment_cannot_be_made_again_ends_and_keeps_its_slices(tmp_path: Path) -> None:
    runner = FakeRunner(tmp_path, fail_once=(("a", 2, "graph:tf"),))
    real = runner.prepare

    def once(cell: Any, *args: Any) -> Any:
        if cell.name == "a" and runner.prepared.count("a") >= 1:
            return CellOutcome("a", "failed", "the Docker engine is gone", {"name": "fake"})
        return real(cell, *args)

    runner.prepare = once       # type: ignore[method-assign]
    outcomes = _execute(tmp_path, runner)
    assert [o.status for o in outcomes] == ["ok", "ok"]                      # round 1 is whole
    a = load_cell(tmp_path / "cells" / "a.json")
    assert a is not None and a.results is not None
    assert any("making its environment again after a failed slice: the Docker engine is gone" in w
               for w in a.results.warnings)
    assert [c for c in runner.calls if c[0] == "a" and c[2] == 3] == []


def test_a_cell_with_nothing_to_measure_in_the_selection_is_ok_with_its_plan(tmp_path: Path) -> None:
    """Every variant n/a or filtered out: the plan's records are the cell's (it said "failed: interrupted")."""
    from tfmatrix.execution.live import LiveCell, cell_results
    from tfmatrix.results.journal import JournalHead

    plan = results_doc([record("fake.bench", _params("v1"), status="n/a", reason="not here")], tf="2.15.1")
    from tfmatrix.results.documents import SuiteResults

    doc = SuiteResults.from_json(plan, Path("plan.json"))
    from types import SimpleNamespace

    job = SimpleNamespace(cell=FakeCell("a"), asked=SimpleNamespace(rounds=3))
    lc = LiveCell(job, None, None, doc, {})  # type: ignore[arg-type]
    out = cell_results(lc, JournalHead("", 1, "r"))
    assert out is not None and [r["status"] for r in out.records] == ["n/a"]


def test_each_round_takes_its_share_of_the_samples() -> None:
    """pyperf's trade: three rounds take about the samples and sampling time of one process, spread over three."""
    from suite.definitions import QUICK_BUDGET
    from suite.harness import spread_over

    one = spread_over(QUICK_BUDGET, 1)
    three = spread_over(QUICK_BUDGET, 3)
    assert one == QUICK_BUDGET
    assert (three.repeats, three.min_repeats, three.max_repeats) == (2, 2, 4)
    assert three.max_time == pytest.approx(QUICK_BUDGET.max_time / 3)
    assert 3 * three.max_repeats == QUICK_BUDGET.max_repeats and three.warmup == QUICK_BUDGET.warmup
    assert RunRequest(rounds=3).job(CELLS[0]).slice_args("p", "eager:tf", 2, "o", None, "x")[-6:] == [
        "--slice", "eager:tf", "--pass", "2", "--of", "3"]


def test_the_time_left_counts_slices_not_yet_run_at_the_rate_measured_so_far():
    """After round 1's first turn most slices have never run: they are estimated from the seconds per variant so
    far (the cell's own, else every cell's), not counted as 0 ('~0:00 left' at turn 1 of 6)."""
    from types import SimpleNamespace

    from tfmatrix.execution.loop import seconds_left as _seconds_left
    from tfmatrix.execution.loop import slice_estimate
    from tfmatrix.execution.turns import plan_turns

    a = SimpleNamespace(slices={"s1": ["v"] * 10, "s2": ["v"] * 20}, slice_s={"s1": 5.0}, failure=None, done=set(),
                        focus=None, given_up=lambda key: False)
    b = SimpleNamespace(slices={"s1": ["v"] * 10, "s2": ["v"] * 40}, slice_s={}, failure=None, done=set(),
                        focus=None, given_up=lambda key: False)
    assert slice_estimate(a, "s1", 9.0) == 5.0                   # run before: its last time
    assert slice_estimate(a, "s2", 9.0) == pytest.approx(10.0)   # 0.5 s a variant in this cell
    assert slice_estimate(b, "s2", 0.5) == pytest.approx(20.0)   # nothing run in b yet: every cell's rate
    turns = plan_turns(["s1", "s2"], ["a", "b"], 2, seed=1)
    first = next(t for t in turns if t.slice == "s1" and t.round == 1)
    a.done.add((1, "s1"))
    b.done.add((1, "s1"))
    b.slice_s["s1"] = 5.0
    left = _seconds_left({"a": a, "b": b}, turns, first)
    assert left > 0
    later = [t for t in turns if t.number > first.number]
    expected = sum({"s1": 5.0, "s2": 10.0 if n == "a" else 20.0}[t.slice] for t in later for n in t.order)
    assert left == pytest.approx(expected)


class PinnedEnv(FakeEnv):
    def run_suite(self, args: list[str], log: Any, timeout_s: float, cpus: str | None = None) -> SuiteExit:
        if args[0] != "plan":
            opts = dict(zip(args[1::2], args[2::2], strict=False))
            self.runner_.pinned.append((self.cell.name, int(opts["--pass"]), cpus))
        return super().run_suite(args, log, timeout_s, cpus)


class PinnedRunner(FakeRunner):
    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.pinned: list[tuple[str, int, str | None]] = []

    def prepare(self, job: Any, log: Any, progress: Any) -> FakeEnv | CellOutcome:
        cell = job.cell
        env = super().prepare(job, log, progress)
        assert isinstance(env, FakeEnv)
        return PinnedEnv(self, cell, env.out_dir)


def test_a_duet_is_the_interleaved_turn_loop_with_both_cells_at_once_on_cpus_swapped_every_round(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The duet runs the interleaved loop (one loop: it once recorded 0.0 for the host's time where the
    interleaved loop records the clock); only how a turn's cells run differs: at once, one CPU each."""
    from tfmatrix.execution import duet

    monkeypatch.setattr(duet, "cpu_pair", lambda: ("0", "1"))
    runner = PinnedRunner(tmp_path)
    out = io.StringIO()
    request = RunRequest(rounds=3, schedule="duet", seed=7)
    outcomes = duet.run(CELLS, runner, request, tmp_path, Console(file=out, width=300))
    assert [(o.name, o.status) for o in outcomes] == [("a", "ok"), ("b", "ok")]
    assert sorted(runner.pinned) == sorted((c, r, ("0" if (c == "a") == (r % 2 == 1) else "1"))
                                           for c in "ab" for r in (1, 2, 3) for _ in SLICES)
    assert "duet turn 1/6 (round 1, slice " in out.getvalue() and "a on CPU 0" in out.getvalue()
    doc = load_cell(tmp_path / "cells" / "a.json")
    assert doc is not None and doc.results is not None and doc.rounds == 3
    speed = doc.results.config["host_speed"]
    assert [t for t, _, _ in speed] == [1, 2, 3, 4, 5, 6] and all(when > 1e9 for _, when, _ in speed)
    assert not (tmp_path / JOURNAL_DIR).exists()


def test_a_slice_that_fails_on_a_full_disk_stops_the_run_resumably(tmp_path: Path, monkeypatch: Any) -> None:
    """A failed slice with the disk full is no fault of the cell: the run stops (ENOSPC) with its journal kept,
    as an interrupted one does, and the same command resumes it once there is room."""
    import errno

    from tfmatrix.execution import live

    monkeypatch.setattr(live, "MIN_FREE_BYTES", 10**18)           # every disk is full
    runner = FakeRunner(tmp_path, fail_once=(("b", 2, "eager:tf"),))
    with pytest.raises(OSError) as caught:
        _execute(tmp_path, runner)
    assert caught.value.errno == errno.ENOSPC
    assert any((tmp_path / JOURNAL_DIR).glob("*/r1-*.json"))        # round 1 kept for the resume
    docs = {n: load_cell(tmp_path / "cells" / f"{n}.json") for n in ("a", "b")}
    assert all(d is not None and d.status == "failed" and d.reason == "interrupted" for d in docs.values())
    monkeypatch.setattr(live, "MIN_FREE_BYTES", 0)                 # room again: the same command resumes
    outcomes = _execute(tmp_path, runner)
    assert [o.status for o in outcomes] == ["ok", "ok"]


def test_a_slice_that_holds_only_numpy_here_says_so_on_the_console() -> None:
    from types import SimpleNamespace

    from tfmatrix.execution.loop import slice_words

    key = "eager:tf.keras"
    numpy_only = SimpleNamespace(slices={key: ["tensor_ops.matmul[impl=numpy.dot,n=256,api=numpy,mode=eager]"]})
    with_tf = SimpleNamespace(slices={key: ["tensor_ops.matmul[impl=tf.matmul,n=256,api=tf,mode=eager]"]})
    assert slice_words("eager:tf.keras", [numpy_only]) == "eager:tf.keras (NumPy only here)"     # type: ignore[list-item]
    assert slice_words("eager:tf.keras", [numpy_only, with_tf]) == "eager:tf.keras"             # type: ignore[list-item]
    assert slice_words("eager:keras", [numpy_only]) == "eager:keras"                            # type: ignore[list-item]
