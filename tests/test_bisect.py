"""``tfmatrix bisect``: the search with fake measurements, the release axes, the targets, the command's errors.

The search is pure (``history.search``): these tests give it measurements as
a function of the release and check which probes it makes and what it
answers. The real bisects run in tests/test_e2e_bisect.py.
"""
from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from tfmatrix import cli
from tfmatrix.analysis.cells import load_dir
from tfmatrix.errors import UserError
from tfmatrix.history.axis import keras_axis, minor_steps, patch_steps, tf_axis
from tfmatrix.history.bisect import Bisection, bisect, package_diff
from tfmatrix.history.search import BAD, GOOD, SKIPPED, UNDECIDED, Measure, classify, search
from tfmatrix.history.targets import bench_target, claim_target, claim_variant_ids
from tfmatrix.matrix.releases import load_table

SLOW, FAST = Measure(24.0, 22.0, 27.0), Measure(0.97, 0.9, 1.04)
SPANS = Measure(4.0, 0.9, 20.0)              # spans sqrt(24 * 0.97) = 4.8
RELEASES = [f"r{i}" for i in range(10)]


def fake(values: dict[str, object], calls: list[tuple[str, int]] | None = None):
    def measure(release: str, attempt: int):
        if calls is not None:
            calls.append((release, attempt))
        v = values[release]
        return v[attempt - 1] if isinstance(v, list) else v
    return measure


def test_a_probe_is_judged_by_which_side_of_the_ends_midpoint_its_whole_interval_lies():
    assert classify(Measure(1.1, 1.0, 1.3), FAST, SLOW) == GOOD
    assert classify(Measure(9.0, 6.0, 12.0), FAST, SLOW) == BAD
    assert classify(SPANS, FAST, SLOW) == UNDECIDED
    # the good end may be the slower one (a claim that should hold): the sides swap
    assert classify(Measure(9.0, 6.0, 12.0), SLOW, FAST) == GOOD


def test_a_monotone_change_is_found_in_a_logarithmic_number_of_probes():
    values = {r: (FAST if i < 6 else SLOW) for i, r in enumerate(RELEASES)}
    calls: list[tuple[str, int]] = []
    out = search(RELEASES, fake(values, calls))
    assert (out.last_good, out.first_bad) == ("r5", "r6") and not out.between
    assert out.measured <= 4 and len(calls) == len(set(calls)) == out.measured + 2
    assert out.boundary_text().startswith("changed between r5 and r6: 0.97x [0.9, 1.04] -> 24.0x [22.0, 27.0]")


def test_a_change_that_is_undone_gives_one_real_boundary():
    pattern = "GGGBBBGGBB"
    values = {r: (FAST if c == "G" else SLOW) for r, c in zip(RELEASES, pattern, strict=True)}
    out = search(RELEASES, fake(values))
    i, j = RELEASES.index(out.last_good), RELEASES.index(out.first_bad)
    assert j == i + 1 and (pattern[i], pattern[j]) == ("G", "B")


def test_an_undecided_probe_is_measured_again_and_then_reported_not_guessed():
    values: dict[str, object] = {r: (FAST if i < 4 else SLOW) for i, r in enumerate(RELEASES)}
    values["r4"] = [SPANS, SPANS]
    calls: list[tuple[str, int]] = []
    out = search(RELEASES, fake(values, calls))
    assert ("r4", 2) in calls
    assert (out.last_good, out.first_bad) == ("r3", "r5")
    assert [(p.release, p.state, p.attempts) for p in out.between] == [("r4", UNDECIDED, 2)]
    assert "r4 undecided" in out.boundary_text()


def test_a_probe_that_decides_on_its_second_measurement_counts_as_decided():
    values: dict[str, object] = {r: (FAST if i < 4 else SLOW) for i, r in enumerate(RELEASES)}
    values["r4"] = [SPANS, Measure(20.0, 18.0, 23.0)]
    out = search(RELEASES, fake(values))
    assert (out.last_good, out.first_bad) == ("r3", "r4")
    assert out.probe("r4").attempts == 2 and out.probe("r4").state == BAD


@pytest.mark.parametrize("reason", ["cannot exist here: no wheel for Python 3.7", "failed: the image did not build"])
def test_a_release_without_a_measurement_is_skipped_and_the_search_goes_on(reason):
    values: dict[str, object] = {r: (FAST if i < 5 else SLOW) for i, r in enumerate(RELEASES)}
    values["r5"] = reason
    out = search(RELEASES, fake(values))
    assert (out.last_good, out.first_bad) == ("r4", "r6")
    assert [(p.release, p.state, p.reason) for p in out.between] == [("r5", SKIPPED, reason)]


