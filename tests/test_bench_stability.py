"""``scripts/bench_stability.py`` (two runs of the matrix, and what agrees between them), without the runs.

The runs take Docker and most of an hour, so they are not run here (its ``--help`` is ``test_scripts``'): the
commands it would run parse with tfmatrix's own parser, and every read of two runs (``scripts/stability_reads.py``)
gives its lines on two synthetic runs of two cells of one interleaved run, the variants of each window-mates.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from report_docs import noisy, record, write_interleaved_cell
from scripts_loader import load_script

from tfmatrix import cli

ROOT = Path(__file__).resolve().parent.parent


stability = load_script("bench_stability")
reads, runs = sys.modules["stability_reads"], sys.modules["stability_runs"]


def test_the_commands_it_runs_are_tfmatrix_commands() -> None:
    """Cells by ``--only GLOB`` (matrix), variants by ``--bench PATTERN`` (matrix, duet): tfmatrix parses each."""
    parser = cli.build_parser()
    args = stability.parser().parse_args(["--only", "tf2.15-cpu", "--only", "tf2.21-*", "--bench", "inference.*",
                                          "--rounds", "2", "--preset", "seed", "--processes", "2",
                                          "--schedule", "sequential"])
    parsed = parser.parse_args(runs.matrix_command(Path("/tmp/w/run1"), args))
    assert parsed.command == "matrix" and parsed.only == ["tf2.15-cpu", "tf2.21-*"]
    assert parsed.bench == ["inference.*"] and parsed.redo and parsed.reports == "/tmp/w/run1"
    for kind, cmd in runs.duet_commands("tf2.15-cpu", "tf2.21-keras3-cpu", args).items():
        parsed = parser.parse_args([*cmd, "--reports", f"/tmp/w/{kind}1"])
        assert parsed.command == {"interleaved": "matrix", "duet": "duet"}[kind]
        assert parsed.bench == ["inference.*"] and parsed.preset == "seed" and parsed.rounds in (2, (2, False))


TINY = {"model": "tiny", "batch": 8, "api": "tf.keras", "mode": "eager"}
TIMES = {("predict", "uncompiled"): 1e-3, ("predict", "compiled"): 30e-3, ("call", "compiled"): 0.5e-3}
MOOD = (1.0, 1.3, 0.9)          # each round's host: every variant of a cell in it alike (window-mates)


def _run(cells_dir: Path, seed: int) -> Path:
    """Two cells of one interleaved run, three rounds, the questions' inference variants window-mates in each."""
    for k, name in enumerate(("tf2.15-cpu", "tf2.21-cpu")):
        recs = []
        for i, ((path, stage), t) in enumerate(TIMES.items()):
            per_process = [noisy(t * MOOD[r] * (1.2 if k else 1.0), spread=0.01, seed=seed + 10 * i + r + 100 * k)
                           for r in range(3)]
            rec = record("inference.tiny", {**TINY, "path": path, "stage": stage}, per_process=per_process,
                         seed="001")
            rec["schedule"] = {"windows": [f"slice0-{seed}:{r}" for r in range(3)], "rounds": [9] * 3,
                               "stopped": ["repeats"] * 3, "passes": [1, 2, 3]}
            recs.append(rec)
        write_interleaved_cell(cells_dir / f"{name}.json", recs, name, rounds=3, seed=seed)
    return cells_dir


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    work = tmp_path_factory.mktemp("stability")
    return _run(work / "run1", 1), _run(work / "run2", 2)


@pytest.mark.slow
def test_every_read_of_two_runs_gives_its_lines(two_runs: tuple[Path, Path]) -> None:
    run1, run2 = two_runs
    lines = reads.attribution(run1, run2)
    assert len(lines) == len(reads.estimators([[1.0, 2.0]])) + 2
    assert lines[-2].startswith("comparisons, window-mates paired process by process, cells round by round: 4 in both")
    assert lines[-1].startswith("comparisons, every ratio unpaired (two samples of rounds): 4 in both")
    cross = reads.cross_cell_ratios(run1, run2)
    assert [line.split(":")[0] for line in cross] == ["cross-cell ratios as the report computes them",
                                                      "cross-cell ratios of the two cells' times (unpaired)"]
    assert all(f"{len(TIMES)} in both" in line for line in cross), cross
    assert reads.cell_shifts(run1, run2).startswith("per-cell median run2/run1: tf2.15-cpu ")
    assert reads.claims_agreement(run1, run2).startswith("Claims lines in both runs: ")
    injected = reads.injected(run1, run2)
    assert injected[0].startswith("normalise=none: a 10% slowdown called slower in ") and len(injected) == 6
    assert [line.split(":")[0] for line in reads.false_alarms(run1, run2)] == [
        f"A/A, normalise={mode}" for mode in ("none", "cell", "host", "run")]
    assert reads.overhead_ns(run1) == []                    # no selfcheck.overhead in these runs


def test_slowing_a_run_copies_its_cells_and_names_what_it_slowed(two_runs: tuple[Path, Path]) -> None:
    from tfmatrix.analysis.cells import load_dir

    cells = load_dir(two_runs[1]).cells
    before = [v.per_process for c in cells for v in c.variants]
    slow, hit = reads.slowed(cells, 1.2, every=5)
    assert len(hit) == 2                                   # each cell's first record (every fifth: 0 of 0-2)
    assert [v.per_process for c in cells for v in c.variants] == before      # the loaded cells are untouched
    moved = [v for c in slow for v in c.variants if (c.name, v.id) in hit]
    assert all(v.per_process[0][0] > 1.19 * b.per_process[0][0]
               for v, b in zip(moved, [v for c in cells for v in c.variants if (c.name, v.id) in hit], strict=True))


def test_the_questions_read_unpaired_keep_their_ratios_and_lose_their_pairing(two_runs: tuple[Path, Path]) -> None:
    """The seam ``attribution`` measures the pairing by (``compare_cells(..., paired=False)``, down to
    ``pairing.comparison_cis``): the same lines and ratios, each from two independent samples of rounds."""
    from tfmatrix.analysis.cells import load_dir
    from tfmatrix.analysis.claims.answers import compute_claims
    from tfmatrix.analysis.claims.files import questions
    from tfmatrix.analysis.compare.sets import compare_cells
    from tfmatrix.analysis.frame import build_frame

    cells = load_dir(two_runs[0]).cells
    df = build_frame(cells)
    paired, apart = ([ln.comparison for r in compute_claims(df, cells, questions(), paired=flag) for c in r.cells
                      for ln in c.lines] for flag in (True, False))
    assert len(paired) == len(apart) == 4
    for p, a in zip(paired, apart, strict=True):
        assert (p.config, p.group) == (a.config, a.group) and a.ci.ratio == pytest.approx(p.ci.ratio, rel=1e-9)
        assert p.ci.paired and p.ci.rounds == 3 and not a.ci.paired
    both = [compare_cells(cells, cells, "A", "B", paired=flag).comparisons for flag in (True, False)]
    assert [(c.config, c.group) for c in both[0]] == [(c.config, c.group) for c in both[1]]
    assert [c.ratio_a for c in both[1]] == pytest.approx([c.ratio_a for c in both[0]], rel=1e-9)
