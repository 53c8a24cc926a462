"""Sequential rounds (``rounds = "auto"``): the rule's error with a look after every round, and the run loop.

The rule's tests simulate claim lines under this host's uneven noise
(``sequential_model``: per-round SDs 11% at the median, 22% at the 90th
percentile) through the functions a real look uses; the loop's tests run the
interleaved schedule on test_interleaved's fake runner with scripted looks.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console
from sequential_model import Shipped, run_line, sigmas
from test_interleaved import SLICES, FakeCell, FakeRunner

from tfmatrix.analysis.claims.answers import HOLDS, REVERSED
from tfmatrix.analysis.claims.files import builtin
from tfmatrix.analysis.runs.prior import shipped
from tfmatrix.analysis.statistics.inference import ALPHA
from tfmatrix.analysis.statistics.words import UNCLEAR
from tfmatrix.analysis.stopping import DECIDED, LOOK_ALPHA, MAX_ROUNDS, OPEN, SAME, LineState, open_variants
from tfmatrix.execution import dispatch as execution
from tfmatrix.execution.request import RunRequest

N = 1500


def _false_rate(alpha: float, warm: bool, seed: int = 1) -> float:
    rng = np.random.default_rng(seed)
    sd = sigmas(rng, 2 * N)
    wrong = sum(run_line(rng, 1.0, sd[2 * i], sd[2 * i + 1], warm=warm, alpha=alpha).verdict in (HOLDS, REVERSED)
                for i in range(N))
    return wrong / N


@pytest.mark.parametrize("warm", [True, False])
def test_an_unchanged_line_is_called_different_at_most_5_percent_of_the_time_over_all_its_looks(warm: bool) -> None:
    """Looked at after rounds 1 (warm) or 2, 3 and 4, at ALPHA / LOOKS each: the line's error stays at 5%."""
    assert _false_rate(LOOK_ALPHA, warm) <= 0.05


def test_the_looks_are_accounted_for() -> None:
    """Without the per-look level (every look at 5%), the same lines are called different far more often: this is
    what the division by the looks buys, and a rule that forgot it fails the test above."""
    assert LOOK_ALPHA < ALPHA
    assert _false_rate(ALPHA, warm=True) > 0.06


def test_a_3x_effect_is_decided_at_the_first_look_on_a_warm_machine() -> None:
    rng = np.random.default_rng(2)
    sd = sigmas(rng, 400)
    stops = [run_line(rng, 1 / 3, sd[2 * i], sd[2 * i + 1], warm=True) for i in range(200)]
    # at the median noise every time; over the measured spread all but the noisiest tenth (then at round 2)
    assert sum(s.rounds == 1 and s.state == DECIDED and s.verdict == HOLDS for s in stops) / len(stops) >= 0.9
    assert sum(s.rounds <= 2 and s.verdict == HOLDS for s in stops) / len(stops) >= 0.98
    assert all(run_line(rng, 1 / 3, 0.11, 0.11, warm=True).rounds == 1 for _ in range(50))
    # no history: the first look is after round 2, where a line's own degree of freedom alone rarely decides at
    # 1%; round 3 or 4 does (in a real run, moderation across the cell's variants may lend it more)
    cold = [run_line(rng, 1 / 3, sd[2 * i], sd[2 * i + 1], warm=False) for i in range(200)]
    assert sum(s.rounds <= 4 and s.verdict == HOLDS for s in cold) / len(cold) >= 0.9


def _shipped_false_rate(mismatch: float, seed: int) -> float:
    prior = shipped()
    rng = np.random.default_rng(seed)
    sd = sigmas(rng, 2 * N)
    how = Shipped(prior.scale, prior.d, mismatch)
    wrong = sum(run_line(rng, 1.0, sd[2 * i], sd[2 * i + 1], warm=False, shipped=how).verdict in (HOLDS, REVERSED)
                for i in range(N))
    return wrong / N


@pytest.mark.parametrize("mismatch", [1.0, 2.0])
def test_on_the_shipped_prior_an_unchanged_line_stays_within_5_percent_even_on_a_host_twice_as_noisy(
        mismatch: float) -> None:
    """A fresh machine looks after round 1 on the prior shipped with tfmatrix (``analysis.runs.prior``), lent wider
    than measured: on a host as noisy as the one that measured it, or with twice its per-round SD, an unchanged
    line is still called different at most 5% of the time over all its looks."""
    assert _shipped_false_rate(mismatch, seed=5) <= 0.05


