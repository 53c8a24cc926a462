"""The verdicts' acceptance tests on ``compare``'s real path, at the noise this host has.

``test_verdict_acceptance`` holds the rule to the review's targets on one
family of 50-200 variants. A real comparison is not that: each cell pair x
slice of processes is a family of 5-35 variants, and this host's per-round
SDs are 11.4% at the median and 22.1% at the 90th percentile (2026-11-26;
the review's generator: 7% / 17%). Here synthetic matrices of several cells
and slices (``matrix_model``) are written as interleaved cell files, loaded,
framed and judged by ``variant_changes`` and the gate, as ``compare`` does.
Seeded: the same figures every run (docs/measurement.md, "What compare and
the gate can resolve", prints them with more repetitions).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from host_noise import HOST, REVIEW
from matrix_model import Matrix, gate_fails, gate_mde, judged, vid, write_run
from scipy import special

from tfmatrix import cli
from tfmatrix.analysis.cells import load_file
from tfmatrix.analysis.compare.sets import compare_paths, load_side
from tfmatrix.analysis.frame import build_frame
from tfmatrix.analysis.runs.control import control_move
from tfmatrix.analysis.runs.kept import history_model, run_spread
from tfmatrix.analysis.runs.noise_model import from_frame
from tfmatrix.analysis.series.entries import with_cells
from tfmatrix.analysis.statistics.moderation import Prior, fit_prior, robust_d0
from tfmatrix.results.archive import Archive
from tfmatrix.results.archive import save as save_archive

MEASURED = dict(sigma_median=HOST[0], sigma_p90=HOST[1])
REVIEW_NOISE = dict(sigma_median=REVIEW[0], sigma_p90=REVIEW[1])
SLICES = (5, 12, 20, 35)


def one_per_slice(m: Matrix, factor: float) -> dict[tuple[int, int], float]:
    """The first variant of every slice of every cell, ``factor`` slower."""
    starts = np.cumsum((0,) + m.slices[:-1])
    return {(c, int(v)): factor for c in range(m.cells) for v in starts}


@pytest.mark.parametrize("noise", [MEASURED, REVIEW_NOISE], ids=["measured", "review"])
@pytest.mark.parametrize("rounds", [2, 3, 5, 10])
@pytest.mark.slow
def test_unchanged_variants_are_called_different_at_most_5_percent_and_nearly_all_have_a_prior(
        tmp_path: Path, rounds: int, noise: dict[str, float]) -> None:
    """A/A through files, frame and ``variant_changes`` (--normalise cell, slices of 5-35): each variant's 5% test
    holds at every R although the variants' noise differs, and the moderation prior is used (0% before: it was
    refused whenever variances differed more than their degrees of freedom explain)."""
    m = Matrix(cells=2, slices=SLICES, seed=rounds, **noise)
    rng = np.random.default_rng(100 + rounds)
    calls, prior = [], []
    for _ in range(3):
        changes = judged(m, tmp_path, rounds, rng)
        calls += [v.verdict in ("slower", "faster") for v in changes]
        prior += [v.contrast is not None and v.contrast.prior == "moderated" for v in changes]
    assert np.mean(calls) <= 0.05, np.mean(calls)
    assert np.mean(prior) >= 0.90, np.mean(prior)


@pytest.mark.parametrize(("noise", "found_min", "mde_max"), [(MEASURED, 0.25, 1.0), (REVIEW_NOISE, 0.40, 0.55)],
                         ids=["measured", "review"])
@pytest.mark.slow
def test_with_two_kept_runs_every_variant_has_its_own_prior_and_the_gate_sees_more(
        tmp_path: Path, noise: dict[str, float], found_min: float, mde_max: float) -> None:
    """R=3, one variant a slice 20% slower, two earlier runs kept (``--kept``): each variant's own noise there is
    its prior. At the review's noise the issue's targets hold (found >= 40%, the gate's MDE at the median variant
    <= 55%); at this host's they do not (about 29% and 90%: see docs/measurement.md)."""
    m = Matrix(cells=2, slices=SLICES, seed=7, **noise)
    slowed = one_per_slice(m, 1.2)
    slowed_ids = {(m.cell_names()[c], vid(s, v)) for c, s, v in m.variants() if (c, v) in slowed}
    rng = np.random.default_rng(7)
    found, aa, mdes, history = [], [], [], []
    for _ in range(4):
        changes = judged(m, tmp_path, 3, rng, slower=slowed, kept=2)
        for v in changes:
            if (v.cell_a, v.id) in slowed_ids:
                found.append(v.verdict == "slower")
            else:
                aa.append(v.verdict in ("slower", "faster"))
        mdes.append(gate_mde(changes))
        history += [v.contrast is not None and "kept runs" in v.contrast.prior for v in changes]
    assert np.mean(history) >= 0.90, np.mean(history)
    assert np.mean(aa) <= 0.05, np.mean(aa)
    assert np.mean(found) >= found_min, np.mean(found)
    assert np.median(mdes) <= mde_max, np.median(mdes)


