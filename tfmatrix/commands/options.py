"""The options the commands share, each declared once (asv's ``common_args``): where results go, which runner,
how many rounds, the preset, the seed, which variants run, and the option groups of the measuring commands.

A command that needs another default or range says so in its call (``add_rounds(p, fewest=2, default=ROUNDS)``);
the flag, its type and its help's words stay here. What the values become once matrix.toml's are merged in is
``commands.settings``. ``tests/test_cli_options.py`` checks that each shared flag is declared only here.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import paths
from ..matrix import KNOWN_PRESETS
from ..matrix.records import AUTO_ROUNDS, AUTO_ROUNDS_CAP, SCHEDULES, VARIANTS

MOST_ROUNDS = 20        # --rounds N on every command but ab (30)


def _shown(path: Path) -> str:
    """A default directory as the help shows it: relative to the checkout (``reports/ab``)."""
    return str(path.relative_to(paths.REPO_ROOT)) if path.is_relative_to(paths.REPO_ROOT) else str(path)


def add_reports(p: argparse.ArgumentParser, what: str, default: Path = paths.REPORTS_DIR,
                repeatable: bool = False) -> None:
    """``--reports DIR``: the reports directory, and ``what`` the command keeps there ("where ... go").

    ``repeatable``: several directories, read, not written (``disk``); the command applies ``default`` itself.
    """
    p.add_argument("--reports", metavar="DIR", action="append" if repeatable else "store",
                   default=None if repeatable else str(default),
                   help=f"where {what} (default: {_shown(default)}{'; repeatable' if repeatable else ''})")


def add_runner(p: argparse.ArgumentParser, cluster: bool = False) -> None:
    """``--runner``: Docker or local virtualenvs; ``cluster``: also a Ray cluster's (``matrix``, ``cell``)."""
    from ..runners.choose import RUNNERS

    p.add_argument("--runner", default="auto", choices=[r for r in RUNNERS if cluster or r != "ray"],
                   help="auto: Docker when an engine answers, else local virtualenvs (default)"
                        + ("; ray: the cells as tasks on a Ray cluster (--address)" if cluster else ""))


def rounds_or_auto(text: str) -> tuple[int, bool]:
    """``--rounds N`` (a fixed count, 1-20) or ``--rounds auto`` (sequential, up to the cap): (rounds, sequential)."""
    if text == AUTO_ROUNDS:
        return AUTO_ROUNDS_CAP, True
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MOST_ROUNDS:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of rounds from 1 to {MOST_ROUNDS}, or {AUTO_ROUNDS}")
    return value, False