def test_lent_as_measured_the_prior_would_not_hold_on_a_noisier_host() -> None:
    """What the widening buys: the same prior lent as measured (scale 1, many degrees of freedom) calls far more
    unchanged lines different on a host twice as noisy, so a prior that forgot its widening fails the test above."""
    rng = np.random.default_rng(6)
    sd = sigmas(rng, 2 * N)
    how = Shipped(1.0, 50.0, 2.0)
    wrong = sum(run_line(rng, 1.0, sd[2 * i], sd[2 * i + 1], warm=False, shipped=how).verdict in (HOLDS, REVERSED)
                for i in range(N))
    assert wrong / N > 0.08


def test_on_the_shipped_prior_a_large_effect_is_decided_at_round_1() -> None:
    """The point of the prior: a 10x line (most seed claims are 5-30x) decides at the first look on a fresh machine
    at the measured noise, where it waited for round 2 before."""
    prior = shipped()
    rng = np.random.default_rng(7)
    sd = sigmas(rng, 400)
    how = Shipped(prior.scale, prior.d)
    stops = [run_line(rng, 1 / 10, sd[2 * i], sd[2 * i + 1], warm=False, shipped=how) for i in range(200)]
    assert sum(s.rounds == 1 and s.verdict == HOLDS for s in stops) / len(stops) >= 0.9


def test_a_line_at_its_edge_runs_to_the_cap() -> None:
    """A 10% effect at the median noise is neither clear nor shown to be within the margin: it gets every round."""
    rng = np.random.default_rng(3)
    stops = [run_line(rng, 1 / 1.1, 0.11, 0.11, warm=True) for _ in range(300)]
    assert float(np.median([s.rounds for s in stops])) == MAX_ROUNDS
    assert sum(s.state == OPEN for s in stops) / len(stops) >= 0.5


def test_an_equal_line_of_quiet_variants_stops_as_the_same() -> None:
    rng = np.random.default_rng(4)
    stops = [run_line(rng, 1.0, 0.02, 0.02, warm=True) for _ in range(100)]
    assert sum(s.state == SAME and s.verdict == UNCLEAR and s.rounds <= 3 for s in stops) >= 95


# --------------------------------------------------------------------------- the run loop


def _line(cell_a: str, cell_b: str, vid_a: str, vid_b: str, state: str) -> LineState:
    return LineState("claim_x", cell_a if cell_a == cell_b else f"{cell_a} vs {cell_b}", (cell_a, vid_a),
                     (cell_b, vid_b), HOLDS if state == DECIDED else UNCLEAR, state, 1.0)


def test_open_variants_are_both_sides_in_their_own_cells() -> None:
    lines = [_line("a", "b", "x", "y", OPEN), _line("a", "a", "z", "w", DECIDED)]
    assert open_variants(lines) == {"a": {"x"}, "b": {"y"}}