FILE = dict(cells=2, slices=(10, 10), seed=4)      # a user's benchmark file on two cells: 20 variants a cell


@pytest.mark.slow
def test_a_whole_file_20_percent_slower_fails_the_control_gate_and_the_common_move_gate_says_it_cannot(
        tmp_path: Path) -> None:
    """Every variant of the user's file 20% slower, R=3, this host's noise. ``--normalise control`` (each cell's
    move from its containers' reference workload) fails the gate >= 60% of the time (simulated: 82%) and an
    unchanged run about 5%; ``--normalise cell`` takes the slowdown out with the common move (3%) and says so."""
    m = Matrix(**FILE, **MEASURED)
    slowed = {(c, v): 1.2 for c, _, v in m.variants()}
    fails: dict[str, list[bool]] = {"control": [], "cell": [], "unchanged": []}
    rng = np.random.default_rng(40)
    for _ in range(20):
        fails["control"].append(gate_fails(judged(m, tmp_path, 3, rng, "control", slowed)))
        fails["cell"].append(gate_fails(judged(m, tmp_path, 3, rng, "cell", slowed)))
        fails["unchanged"].append(gate_fails(judged(m, tmp_path, 3, rng, "control")))
    assert np.mean(fails["control"]) >= 0.60, fails
    assert np.mean(fails["cell"]) <= 0.10, fails
    assert np.mean(fails["unchanged"]) <= 0.10, fails


def test_the_gate_line_says_whether_a_whole_cell_can_fail_it(tmp_path: Path) -> None:
    m = Matrix(**FILE, **MEASURED)
    rng = np.random.default_rng(41)
    a = write_run(m, tmp_path / "a", 1, 3, rng)
    b = write_run(m, tmp_path / "b", 2, 3, rng, {(c, v): 1.4 for c, _, v in m.variants()})
    cell = compare_paths(a, b).gate_line(0.10)
    assert "; a slowdown of a whole slice or cell cannot fail this gate (its common move is taken out; --normalise " \
           "control judges it against the containers' reference workload); what each cell moved by: syn0-cpu 1." in cell
    assert "3 earlier runs or more (the run archive beside A or B, or --kept) judge a cell's move against how far " \
        "its runs wander" in cell
    control = compare_paths(a, b, normalise="control")
    assert control.gate_line(0.10).endswith("; a whole cell's slowdown is judged against its containers' reference "
                                            "workload")
    assert "each cell's move taken from its containers' reference workload (syn0-cpu " in control.host_line()
    assert control.offenders(0.10)
    assert cli.main(["compare", str(a), str(b), "--normalise", "control", "--fail-on", "slower:10%"]) == 1
    assert cli.main(["compare", str(a), str(b), "--fail-on", "slower:10%"]) == 0     # the common move took it out


def test_a_weak_prior_is_given_per_variant_and_a_strong_one_whole() -> None:
    """``robust_d0``: a prior worth 2x a member's d or more is given whole; a weaker one (variances that differ) keeps
    d0 x the member's upper-tail probability, so a variant far noisier than its mates keeps little of it."""
    strong, weak = Prior(0.01, 40.0), Prior(0.01, 3.0)
    assert robust_d0(strong, 0.2, 4.0) == 40.0
    assert robust_d0(weak, 0.001, 4.0) == pytest.approx(3.0 * special.fdtrc(4.0, 3.0, 0.1))
    assert robust_d0(weak, 0.2, 4.0) < 0.1 * robust_d0(weak, 0.01, 4.0)
    assert fit_prior([0.01, 0.04, 0.005, 0.09, 0.02], [4.0] * 5) is not None     # no longer refused


def test_a_control_needs_two_rounds_a_side_and_kept_runs_give_every_variant_its_own_prior(tmp_path: Path) -> None:
    m = Matrix(cells=1, slices=(6,), seed=1, **MEASURED)
    rng = np.random.default_rng(1)
    one = [load_file(p) for p in write_run(m, tmp_path / "one", 1, 1, rng).glob("*.json")]
    three = [load_file(p) for p in write_run(m, tmp_path / "three", 2, 3, rng).glob("*.json")]
    assert control_move(one[0], three[0]) is None
    move = control_move(three[0], three[0])
    assert move is not None and move[0] == pytest.approx(0.0) and move[2] == 4
    model = history_model([three, three])
    assert model is not None and len(model.variances) == 6
    assert all(d == 4 for _, d in model.variances.values()) and "of 2 kept runs" in model.source


WANDER = dict(wander_median=0.02, wander_p90=0.09)    # real back-to-back pairs, 2026-11-27: 1-4% / 7-10%