def test_ends_that_do_not_differ_or_cannot_be_measured_give_no_boundary_and_say_why():
    same = search(RELEASES, fake({r: FAST for r in RELEASES}))
    assert not same.found and "the ends do not differ" in same.problem and same.measured == 0
    broken = search(RELEASES, fake({**{r: SLOW for r in RELEASES}, "r0": "failed: the image did not build"}))
    assert not broken.found and broken.problem == "the good end r0 has no measurement: failed: the image did not build"


def test_tf_releases_are_walked_minor_by_minor_then_patch_by_patch_from_the_good_end():
    axis = tf_axis(load_table())
    assert axis.exact("2.1", "--good") == "2.1.4" and axis.exact("2.1.0", "--good") == "2.1.0"
    with pytest.raises(UserError, match=r"--bad 2\.50: no TensorFlow release 2\.50 in tfmatrix/data/releases.toml; "
                                        r"use one of 1\.\d+ \.\.\. 2\.\d+"):
        axis.exact("2.50", "--bad")
    assert minor_steps(axis, "2.1.4", "2.0.4") == ["2.1.4", "2.0.4"]
    every = minor_steps(axis, "1.14.0", axis.exact("2.21", "--bad"))
    assert every[0] == "1.14.0" and every[-1].startswith("2.21") and len(every) == 24
    assert patch_steps(axis, "2.1.4", "2.0.4") == ["2.1.4", "2.1.3", "2.1.2", "2.1.1", "2.1.0", "2.0.4"]


def test_tf_releases_with_a_standalone_keras_2_run_with_the_newest_one():
    axis = tf_axis(load_table())
    # the same Keras 2.3.1 from 1.14 to 2.1: a change between those releases is TensorFlow's
    assert axis.spec("1.14.0") == {"tf": "1.14.0", "keras": "2.3.1", "target": "cpu"}
    assert axis.spec("2.1.2") == {"tf": "2.1.2", "keras": "2.3.1", "target": "cpu"}
    assert axis.spec("2.2.3") == {"tf": "2.2.3", "target": "cpu"}     # no standalone Keras 2 for 2.2+


def test_keras_releases_run_on_a_tf_that_accepts_the_older_end():
    table = load_table()
    axis = keras_axis(table, None, "3.3")
    assert axis.tf.startswith("2.17") and axis.exact("3.3", "--good") == "3.3.3"
    assert axis.spec("3.5.0") == {"tf": axis.tf, "keras": "3.5.0", "target": "cpu"}
    assert "3.12.4" in minor_steps(axis, "3.3.3", "3.12.4") and len(minor_steps(axis, "3.3.3", "3.12.4")) == 10
    with pytest.raises(UserError, match=r"--tf 2\.9: TF 2\.9 does not run Keras 3"):
        keras_axis(table, "2.9", "3.3")


def test_a_claim_runs_only_the_variants_that_decide_it():
    ids = claim_variant_ids(claim_target("predict_slower_after_compile", "seed").claim, "seed")
    assert ids and all(i.startswith("inference.tiny[") and "path=predict," in i and "mode=eager" in i for i in ids)
    assert {("stage=compiled" in i, "stage=uncompiled" in i) for i in ids} == {(True, False), (False, True)}
    with pytest.raises(UserError, match=r"--claim predict_slower: no such claim; did you mean "
                                        r"predict_slower_after_compile\?"):
        claim_target("predict_slower", "seed")
    with pytest.raises(UserError, match="compares two cells"):
        claim_target("tf1_faster_train_on_batch", "seed")
    with pytest.raises(UserError, match=r"--bench nope: no variant with this id in the seed preset"):
        bench_target("nope", "seed")


