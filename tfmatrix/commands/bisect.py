"""The ``bisect`` command: which release changed a claim (or one variant's time), then the report.

Reads the options into the search's inputs (the target, the release axis,
the two ends), holds the checkout's run lock while ``history.bisect``
measures the probes, profiles the last good and first bad release to say
where it changed (``history.why``; ``--no-explain`` skips it), prints the
answer and where it was written, and rebuilds the report beside it (its
"When did it change" section).
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError
from ..history.axis import AXES, Axis, release_axis
from .common import load_matrix, output_dir, then_report
from .options import add_preset, add_reports, add_rounds, add_runner
from .settings import RunSettings, measuring

if TYPE_CHECKING:
    from rich.console import Console

    from ..history.targets import Target
    from ..matrix import Settings
    from ..runners.base import Runner


def _axis(args: argparse.Namespace) -> Axis:
    """The releases to walk: TF's (default), Keras 3's on one TF from the older end on (``--axis keras``), or a
    backend's under one Keras 3 that is tested on the older end (``--axis jax|torch``)."""
    older = min(args.good, args.bad, key=lambda v: [int(x) for x in re.findall(r"\d+", v)])
    return release_axis(args.axis, args.tf, older, args.keras)


def _bisect(args: argparse.Namespace, settings: RunSettings) -> int:
    """``python -m tfmatrix bisect (--claim NAME | --bench ID) --good A --bad B [--axis tf|keras] [--patches]``."""
    from ..history.bisect import Prober, bisect, relative, with_evidence, write_answer
    from ..history.targets import bench_target, claim_target
    from ..progress import stderr_console

    console = stderr_console()
    matrix = settings.matrix
    preset = settings.run_preset
    from ..analysis.claims.files import every_builtin
    from .claims import own_of

    axis = _axis(args)
    target = (claim_target(args.claim, preset, every_builtin() + own_of(settings.claims), settings.bench_paths,
                           axis.backend)
              if args.claim else bench_target(args.bench, preset, settings.bench_paths))
    good, bad = axis.exact(args.good, "--good"), axis.exact(args.bad, "--bad")
    if good == bad:
        raise UserError(f"--good {args.good} and --bad {args.bad} are the same release ({good}); name two")
    reports = output_dir(settings.reports, "--reports")
    # every probe a fixed number of rounds (matrix.toml's "auto" gives its cap); one preset for every release
    request = settings.request(target.variant_ids, preset=preset, schedule="interleaved", sequential=False)
    with measuring(settings, console) as session:
        runner = session.runner
        prober = Prober(axis, target, matrix.settings, runner, request, reports, console)
        result = with_evidence(bisect(target, axis, good, bad, prober, args.patches), prober)
        final = result.final
        if args.explain and final.found and final.last_good and final.first_bad:
            result.why = boundary_why(axis, target, final.last_good, final.first_bad, matrix.settings, runner,
                                      reports, console, preset)
    path = write_answer(result, reports)
    for line in result.lines():
        print(line)
    print(f"written: {relative(path)}")
    return 0 if result.final.found else 1


def boundary_why(axis: Axis, target: Target, last_good: str, first_bad: str, settings: Settings, runner: Runner,
                 reports: Path, console: Console, preset: str) -> list[str]:
    """The boundary explained (``history.why``), or why its cells cannot be profiled."""
    from ..history.probes import probe_cell
    from ..history.why import explain_boundary

    cells = []
    for release in (last_good, first_bad):
        cell = probe_cell(axis, release, settings)
        if isinstance(cell, str):
            return [f"{axis.what} {release}: could not profile: {cell}"]
        cells.append((release, cell))
    return explain_boundary(target, axis.what, cells, runner, reports, console, preset)


def cmd_bisect(args: argparse.Namespace) -> int:
    """Which release changed a claim or a variant (``tfmatrix.history.bisect``), then the report."""
    settings = RunSettings.from_args(args, load_matrix(args))
    return then_report(settings.reports, settings.matrix, _bisect(args, settings))


def configure_bisect(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--claim", metavar="NAME", help="a claim of the report's Claims section (its key, e.g. "
                      "predict_slower_after_compile): bisect its ratio in the seed's configuration")
    what.add_argument("--bench", metavar="ID", help="one variant id: bisect its time (probes minutes apart: "
                      "prefer a claim, whose ratio is taken inside one cell)")
    p.add_argument("--good", required=True, metavar="RELEASE", help="a release where it is as it should be "
                   "(2.1 = its newest patch, or an exact 2.1.0)")
    p.add_argument("--bad", required=True, metavar="RELEASE", help="a release where it changed (older or newer)")
    p.add_argument("--axis", choices=AXES, default="tf",
                   help="tf: TensorFlow releases (default); keras: Keras 3 releases on one TF (--tf); jax, torch: "
                        "the backend's releases under one Keras 3 (--keras)")
    p.add_argument("--tf", metavar="RELEASE", help="--axis keras: the TF the Keras releases run on (default: the "
                   "newest that accepts the older end)")
    p.add_argument("--keras", metavar="VERSION", help="--axis jax|torch: the Keras 3 release (exact) the backend "
                   "releases run under (default: the newest whose CI tests the older end)")
    p.add_argument("--patches", action="store_true",
                   help="after the minor releases, walk the patch releases between the two it left")
    add_preset(p, default="matrix.toml's, seed")
    add_rounds(p, then="; per probe: an undecided probe is measured again with 2N")
    p.add_argument("--no-explain", dest="explain", action="store_false",
                   help="do not profile the last good and first bad release to say where it changed (tfmatrix "
                        "explain; a run of its own, about a minute a release)")
    add_runner(p)
    add_reports(p, "probes' cell files (DIR/releases/cells) and answers (DIR/bisect) go")