def test_only_the_open_lines_variants_run_again_and_each_cell_file_says_why_each_line_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 1 is no look without a noise history; after round 2 one line is open (slice eager:tf of both cells),
    after round 3 none: round 3 runs that slice alone, asking the suite for its open variant only."""
    v1 = SLICES["eager:tf"][0]
    v2 = SLICES["graph:tf"][0]
    looked: list[int] = []

    def look(live: Any, head: Any, history: Any, alpha: float = LOOK_ALPHA, claims: Any = None,
             kept: Any = ()) -> list[LineState]:
        rounds = max(r for lc in live.values() for r, _ in lc.done)
        looked.append(rounds)
        return [_line("a", "b", v1, v1, OPEN if rounds < 3 else DECIDED), _line("a", "a", v2, v2, SAME)]

    monkeypatch.setattr("tfmatrix.execution.looks.look", look)
    runner = FakeRunner(tmp_path)
    asked = RunRequest(rounds=MAX_ROUNDS, sequential=True, seed=5)
    args: list[list[str]] = []
    real = type(runner).prepare

    def prepare(self: Any, job: Any, log: Any, progress: Any) -> Any:
        env = real(self, job, log, progress)
        run_suite = env.run_suite

        def spy(a: list[str], *rest: Any, **kw: Any) -> Any:
            args.append(a)
            return run_suite(a, *rest, **kw)
        env.run_suite = spy
        return env
    monkeypatch.setattr(type(runner), "prepare", prepare)
    outcomes = execution.execute([FakeCell("a"), FakeCell("b")], runner, asked, tmp_path / "reports",
                                 console=Console(file=open("/dev/null", "w")))  # noqa: SIM115
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert looked == [2, 3]
    by_round = sorted((c, k, r) for c, k, r in runner.calls)
    assert [(c, k) for c, k, r in by_round if r == 3] == [("a", "eager:tf"), ("b", "eager:tf")]
    assert not [r for _, _, r in by_round if r > 3]
    later = [a for a in args if "--pass" in a and a[a.index("--pass") + 1] == "3"]
    assert later and all(a[a.index("--variant") + 1] == v1 for a in later)
    assert all("--variant" not in a for a in args if "--pass" in a and a[a.index("--pass") + 1] in ("1", "2"))
    assert all(a[a.index("--of") + 1] == "2" for a in args if "--of" in a)     # half the samples, whatever the cap
    doc = json.loads((tmp_path / "reports" / "cells" / "a.json").read_text())
    seq = doc["results"]["config"]["schedule"]["sequential"]
    assert seq["alpha"] == LOOK_ALPHA and seq["first_look"] == 2 and seq["cap"] == MAX_ROUNDS
    assert doc["results"]["config"]["rounds"] == 3
    lines = {tuple(row[:4]): row[4:] for row in seq["lines"]}
    assert lines[("claim_x", "a vs b", v1, v1)] == [3, "decided after round 3"]
    assert lines[("claim_x", "a", v2, v2)][0] == 2 and "within 10%" in lines[("claim_x", "a", v2, v2)][1]
    assert doc["request"]["sequential"] is True and doc["request"]["rounds"] == MAX_ROUNDS


def _cell(tf: str, keras: str = "", backend: str = "tensorflow") -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(tf=tf, keras_version=keras, tf_major=int(tf.split(".")[0]) if tf else None,
                           backend=backend)


def test_a_cell_measures_only_what_makes_a_claim_line_there() -> None:
    """MobileNetV2 stands in for EfficientNetV2S only where the seed's model cannot run; a TF-2-only claim's
    variants are not measured in a cell without TensorFlow, and seed 000's TF1 side only in its TF 1.14 cell."""
    from suite.definitions import PRESETS
    from suite.registry import all_variants
    from tfmatrix.analysis.stopping import claim_variant_ids, needed_here
    SEEDS = builtin()

    catalogue = [(v.benchmark, v.id, v.as_dict()) for v in all_variants(PRESETS["seed"])]
    ids = claim_variant_ids(catalogue, SEEDS)
    assert any("efficientnetv2s" in i for i in ids) and any("mobilenetv2" in i for i in ids)
    tf215 = needed_here(catalogue, ids, _cell("2.15.1", "2.15.0"), SEEDS)
    assert not any("mobilenetv2" in i for i in tf215) and any("efficientnetv2s" in i for i in tf215)
    old = needed_here(catalogue, [i for i in ids if "efficientnetv2s" not in i], _cell("2.1.4", "2.2.4-tf"), SEEDS)
    assert any("mobilenetv2" in i for i in old)
    question = [i for i in ids if i.startswith("training.question")]
    assert question and not set(question) & needed_here(catalogue, ids, _cell("", "3.15.1", "torch"), SEEDS)
    tf1 = needed_here(catalogue, ids, _cell("1.14.0", "2.2.5"), SEEDS)
    assert {i for i in question if "mode=graph" in i} <= tf1 and not {i for i in question if "mode=eager" in i} & tf1


def test_a_jax_cell_measures_its_own_answers_to_the_seed_questions() -> None:
    from suite.definitions import PRESETS
    from suite.registry import all_variants
    from tfmatrix.analysis.stopping import claim_variant_ids, needed_here
    SEEDS = builtin()

    catalogue = [(v.benchmark, v.id, v.as_dict()) for v in all_variants(PRESETS["seed"])]
    ids = claim_variant_ids(catalogue, SEEDS)
    own = [i for i in ids if "api=backend" in i]
    assert own
    runs_there = [i for i in ids if any(f"api={api}," in i for api in ("backend", "keras", "numpy"))]  # its plan's
    jax = needed_here(catalogue, runs_there, _cell("", "3.15.1", "jax"), SEEDS)
    assert set(own) <= jax and not any("training.question" in i for i in jax)      # a TF-2-only claim
    tf_plan = [i for i in ids if i not in own]              # a TF cell's plan settles them n/a
    assert not set(own) & needed_here(catalogue, tf_plan, _cell("2.15.1", "2.15.0"), SEEDS)


