"""The verdicts' figures: the statistics review's acceptance table, with more repetitions than the tests.

Seeded runs with known variance components (``tests/verdict_model.py``: the
review's generator) go through ``analysis.statistics.moderation.judge``, the rule every
verdict uses, and ``analysis.statistics.multiplicity.gate``. The scenarios are
``tests/verdict_scenarios.py``'s, the ones ``tests/test_verdict_acceptance.py``
asserts on. Deterministic (fixed seeds): the numbers in docs/measurement.md
("Verdicts") come from this script.

    python scripts/bench_verdicts.py            # every row, about 3 minutes on 2 cores
    python scripts/bench_verdicts.py A1 G2      # some rows (A1 and A2, G1 to G3 and R1 and R2 come together)
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from verdict_scenarios import (  # noqa: E402
    MODEL,
    aa_rates,
    coverage,
    gate_false_alarms,
    gate_power,
    masking,
    one_process,
    one_process_with_noise_model,
    power,
    run_level,
)

from tfmatrix.analysis.statistics.inference import verdict  # noqa: E402


def row(name: str, setting: str, goal: str, value: str) -> None:
    print(f"| {name} | {setting} | {goal} | {value} |", flush=True)


def a1_a2() -> None:
    for normalise in (False, True):
        for r in (2, 3, 5, 10):
            overall, by_decile = aa_rates(r, normalise, reps=100)
            row("A1/A2", f"A/A, R={r}, {'per-cell normalised' if normalise else 'as measured'}",
                "2-6%; every noise decile <= 8%", f"{overall:.1%}; worst decile {by_decile.max():.1%}")


def a3() -> None:
    for r in (3, 5, 10):
        row("A3", f"coverage of the 95% interval, R={r}", "93-97%", f"{coverage(r, reps=60):.1%}")


def p1() -> None:
    for r, change in ((3, 0.20), (10, 0.10)):
        row("P1", f"one variant per benchmark {change:.0%} slower, sigma 7%, R={r}", ">= 80%",
            f"{power(r, change, list(range(0, 200, 20)), 150, 4):.1%}")


def p2() -> None:
    found = [power(r, 0.05, list(range(0, 200, 4)), 30, 5, MODEL) for r in (3, 10, 30)]
    row("P2", "5% slower, R = 3 / 10 / 30", "non-decreasing", " / ".join(f"{x:.0%}" for x in found))


def p3() -> None:
    row("P3", "40% slower in 1% / 10% / 30% of variants, R=3", "within 5 points",
        " / ".join(f"{x:.1%}" for x in masking(reps=600, least=10).values()))


def g1_g2_g3() -> None:
    for r in (3, 10):
        row("G1", f"gate slower:10%, 50 variants, A/A, R={r}", "<= 5% of runs", f"{gate_false_alarms(r, 400):.1%}")
    fails, mde = gate_power(400)
    row("G2", "one variant 1.3x slower, sigma 7%, R=3", ">= 75%; printed MDE <= 35%", f"{fails:.1%}; MDE {mde:.0%}")
    normalised, plain = run_level(400)
    row("G3", "run-level sd 5% a side, A/A, R=3", "G1 holds when normalised per cell",
        f"gate fails {normalised:.1%} of runs normalised; as measured {plain:.1%} of variants called different")


def r1_r2() -> None:
    cs = one_process()
    row("R1", "R=1, no noise model, every variant 40% slower", "no verdicts",
        f"{sum(verdict(c) in ('a', 'b') for c in cs)} verdicts of {len(cs)}")
    overall, by_decile = one_process_with_noise_model(reps=60)
    row("R2", "R=1 with the noise model of a 3-round run, A/A", "A1 and A2 hold",
        f"{overall:.1%}; worst decile {by_decile.max():.1%}")


ROWS: dict[str, Callable[[], None]] = {"A1": a1_a2, "A2": a1_a2, "A3": a3, "P1": p1, "P2": p2, "P3": p3,
                                       "G1": g1_g2_g3, "G2": g1_g2_g3, "G3": g1_g2_g3, "R1": r1_r2, "R2": r1_r2}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rows", nargs="*", metavar="ROW", type=str.upper,
                   help=f"the rows to measure ({', '.join(ROWS)}; default: every row)")
    args = p.parse_args(argv)
    unknown = [r for r in args.rows if r not in ROWS]
    if unknown:
        p.error(f"no row {unknown[0]}; choose from {', '.join(ROWS)}")
    print("| # | setting | goal | measured |\n|---|---|---|---|")
    for fn in dict.fromkeys(ROWS[r] for r in args.rows or ROWS):
        fn()
    return 0


if __name__ == "__main__":
    sys.exit(main())