@pytest.mark.slow
def test_a_variant_that_wanders_between_runs_is_not_called_different_once_kept_runs_show_its_wander(
        tmp_path: Path) -> None:
    """Each variant put off by its run beyond its rounds (median 2%, 90th percentile 9%: what real pairs show), A/A at
    R=3 with five runs kept: the rounds alone call 6-9% of unchanged variants different (real pairs: 5.0-9.1%); with
    each variant's wander in the kept runs added to its contrast (``run_spread``) at most 5%."""
    m = Matrix(cells=2, slices=SLICES, seed=11, **MEASURED, **WANDER)
    calls: dict[bool, list[bool]] = {False: [], True: []}
    for wander in (False, True):
        rng = np.random.default_rng(11)
        for _ in range(3):
            changes = judged(m, tmp_path, 3, rng, kept=5, wander=wander)
            calls[wander] += [v.verdict in ("slower", "faster") for v in changes]
    assert np.mean(calls[False]) >= 0.06, np.mean(calls[False])
    assert np.mean(calls[True]) <= 0.05, np.mean(calls[True])


def test_run_spread_finds_the_wander_and_leaves_a_steady_variant_at_zero() -> None:
    """Per cell each run's common move comes out first; the rounds' own share is subtracted; a variant far noisier
    between runs than its mates keeps its own estimate (the moderation gives it little of theirs)."""
    steady = {("c", f"v{i}"): (0.01 * i, 0.0001) for i in range(6)}
    runs = []
    for move, off in [(0.0, 0.0), (0.10, 0.05), (-0.05, -0.05), (0.02, 0.0)]:
        run = {key: (mean + move, within) for key, (mean, within) in steady.items()}
        run[("c", "wild")] = (1.0 + move + off, 0.0001)
        runs.append(run)
    spread = run_spread(runs)
    assert spread is not None and spread.runs == 4
    assert spread.variances[("c", "v3")][0] == 0.0
    tau2, d = spread.variances[("c", "wild")]
    own = float(np.var([0.0, 0.05, -0.05, 0.0], ddof=1)) - 0.0001
    assert own * 0.9 < tau2 < own * 1.1 and d >= 3.0
    var, d_pair = spread.of_pair(("c", "wild"), ("c", "wild"))
    assert var == pytest.approx(2 * tau2) and d_pair == pytest.approx(2 * d)
    assert spread.of_pair(("c", "wild"), ("c", "unknown")) is None
    assert run_spread(runs[:1]) is None


def test_compare_takes_the_wander_from_kept_runs_or_from_the_run_archive_beside_but_never_from_a_or_b(
        tmp_path: Path) -> None:
    m = Matrix(cells=1, slices=(6, 6), seed=3, **MEASURED, **WANDER)
    rng = np.random.default_rng(3)
    kept = [write_run(m, tmp_path / f"k{k}", 10 + k, 3, rng) for k in range(3)]
    a = write_run(m, tmp_path / "a", 1, 3, rng)
    b = write_run(m, tmp_path / "b", 2, 3, rng)
    plain = compare_paths(a, b)
    assert plain.spread is None and plain.spread_line().startswith("run-to-run wander: not known")
    with_kept = compare_paths(a, b, kept=kept)
    assert with_kept.spread is not None and with_kept.spread.runs == 3
    assert "run-to-run wander (each variant's, beyond its rounds, from the 3 kept runs) added to " in \
        with_kept.spread_line()
    control = compare_paths(a, b, normalise="control", kept=kept)
    assert control.spread is not None and set(control.spread.levels) == {"syn0-cpu"}
    assert "each cell's move strays from its control's between runs, added to its variants' (--normalise control): " \
        "syn0-cpu " in control.spread_line()
    plain_control = compare_paths(a, b, normalise="control")
    widened = {v.id: v.contrast.extra for v in control.variants if v.contrast is not None}
    assert all(widened[v.id] > v.contrast.extra > 0 for v in plain_control.variants if v.contrast is not None)
    archive = Archive()
    for cells_dir in [*kept, a, b]:          # the report keeps every run, A's and B's too
        cells = load_side(cells_dir)
        model = from_frame(build_frame(cells), str(cells_dir))
        assert model is not None and model.means
        archive, _ = with_cells(archive, cells, [], model)
    assert len(save_archive(a.parent, archive).runs) == 5
    beside = compare_paths(a, b)
    assert beside.spread is not None and beside.spread.runs == 3          # A and B left out
    assert "from the 3 runs of the noise history" in beside.spread_line()
    assert set(beside.run_levels) == {"syn0-cpu"} and beside.run_levels["syn0-cpu"].runs == 3     # and the run level
    assert cli.main(["compare", str(a), str(b)]) == 0


def test_a_smallest_visible_slowdown_past_ten_times_is_said_as_such() -> None:
    """A variant whose interval spans orders of magnitude (torch.compile recompiling in one round a side) printed a
    28-digit percentage in the real P/Q pair; past 10x the gate line says "over 1000%"."""
    from tfmatrix.analysis.compare.result import _mde_text

    assert [_mde_text(x) for x in (0.57, 10.0, 1.7e25)] == ["57%", "1000%", "over 1000%"]