def test_every_question_keeps_a_line_in_the_default() -> None:
    """The questions the claims leave without a line get the cheapest variants that give them one (``EXTRAS``): seed
    000's TF2 eager against the newest TF1 cell's graph mode, and a model every Keras 3 backend runs."""
    from suite.definitions import PRESETS
    from suite.registry import all_variants
    from tfmatrix.analysis.stopping import EXTRAS, claim_variant_ids, needed_here
    SEEDS = builtin()

    catalogue = [(v.benchmark, v.id, v.as_dict()) for v in all_variants(PRESETS["seed"])]
    ids = claim_variant_ids(catalogue, SEEDS)
    assert {x.question for x in EXTRAS} == {"tf2_eager_vs_tf1_graph", "keras3_backends"}
    tf115 = needed_here(catalogue, [i for i in ids if "api=keras," not in i], _cell("1.15.5", "2.2.4-tf"), SEEDS)
    assert any(i.startswith("training.answer") and "mode=graph" in i for i in tf115)
    jax_plan = [i for i in ids if "api=keras," in i or "api=backend" in i]
    jax = needed_here(catalogue, jax_plan, _cell("", "3.15.1", "jax"), SEEDS)
    assert any(i.startswith("inference.tiny") for i in jax)
    tf215 = needed_here(catalogue, ids, _cell("2.15.1", "2.15.0"), SEEDS)
    assert not any(i.startswith("inference.tiny") and "api=keras," in i for i in tf215)     # not a Keras 3 cell


def test_an_ab_run_is_judged_on_its_cases_and_stops_when_each_is_decided_or_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ab``'s request asks its looks of ``looks.ab_look`` (head against base per case), not of the claims; every
    case decided at the first look (round 2 without a history): two rounds, no more."""
    from tfmatrix.analysis.stopping import look_rounds

    v1 = SLICES["eager:tf"][0]
    calls: list[str] = []

    def ab_look(live: Any, head: Any, history: Any, alpha: float = LOOK_ALPHA) -> list[LineState]:
        calls.append("ab")
        return [_line("a", "a", v1, v1, DECIDED)]

    def look(*args: Any, **kw: Any) -> list[LineState]:
        raise AssertionError("an ab run's looks are not the claims'")

    monkeypatch.setattr("tfmatrix.execution.looks.ab_look", ab_look)
    monkeypatch.setattr("tfmatrix.execution.looks.look", look)
    runner = FakeRunner(tmp_path)
    asked = RunRequest(rounds=10, sequential=True, judge="ab", seed=5)
    outcomes = execution.execute([FakeCell("a")], runner, asked, tmp_path / "reports",
                                 console=Console(file=open("/dev/null", "w")))  # noqa: SIM115
    assert [o.status for o in outcomes] == ["ok"] and calls == ["ab"]
    assert max(r for _, _, r in runner.calls) == 2
    assert look_rounds(False, 10) == [2, 3, 4, 10] and look_rounds(True, 10) == [2, 3, 4, 10]
    assert look_rounds(True, 4) == [1, 2, 3, 4] and look_rounds(False, 4) == [2, 3, 4]
    assert look_rounds(False, 3) == [2, 3]


def test_the_page_fills_after_each_look_that_another_round_follows_and_keeps_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 60's page as the run goes, through the real loop and the real report: once provisioned (what will run),
    after round 2's look (one line
    open, round 3 follows) the page is built from the live cells' rounds so far, says where the run is and reloads
    itself; after round 3's (nothing open) none is, the run's own report follows; nothing of the page is kept
    (no run archive, no noise history) and its interim cell files go with the run."""
    import io

    from tfmatrix.report.build import build

    v1, v2 = SLICES["eager:tf"][0], SLICES["graph:tf"][0]

    def look(live: Any, head: Any, history: Any, alpha: float = LOOK_ALPHA, claims: Any = None,
             kept: Any = ()) -> list[LineState]:
        rounds = max(r for lc in live.values() for r, _ in lc.done)
        return [_line("a", "b", v1, v1, OPEN if rounds < 3 else DECIDED), _line("a", "a", v2, v2, SAME)]

    monkeypatch.setattr("tfmatrix.execution.looks.look", look)
    reports = tmp_path / "reports"
    pages: list[tuple[list[str], str, str]] = []

    def page(cells: Path, words: str) -> None:
        build(cells, reports, progress=words)
        pages.append((sorted(p.name for p in cells.glob("*.json")), words, (reports / "index.html").read_text()))

    said = io.StringIO()
    asked = RunRequest(rounds=MAX_ROUNDS, sequential=True, seed=5, page=page)
    outcomes = execution.execute([FakeCell("a"), FakeCell("b")], FakeRunner(tmp_path), asked, reports,
                                 console=Console(file=said, width=400))
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert len(pages) == 2
    names, words, html = pages[0]              # provisioned: each cell's plan, nothing measured yet
    assert names == ["a.json", "b.json"] and words.startswith(
        "This run is in progress: 2 cells provisioned, 4 variants to measure; round 1 of up to 4 is running and the "
        "first verdicts come after round 2")
    assert "; the opening estimate ends the run about " in words and " from now). This page reloads" in words
    assert 'id="in-progress"' in html
    names, words, html = pages[1]
    assert names == ["a.json", "b.json"]
    assert words.startswith("This run is in progress: round 2 of up to 4 done after ")
    assert "0 claim lines decided, 1 shown the same, 1 still open; the next round measures the open lines only" \
        in words
    assert 'http-equiv="refresh"' in html and 'id="in-progress"' in html and "(in progress)</title>" in html
    assert not (reports / "runs").exists()
    assert not (reports / ".interim").exists()
    assert f"the first verdicts are on the page: {reports / 'index.html'}" in said.getvalue()
    build(reports / "cells", reports)              # the run's own report: no banner, and it keeps its runs
    final = (reports / "index.html").read_text()
    assert 'id="in-progress"' not in final and "http-equiv" not in final