def golden_cells(tmp_path: Path):
    with tarfile.open(Path(__file__).parent / "golden" / "default-matrix.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    cells = next(p for p in tmp_path.rglob("cells") if p.is_dir())
    return {c.name: c for c in load_dir(cells).cells}


def test_a_claims_ratio_and_a_variants_time_are_read_from_real_cell_files(tmp_path):
    """Tied to the suite's real output: the golden quick run of the default matrix."""
    cells = golden_cells(tmp_path)
    target = claim_target("predict_slower_after_compile", "quick")
    slow = target.measure(cells["tf2.0-keras2.3.1-cpu"])
    # the golden run measured one process a variant: no interval, so no measure a bisection could step on
    assert isinstance(slow, str) and slow.startswith("not enough replication")
    from suite.definitions import PRESETS
    from suite.registry import all_variants

    quick = {v.id for v in all_variants(PRESETS["quick"])}
    variant = next(r["id"] for r in cells["tf2.1-cpu"].results.records if r["status"] == "ok" and r["id"] in quick)
    t = bench_target(variant, "quick").measure(cells["tf2.1-cpu"])
    assert isinstance(t, str) and "not enough replication" in t
    diff = {name: (a, b) for name, a, b in package_diff(cells["tf2.0-keras2.3.1-cpu"], cells["tf2.1-cpu"])}
    tf = [pair for name, pair in diff.items() if name in ("tensorflow", "tensorflow-cpu")]
    assert ("2.0.4", "-") in tf or any(a.startswith("2.0") and b.startswith("2.1") for a, b in tf), diff


def test_patches_are_walked_only_between_the_two_releases_the_minors_left():
    axis = tf_axis(load_table())
    truth = {"2.0.4": SLOW, "2.1.0": FAST, "2.1.1": FAST, "2.1.2": FAST, "2.1.3": FAST, "2.1.4": FAST}
    asked: list[tuple[str, int]] = []
    target = claim_target("predict_slower_after_compile", "seed")
    result = bisect(target, axis, "2.1.4", "2.0.4", fake(truth, asked), patches=True)
    assert (result.final.last_good, result.final.first_bad) == ("2.1.0", "2.0.4")
    assert len(asked) == len(set(asked)), "a release measured once serves both searches"
    assert [p.release for p in result.path][:2] == ["2.1.4", "2.0.4"]
    doc = json.loads(json.dumps(result.to_json()))
    assert doc["found"] and doc["answer"].startswith("changed between 2.1.0 and 2.0.4")
    assert any(line.startswith("answer: changed between 2.1.0 and 2.0.4") for line in result.lines())
    assert isinstance(result, Bisection)


@pytest.mark.parametrize(("argv", "message"), [
    (["--claim", "nope", "--good", "2.1", "--bad", "2.0"], "--claim nope: no such claim"),
    (["--claim", "predict_slower_after_compile", "--good", "2.50", "--bad", "2.0"], "--good 2.50: no TensorFlow"),
    (["--claim", "predict_slower_after_compile", "--good", "2.1", "--bad", "2.1.4"], "are the same release"),
    (["--claim", "predict_slower_after_compile", "--good", "2.1", "--bad", "2.0", "--tf", "2.16"],
     "--tf: only with --axis keras"),
])
def test_bad_bisect_input_is_one_line_and_exit_2(capsys, argv, message):
    assert cli.main(["bisect", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if not line.startswith("tfmatrix: warning: ")]    # the matrix's own notes
    assert len(errors) == 1 and errors[0].startswith("tfmatrix: error: ") and message in errors[0]


def test_the_opening_estimate_counts_only_the_variants_a_probe_runs(tmp_path):
    from tfmatrix.execution import estimates as execution
    from tfmatrix.execution.request import RunRequest
    from tfmatrix.matrix import load

    cell = load().cell("tf2.1-cpu")
    ids = claim_target("predict_slower_after_compile", "seed").variant_ids
    assert execution.selected_share("seed", ()) == 1.0
    assert 0 < execution.selected_share("seed", ids) <= 0.05
    whole_request, probe_request = RunRequest(preset="seed"), RunRequest(preset="seed", only=ids)
    last = execution.last_runs(tmp_path, [cell.name])
    whole = execution.cell_estimates([whole_request.job(cell)], whole_request, last)[cell.name]
    probe = execution.cell_estimates([probe_request.job(cell)], probe_request, last)[cell.name]
    assert probe < whole / 2


def test_a_claim_target_measures_the_tf_setups_only_and_names_each_side_right() -> None:
    """A bisect walks TF releases: the JAX/PyTorch answers' variants (api=keras, api=backend) are not its target,
    and a two-variant target lists the claim's A side first, so that ``why`` names each side (the uncompiled predict
    was once called "predict after compile")."""
    from tfmatrix.history.targets import claim_target
    from tfmatrix.history.why import side_names

    t = claim_target("predict_slower_after_compile", "seed")
    assert len(t.variant_ids) == 2 and "stage=compiled" in t.variant_ids[0] and "stage=uncompiled" in t.variant_ids[1]
    names = side_names(t)
    assert names[t.variant_ids[0]].startswith("predict after compile (") and "stage=compiled" in names[t.variant_ids[0]]
    assert names[t.variant_ids[1]].startswith("predict before compile (")
    matmul = claim_target("tf_matmul_faster_than_np_dot", "seed").variant_ids
    assert len(matmul) == 2 and "api=tf," in matmul[0] and "api=numpy" in matmul[1]
    for key in ("fit_slower_than_train_on_batch", "call_and_predict_on_batch_fix", "einsum_faster_than_loop"):
        assert not [v for v in claim_target(key, "seed").variant_ids if "api=keras," in v or "api=backend" in v], key
