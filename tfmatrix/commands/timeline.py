"""The ``timeline`` command: every one-cell claim across every TF minor release (or Keras 3's, JAX's or
PyTorch's), then the report.

Reads the options into the releases and the request, lets
``history.timeline`` reuse what earlier cell files answer and measure the
rest (under the checkout's run lock), prints where each claim's verdict
changed, and rebuilds the report beside it (its Timeline section).
"""
from __future__ import annotations

import argparse

from ..history.axis import AXES, release_axis
from .claims import add_claims
from .common import load_matrix, output_dir, then_report
from .options import add_preset, add_redo, add_reports, add_rounds, add_runner
from .settings import RunSettings, measuring


def _timeline(args: argparse.Namespace, settings: RunSettings) -> int:
    """Measure (or reuse) one cell per release, then write the timeline and print where verdicts changed."""
    from ..history import timeline
    from ..history.axis import minor_steps
    from ..progress import stderr_console

    console = stderr_console()
    matrix = settings.matrix
    preset = settings.run_preset
    axis = release_axis(args.axis, args.tf, args.first or ("3.0" if args.axis == "keras" else ""), args.keras)
    minors = timeline.minor_releases(axis)
    first = axis.exact(args.first or minors[0], "--from")
    last = axis.exact(args.last or minors[-1], "--to")
    releases = minor_steps(axis, first, last)
    reports = output_dir(settings.reports, "--reports")
    claims = settings.claims
    ids = timeline.selection(preset, claims, settings.bench_paths, axis.backend)
    # every release a fixed number of rounds (matrix.toml's "auto" gives its cap), at one preset
    request = settings.request(ids, preset=preset, schedule="interleaved", sequential=False)
    answered, to_run = timeline.reuse(axis, releases, matrix.settings, reports, ids, redo=args.redo, claims=claims)
    console.print(f"\\[tfmatrix] timeline: {len(releases)} {axis.what} releases, {len(ids)} variants each; "
                  f"{len(releases) - len(to_run)} read from earlier cell files, {len(to_run)} to measure")
    with measuring(settings, console) as session:
        if to_run:
            answered.update(timeline.measure(to_run, session.runner, request, reports, console, claims))
    points = [p for r in releases for p in answered[r]]
    json_path, csv_path = timeline.write(points, axis, releases, preset, reports, claims)
    for line in timeline.summary_lines(points, claims):
        print(line)
    print(f"written: {json_path}, {csv_path}")
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    """Every claim across every release (``tfmatrix.history.timeline``), then the report."""
    settings = RunSettings.from_args(args, load_matrix(args))
    return then_report(settings.reports, settings.matrix, _timeline(args, settings))


def configure_timeline(p: argparse.ArgumentParser) -> None:
    p.add_argument("--axis", choices=AXES, default="tf",
                   help="tf: every TensorFlow minor release (default); keras: every Keras 3 release on one TF (--tf); "
                        "jax, torch: every minor release of the backend under one Keras 3 (--keras)")
    p.add_argument("--tf", metavar="RELEASE", help="--axis keras: the TF the Keras releases run on")
    p.add_argument("--keras", metavar="VERSION", help="--axis jax|torch: the Keras 3 release (exact) the backend "
                   "releases run under (default: the newest whose CI tests the oldest)")
    p.add_argument("--from", dest="first", metavar="RELEASE", help="the first release (default: the oldest)")
    p.add_argument("--to", dest="last", metavar="RELEASE", help="the last release (default: the newest)")
    add_preset(p, default="matrix.toml's, seed")
    add_claims(p)
    add_rounds(p)
    add_redo(p, "every release")
    add_runner(p)
    add_reports(p, "the cells (DIR/releases/cells) and DIR/timeline.csv|json go")