def test_a_page_that_cannot_be_written_never_stops_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    v1 = SLICES["eager:tf"][0]
    monkeypatch.setattr("tfmatrix.execution.looks.look", lambda live, head, history, alpha=LOOK_ALPHA, claims=None,
                        kept=(): [_line("a", "b", v1, v1, OPEN if max(r for lc in live.values() for r, _ in lc.done) < 3
                                        else DECIDED)])

    def page(cells: Path, words: str) -> None:
        raise OSError("No space left on device")

    said = io.StringIO()
    outcomes = execution.execute([FakeCell("a"), FakeCell("b")], FakeRunner(tmp_path),
                                 RunRequest(rounds=MAX_ROUNDS, sequential=True, seed=5, page=page),
                                 tmp_path / "reports", console=Console(file=said, width=400))
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert "the page in progress was not written (the run goes on): No space left on device" in said.getvalue()


def test_a_fresh_machine_looks_after_round_1_on_the_shipped_prior_and_its_cells_say_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No noise history here, but the shipped prior knows the variants: round 1 is a look, each cell file records
    that its looks borrowed the prior (the report lends it to those cells alone), and the opening line says so."""
    from tfmatrix.analysis.runs.prior import ShippedPrior

    v1, v2 = SLICES["eager:tf"][0], SLICES["graph:tf"][0]
    seen: list[tuple[int, Any]] = []

    def look(live: Any, head: Any, history: Any, alpha: float = LOOK_ALPHA, claims: Any = None,
             kept: Any = ()) -> list[LineState]:
        seen.append((max(r for lc in live.values() for r, _ in lc.done), history))
        return [_line("a", "b", v1, v1, DECIDED), _line("a", "a", v2, v2, SAME)]

    monkeypatch.setattr("tfmatrix.execution.looks.look", look)
    monkeypatch.setattr("tfmatrix.execution.until_decided.shipped",
                        lambda: ShippedPrior({v1: 0.01, v2: 0.02}, 4.0, 4.0, "a test host"))
    out = io.StringIO()
    outcomes = execution.execute([FakeCell("a"), FakeCell("b")], FakeRunner(tmp_path),
                                 RunRequest(rounds=MAX_ROUNDS, sequential=True, seed=5), tmp_path / "reports",
                                 console=Console(file=out, width=400))
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert [r for r, _ in seen] == [1]
    history = seen[0][1]
    assert history.lent[("a", v1)] == (0.04, 4.0) and history.lent[("b", v2)] == (0.08, 4.0)
    seq = json.loads((tmp_path / "reports" / "cells" / "a.json").read_text())["results"]["config"]["schedule"][
        "sequential"]
    assert seq["first_look"] == 1 and seq["prior"] is True and "a test host" in seq["history"]
    assert "round 1 judged with the prior shipped with tfmatrix" in out.getvalue()


def test_start_words_say_when_the_opening_estimate_ends_the_run() -> None:
    """The page written once provisioning is done says the opening estimate as a clock time and as time left; an
    unknown estimate (an existing environment never run here) says nothing of it."""
    import time as _time

    from tfmatrix.execution.page import start_words

    end = 1_800_000_000.0
    words = start_words({}, 4, 1, end, now=end - 754)
    assert f"about {_time.strftime('%H:%M', _time.localtime(end))} (~12:34 from now)." in words
    assert "opening estimate" not in start_words({}, 4, 1)
    assert "(~0:00 from now)" in start_words({}, 4, 1, end, now=end + 60)      # late: never a negative time