def budget(text: str) -> float:
    """``--budget DURATION`` in seconds (``execution.budget.parse_budget``), refused in argparse's one line."""
    from ..execution.budget import parse_budget

    try:
        return parse_budget(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_rounds(p: argparse.ArgumentParser, fewest: int = 1, most: int = MOST_ROUNDS, default: int | None = None,
               auto: bool = False, then: str = "") -> None:
    """``--rounds N``: rounds of the run, a fresh process each; left out, ``default`` (None: matrix.toml's).

    ``auto`` (``matrix``, ``cell``): also ``--rounds auto``, the value a (rounds, sequential) pair
    (``rounds_or_auto``); ``then``: what else the command does with N, appended to the help.
    """
    shown = str(default) if default is not None else "matrix.toml's rounds, else 3"
    p.add_argument("--rounds", type=rounds_or_auto if auto else int, default=default,
                   choices=None if auto else range(fewest, most + 1), metavar="N|auto" if auto else "N",
                   help=f"measure every variant in N rounds ({fewest}-{most}), a fresh process each, pooled"
                        + ("; auto: after each round only the variants of claim lines still open run again, up to "
                           f"{AUTO_ROUNDS_CAP}" if auto else "") + f" (default: {shown}){then}")


def add_preset(p: argparse.ArgumentParser, default: str = "every cell's own") -> None:
    p.add_argument("--preset", choices=KNOWN_PRESETS, help=f"the suite preset (default: {default})")


def add_seed(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, metavar="N",
                   help="the order's seed (default: a fresh one, recorded in every cell file)")


def add_rows(p: argparse.ArgumentParser, what: str = "variants that moved most", default: int = 20) -> None:
    p.add_argument("--rows", type=int, default=default, metavar="N", help=f"show the N {what} (default {default})")


def add_csv(p: argparse.ArgumentParser, what: str) -> None:
    """``--csv FILE``: the comparison's rows as CSV (``compare``, ``ab``); ``what`` says which."""
    p.add_argument("--csv", metavar="FILE", help=f"write {what}")


def add_redo(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--redo", action="store_true", help=f"measure {what} again, even where earlier cell files answer")


def add_only(p: argparse.ArgumentParser) -> None:
    p.add_argument("--only", action="append", default=[], metavar="GLOB",
                   help="select cells by name (fnmatch glob, repeatable)")


def add_bench(p: argparse.ArgumentParser, old_name: bool = False, one: str = "") -> None:
    """``--bench PATTERN``: which variants the command runs (a glob on variant id), the one name of the filter on
    every command that runs variants (``matrix``, ``cell``, ``duet``, ``ab``, ``sweep``); ``--only`` picks cells.

    ``old_name``: ``--only PATTERN`` is taken too, its old name on ``cell``, ``ab`` and ``sweep`` (as ``report``
    takes ``--out``). ``one``: the command takes a single pattern (``sweep``), ``one`` its help; left out, it is
    ``None`` and the command asks for it.
    """
    kwargs: dict[str, Any] = {"dest": "bench", "metavar": "PATTERN", "action": "store" if one else "append",
                              "default": None if one else []}
    p.add_argument("--bench", help=one or "run only benchmarks matching PATTERN (glob on variant id; repeatable)",
                   **kwargs)
    if old_name:
        p.add_argument("--only", help="deprecated: the old name of --bench", **kwargs)


def fail_on(text: str) -> float:
    """``slower:10%`` (or ``slower:10``) -> 0.10: the gate's threshold on a clear slowdown."""
    kind, _, value = text.partition(":")
    number = value.strip().rstrip("%")
    try:
        threshold = float(number) / 100.0
    except ValueError:
        threshold = -1.0
    if kind != "slower" or not 0.0 <= threshold <= 10.0:
        raise argparse.ArgumentTypeError(f"{text!r}: use slower:PERCENT, e.g. slower:10%")
    return threshold


def gate_head(offenders: Sequence[str], suspects: Sequence[str] = ()) -> list[str]:
    """What every gate prints first (``compare``, ``ab``, ``series``, ``compare`` against an archive): its
    offenders, then its suspects, each a ``tfmatrix: gate:`` line (a CI log's reader wants them first)."""
    return [f"tfmatrix: gate: {line}" for line in (*offenders, *suspects)]


def gate_tail(count: int, threshold: float, against: str = "") -> str:
    """Every gate's last line: how many offenders fail it at the threshold, and what they were judged against."""
    return (f"tfmatrix: gate: {count} offender(s) for --fail-on slower:{threshold:.0%}{against}"
            + (" (listed first)" if count else ""))


def add_fail_on(p: argparse.ArgumentParser, broke: str = "", gate: str = "") -> None:
    """``--fail-on slower:PERCENT``, the CI gate (``compare``, ``ab``; ``series``'s over the kept runs: ``gate``, its
    help); ``broke``: where a broken variant counts."""
    p.add_argument("--fail-on", type=fail_on, metavar="slower:PERCENT",
                   help=gate or f"exit 1 when a variant broke{broke}, or is slower with family-wise confidence (Holm "
                        "over "
                        "every variant compared: an unchanged run fails at most 5%% of the time) and its own 95%% "
                        "interval above 1 + PERCENT (a variant with one process a side: judged against this "
                        "host's measured one-process tail, tfmatrix/data/noise_tails.toml); offenders are printed "
                        "first, then suspects (one process a side: only their t test would fail them), then the "
                        "smallest slowdown the gate could see")


def add_measure_options(p: argparse.ArgumentParser) -> None:
    """The options of the matrix's own runs (``matrix``, ``cell``): each left out takes matrix.toml's value."""
    add_preset(p)
    p.add_argument("--repeats", type=int, help="override the samples per process")
    p.add_argument("--processes", type=int, choices=range(1, 11), metavar="N",
                   help="fresh processes per variant in each round (default: the preset's, 1 for seed and quick); more "
                        "agree better from run to run at N times the suite's time (docs/measurement.md)")
    add_rounds(p, auto=True)
    p.add_argument("--budget", type=budget, metavar="DURATION",
                   help="the run's time budget (8m, 480s, 1h), provisioning and report included: round 1 runs whole; "
                        "a later round runs only where it fits, with --rounds auto the open claim lines that fit, "
                        "cheapest first; what it leaves open says so (a short GPU loan: docs/gpu-without-docker.md)")
    p.add_argument("--variants", choices=VARIANTS,
                   help="claims: only the variants the claims compare (--claims; matrix.toml's default); all: the "
                        "preset's whole catalogue (the questions' and charts' breadth)")
    p.add_argument("--schedule", choices=SCHEDULES,
                   help="interleaved: every cell provisioned first, then one slice of each cell per turn in a random "
                        "order (default); sequential: whole cells one after another, round after round")
    add_seed(p)
    add_runner(p, cluster=True)
    p.add_argument("--address", metavar="ADDRESS",
                   help="--runner ray: the Ray cluster (ray://HEAD:10001, HOST:6379 or auto; default: matrix.toml's "
                        "[cluster] address)")
    add_reports(p, "cells/<cell>.json|.log and index.html go")
    p.add_argument("--bench-path", action="append", default=[], metavar="PATH",
                   help="a directory or .py file of your own benchmarks (docs/own-benchmarks.md), mounted read-only "
                   "into every cell; repeatable; replaces matrix.toml's [suite] paths")


def add_paired_options(p: argparse.ArgumentParser, reports: Path) -> None:
    """The options of the commands that measure two things in one run of their own (``ab``, ``duet``).

    ``reports`` is the default folder, never the matrix's ``reports/cells``.
    """
    add_preset(p)
    add_seed(p)
    add_runner(p)
    add_reports(p, "the run's cell files go, never the matrix's reports/cells", default=reports)
    add_rows(p)
