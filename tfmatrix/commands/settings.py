"""A measuring command's settings: its options merged with matrix.toml's values once (nox's
``merge_noxfile_options``), the run request made from them in one place, and the checkout's lock and the runner
held around the measuring (``measuring``).

The commands read their own options from ``args``; what a run is asked (preset, rounds, schedule, runner,
benchmark paths...) they read from ``RunSettings``, which also carries the loaded matrix, so that nothing is
stored on ``args`` after parsing.
"""
from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.claims.records import Claim
from ..matrix import Cell, Matrix, Settings

if TYPE_CHECKING:
    from rich.console import Console

    from ..execution.request import RunRequest
    from ..runners.base import Runner

# Options that take matrix.toml's value when the user leaves them out: option dest -> its field of ``Settings``.
FROM_MATRIX = {"schedule": "schedule", "variants": "variants", "address": "cluster_address"}
# The options taken as given (None: the request's default, or each cell's own preset and repeats).
AS_GIVEN = ("preset", "seed", "repeats", "processes", "budget")


@dataclass(frozen=True)
class RunSettings:
    """What one measuring command's run is asked: each option as given, matrix.toml's value where the command
    takes the option and the user left it out, the request's default where the command does not take it."""

    matrix: Matrix
    reports: str                        # --reports as given (``output_dir`` checks it where the command is ready)
    runner: str = "auto"
    preset: str | None = None           # None: each cell's own (``run_preset``: the whole run's)
    rounds: int = 1
    sequential: bool = False            # rounds = "auto" (given, or matrix.toml's): ``rounds`` is the cap
    schedule: str = "interleaved"
    variants: str = "all"
    seed: int | None = None
    repeats: int | None = None
    processes: int | None = None
    address: str | None = None          # --runner ray: the cluster
    bench_paths: tuple[Path, ...] = ()  # the user's benchmark files: --bench-path, else matrix.toml's [suite] paths
    families: tuple[str, ...] = ("seeds",)  # the built-in claim families asked: --claims, else matrix.toml's
    claims: tuple[Claim, ...] = ()      # those families' claims and the user's own, checked (``commands.claims``)
    budget: float | None = None         # --budget: the run's seconds (``execution.budget``)

    @classmethod
    def from_args(cls, args: argparse.Namespace, matrix: Matrix) -> RunSettings:
        """Merge the command's options with ``matrix``'s settings; the one place the two meet.

        An option the command does not declare is absent from ``args``; the field keeps its default then.
        """
        given = vars(args)
        s = matrix.settings
        fields: dict[str, Any] = {name: given[name] for name in AS_GIVEN if name in given}
        fields |= {name: given[name] or getattr(s, field) for name, field in FROM_MATRIX.items() if name in given}
        if "rounds" in given:
            fields["rounds"], fields["sequential"] = _rounds(given["rounds"], s)
        # --bench-path where the command takes it, else matrix.toml's [suite] paths (a bisect or explain of a claim
        # over the user's own benchmarks mounts them as the run did)
        fields["bench_paths"] = bench_paths(given.get("bench_path") or (), matrix)
        from .claims import asked_families, claims_of

        fields["families"] = asked_families(given.get("claims"), matrix)
        fields["claims"] = claims_of(matrix, fields["families"], fields["bench_paths"])
        return cls(matrix=matrix, reports=args.reports, runner=args.runner, **fields)

    @property
    def run_preset(self) -> str:
        """The whole run's preset: --preset, else matrix.toml's (bisect's probes and the timeline's releases, made on
        the way, and the claims' focus)."""
        return self.preset or self.matrix.settings.preset

    def request(self, only: tuple[str, ...], **fixed: Any) -> RunRequest:
        """The run's request: these settings, then what the command itself fixes (``fixed``: its schedule, its
        sides...), stamped with what it runs now (``RunRequest.stamped``). The one place a command makes a
        ``RunRequest``."""
        from ..execution.request import RunRequest

        asked = RunRequest(preset=self.preset, only=only, repeats=self.repeats, rounds=self.rounds,
                           schedule=self.schedule, seed=self.seed, bench_paths=self.bench_paths,
                           processes=self.processes, sequential=self.sequential, claims=self.claims,
                           families=() if self.families == ("seeds",) else self.families, budget_s=self.budget)
        return replace(asked, **fixed).stamped()


def _rounds(given: tuple[int, bool] | int | None, settings: Settings) -> tuple[int, bool]:
    """(rounds, sequential): ``--rounds N|auto`` as given (a pair), ``--rounds N`` (a fixed count), else
    matrix.toml's rounds (its "auto" too)."""
    if given is None:
        return settings.rounds, settings.sequential
    if isinstance(given, tuple):
        return given
    return given, False


def bench_paths(given: Sequence[str], matrix: Matrix) -> tuple[Path, ...]:
    """The user's benchmark paths: ``--bench-path`` (relative to the current directory) replaces ``[suite] paths``."""
    from ..matrix.user_benchmarks import check_path

    if not given:
        return matrix.settings.bench_paths
    return tuple(dict.fromkeys(check_path(p, Path.cwd(), f"--bench-path {p}", "the current directory")
                               for p in given))


def claims_focus(variants: str, bench: Sequence[str], user_paths: Sequence[Path], preset: str,
                 claims: Sequence[Claim]) -> tuple[str, ...]:
    """The ids a ``variants = "claims"`` run measures: the catalogue's variants a side of ``claims`` names, at
    ``preset``'s sizes; nothing (the whole preset) when all are asked for, or when the user names benchmarks or
    files."""
    if variants != "claims" or bench or user_paths:
        return ()
    from suite.definitions import PRESETS
    from suite.registry import all_variants

    from ..analysis.stopping import claim_variant_ids

    known = PRESETS.get(preset)
    if known is None:
        return ()
    return tuple(claim_variant_ids(((v.benchmark, v.id, v.as_dict()) for v in all_variants(known)), claims))


class Measuring:
    """What a command holds while it measures: the console, and the runner, made on first use (a timeline whose
    releases earlier cell files all answer starts none)."""

    def __init__(self, settings: RunSettings, console: Console, cells: Sequence[Cell] | None) -> None:
        self.settings, self.console, self.cells = settings, console, cells

    @cached_property
    def runner(self) -> Runner:
        """``--runner``: Docker, local virtualenvs, or (ray) the cluster at ``--address``."""
        from ..runners.choose import make_runner

        s, ms = self.settings, self.settings.matrix.settings
        if s.runner == "ray":
            return make_runner("ray", ms.base_registry, self.console, s.address, ms.cluster_cpus)
        return make_runner(s.runner, ms.base_registry, self.console, cells=self.cells)


@contextmanager
def measuring(settings: RunSettings, console: Console, cells: Sequence[Cell] | None = None) -> Iterator[Measuring]:
    """The checkout's run lock held (``execution.lock``) while the command measures; ``cells``: what will run,
    when the runner's note should know it (``runners.choose.make_runner``)."""
    from ..execution.lock import checkout_lock

    with checkout_lock():
        yield Measuring(settings, console, cells)
