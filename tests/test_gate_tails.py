"""The gate's one-process tail: a variant measured in one process a side is judged against this host's measured null.

On seven back-to-back pairs of unchanged default runs, one in seven failed
``compare --fail-on slower:10%`` with three runs kept: two variants measured
in one process a side, 1.26x and 1.34x (normal scores 5.2 and 3.8), where
Holm over ~200 variants asks for 3.5. Their scores follow a Student t of ~3
degrees of freedom, not N(0, 1) (``statistics.tails``; the table
``tfmatrix/data/noise_tails.toml``; the figures in docs/measurement.md).
"""
from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest
from host_noise import HOST
from matrix_model import Matrix, gate_fails, judged

from tfmatrix.analysis.compare.result import SUSPECT, CompareResult, VariantChange
from tfmatrix.analysis.statistics.inference import Contrast, ratio_ci
from tfmatrix.analysis.statistics.multiplicity import gate, one_unit
from tfmatrix.analysis.statistics.tails import TABLE_PATH, Null, fit_null, one_process, score

NULL = Null(2.95, 0.48)
SE = 0.045


def contrast(z: float, rounds: int = 1, se: float = SE) -> Contrast:
    """B/A at normal score ``z`` (large df: score = t), ``rounds`` processes a side, standard error ``se``."""
    c = 2.0 / rounds
    return Contrast(log_ratio=z * se, s2=se ** 2 / c, d=1e6, c=c, n_a=rounds, n_b=rounds, paired=False)


def family(*odd: Contrast, unchanged: int = 199) -> list[Contrast]:
    return list(odd) + [contrast(0.0, rounds=3) for _ in range(unchanged)]


def test_a_one_process_variant_that_strays_as_this_hosts_processes_do_is_a_suspect_not_an_offender() -> None:
    """P/Q's tf2.16-tf_keras fit: 1.26x at a score of 5.2, one process a side, among ~200 variants."""
    stray = contrast(5.2)
    assert math.isclose(score(stray), 5.2, abs_tol=1e-3) and one_unit(stray)
    assert gate(family(stray), 0.10)[0].fails                       # the t test alone: an offender
    call = gate(family(stray), 0.10, one_process=NULL)[0]
    assert not call.fails and call.suspect and call.tail


def test_the_same_score_measured_in_rounds_still_fails_and_is_not_judged_by_the_tail() -> None:
    call = gate(family(contrast(5.2, rounds=3)), 0.10, one_process=NULL)[0]
    assert call.fails and not call.tail and not call.suspect


def test_a_large_slowdown_of_a_one_process_variant_still_fails_the_gate() -> None:
    """2.5x at a 4.5% standard error (score 20): far beyond any stray process measured."""
    big = contrast(math.log(2.5) / SE)
    call = gate(family(big), 0.10, one_process=NULL)[0]
    assert call.fails and not call.suspect


def test_a_slowdown_far_past_any_stray_fails_however_many_variants_are_gated() -> None:
    """5x at a 4.5% standard error (score 36) among 501 variants: its score is not cut at ~8.2 (it was, read from
    the lower tail of the t distribution, and Holm over 501 then let it pass)."""
    big = contrast(math.log(5.0) / SE)
    assert score(big) > 30
    call = gate(family(big, unchanged=500), 0.10, one_process=NULL)[0]
    assert call.fails and not call.suspect


def test_the_gate_says_what_the_tail_costs_a_one_process_variant() -> None:
    """The slowdown it finds 80% of the time is larger under the measured tail, and stated so."""
    nominal = gate(family(contrast(0.0)), 0.10)[0].mde
    tailed = gate(family(contrast(0.0)), 0.10, one_process=NULL)[0].mde
    assert tailed > nominal * 1.5
    replicated = contrast(0.0, rounds=3)
    assert gate(family(replicated), 0.10, one_process=NULL)[0].mde == gate(family(replicated), 0.10)[0].mde


def test_fit_null_recovers_a_seeded_students_t_and_a_normal() -> None:
    rng = np.random.default_rng(4)
    fitted = fit_null(list(0.5 * rng.standard_t(3.0, 3000)))
    assert fitted is not None and 2.3 < fitted.df < 4.0 and 0.43 < fitted.scale < 0.57
    normal = fit_null(list(rng.normal(0.0, 1.0, 3000)))
    assert normal is not None and normal.df > 20 and 0.95 < normal.scale < 1.05
    assert fit_null([0.1] * 49) is None


def test_the_table_is_what_the_gate_uses_and_says_where_it_came_from() -> None:
    table = tomllib.loads(TABLE_PATH.read_text())["one_process"]
    null = one_process()
    assert (null.df, null.scale) == (table["df"], table["scale"])
    assert "back-to-back pairs" in null.source and "P/Q" in null.source
    assert 2 < null.df < 10 and 0 < null.scale < 1     # heavier tails than normal, a narrower middle: as measured


def variant(c: Contrast, name: str) -> VariantChange:
    ci = ratio_ci(c)
    return VariantChange("syn-cpu", "syn-cpu", name, "syn.bench", 1.0, c.ratio, ci, ci.noise, c)


def test_compare_prints_a_suspect_apart_and_its_gate_line_names_the_tail() -> None:
    result = CompareResult("A", "B", [variant(c, f"v{i}") for i, c in enumerate(family(contrast(5.2)))], [])
    assert result.offenders(0.10) == []
    [suspect] = result.suspects(0.10)
    assert suspect.startswith(f"suspect ({SUSPECT}): syn-cpu: v0: 1.264x")
    line = result.gate_line(0.10)
    assert "1 variant(s) measured in one process a side are judged against this host's one-process tail" in line
    assert "noise_tails.toml" in line


@pytest.mark.slow
def test_on_the_real_path_heavy_tailed_one_process_runs_fail_the_t_gate_and_not_the_tailed_one(
        tmp_path: Path) -> None:
    """A/A through files, frame, ``variant_changes`` and the gate: A and B in one process (as a default run
    decides most lines in round 1), three runs kept before them in three rounds, rounds' noise Student t with 3
    df at this host's spread. The t test's gate fails a fifth of unchanged pairs or more; the table's null at most
    the 5% it promises."""
    m = Matrix(cells=2, slices=(5, 12, 20, 35), seed=3, sigma_median=HOST[0], sigma_p90=HOST[1], tail_df=3.0,
               wander_median=0.02, wander_p90=0.09)
    rng = np.random.default_rng(5)
    nominal = tailed = 0
    runs = 20
    for _ in range(runs):
        changes = judged(m, tmp_path, 1, rng, kept=3, kept_rounds=3)
        nominal += gate_fails(changes)
        tailed += gate_fails(changes, one_process=one_process())
    assert nominal / runs >= 0.20, nominal
    assert tailed / runs <= 0.05, tailed
