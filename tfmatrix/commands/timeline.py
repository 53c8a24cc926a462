"""The ``timeline`` command: every one-cell claim across every TF minor release (or Keras 3 release), then
the report.

Reads the options into the releases and the request, lets
``history.timeline`` reuse what earlier cell files answer and measure the
rest (under the checkout's run lock), prints where each claim's verdict
changed, and rebuilds the report beside it (its Timeline section).
"""
from __future__ import annotations

import argparse

from .. import paths
from ..history.axis import AXES, release_axis
from .common import load_matrix, output_dir, then_report


def _timeline(args: argparse.Namespace) -> int:
    """Measure (or reuse) one cell per release, then write the timeline and print where verdicts changed."""
    from ..execution.lock import checkout_lock
    from ..execution.request import RunRequest
    from ..history import timeline
    from ..history.axis import minor_steps
    from ..progress import stderr_console
    from ..runners.choose import make_runner

    console = stderr_console()
    matrix = load_matrix(args)
    preset = args.preset or matrix.settings.preset or "seed"
    axis = release_axis(args.axis, args.tf, args.first or "3.0")
    minors = timeline.minor_releases(axis)
    first = axis.exact(args.first or minors[0], "--from")
    last = axis.exact(args.last or minors[-1], "--to")
    releases = minor_steps(axis, first, last)
    reports = output_dir(args.reports, "--reports")
    ids = timeline.selection(preset)
    request = RunRequest(preset=preset, only=ids, rounds=args.rounds or matrix.settings.rounds,
                         schedule="interleaved")
    answered, to_run = timeline.reuse(axis, releases, matrix.settings, reports, ids, redo=args.redo)
    console.print(f"\\[tfmatrix] timeline: {len(releases)} {axis.what} releases, {len(ids)} variants each; "
                  f"{len(releases) - len(to_run)} read from earlier cell files, {len(to_run)} to measure")
    with checkout_lock():
        if to_run:
            runner = make_runner(args.runner, matrix.settings.base_registry, console)
            answered.update(timeline.measure(to_run, runner, request, reports, console))
    points = [p for r in releases for p in answered[r]]
    json_path, csv_path = timeline.write(points, axis, releases, preset, reports)
    for line in timeline.summary_lines(points):
        print(line)
    print(f"written: {json_path}, {csv_path}")
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    """Every claim across every release (``tfmatrix.history.timeline``), then the report."""
    return then_report(args, _timeline(args))


def configure_timeline(p: argparse.ArgumentParser) -> None:
    from ..matrix import KNOWN_PRESETS
    from ..runners.choose import RUNNERS

    p.add_argument("--axis", choices=AXES, default="tf",
                   help="tf: every TensorFlow minor release (default); keras: every Keras 3 release on one TF (--tf)")
    p.add_argument("--tf", metavar="RELEASE", help="--axis keras: the TF the Keras releases run on")
    p.add_argument("--from", dest="first", metavar="RELEASE", help="the first release (default: the oldest)")
    p.add_argument("--to", dest="last", metavar="RELEASE", help="the last release (default: the newest)")
    p.add_argument("--preset", choices=KNOWN_PRESETS, help="the suite preset (default: matrix.toml's, seed)")
    p.add_argument("--rounds", type=int, choices=range(1, 21), metavar="N",
                   help="rounds (default: matrix.toml's, 3)")
    p.add_argument("--redo", action="store_true", help="measure every release again, even with earlier cell files")
    p.add_argument("--runner", default="auto", choices=[r for r in RUNNERS if r != "ray"],
                   help="auto: Docker when an engine answers, else local virtualenvs")
    p.add_argument("--reports", default=str(paths.REPORTS_DIR), metavar="DIR",
                   help="where the cells (DIR/releases/cells) and DIR/timeline.csv|json go (default: reports)")
