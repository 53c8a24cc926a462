"""``tfmatrix bisect``: which release changed a claim (or one variant's time), with the evidence.

The search itself is ``search.py`` (pure); this module is its edge: each
probe is a CPU cell for one release (``axis.Axis.spec``), resolved through
the matrix's own checks, built on demand by the same runners, images and
wheelhouse as the matrix, and run with only the variants that decide the
target (``targets.py``), on the interleaved schedule's rounds. Every probe's
results are an ordinary cell file in ``<reports>/releases/cells/``, reused
by the next bisect; a cell the main matrix already measured
(``<reports>/cells/``, same suite) is reused as it is. The answer is printed
and written to ``<reports>/bisect/<target>.json``.
"""
from __future__ import annotations

import argparse
import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from .. import paths
from ..analysis.cells import CellResult, load_file
from ..errors import UserError
from ..matrix import Settings
from ..matrix.releases import load_table
from ..results.store import suite_fingerprint, write_json_atomic
from ..runners.base import Runner
from ..runners.common import RunRequest
from .axis import AXES, Axis, keras_axis, minor_steps, patch_steps, tf_axis
from .probes import PROBES_DIR, EarlierFiles, probe_cell
from .search import Measure, Outcome, Probe, search
from .targets import Target, bench_target, claim_target

OUT_DIR = "bisect"


@dataclass
class Prober:
    """Measures one release for the search: resolve its cell, reuse or run it, read the target from its file."""

    axis: Axis
    target: Target
    settings: Settings
    runner: Runner
    request: RunRequest
    reports: Path
    console: Console
    cells: dict[str, CellResult] = field(default_factory=dict)      # release -> the cell file that answered
    how: dict[str, str] = field(default_factory=dict)               # release -> "reused ..." | "measured ..."
    earlier: EarlierFiles | None = None

    def __call__(self, release: str, attempt: int) -> Measure | str:
        cell = probe_cell(self.axis, release, self.settings)
        if isinstance(cell, str):
            return cell
        why = self.runner.skip_reason(cell)
        if why:
            return f"cannot run here: {why}"
        if attempt == 1:
            self.earlier = self.earlier or EarlierFiles(self.reports, suite_fingerprint())
            for earlier in self.earlier.of(cell):
                got = self.target.measure(earlier)
                if isinstance(got, Measure):
                    self.cells[release] = earlier
                    self.how[release] = f"reused {_rel(earlier.path)}"
                    return got
        from ..execution.dispatch import execute

        rounds = self.request.rounds * attempt
        self.console.print(f"\\[tfmatrix] bisect: measuring {self.axis.what} {release} ({cell.name}, "
                           f"{len(self.target.variant_ids)} variants, {rounds} rounds)")
        request = dataclasses.replace(self.request, rounds=rounds)
        probes = self.reports / PROBES_DIR
        outcome = execute([cell], self.runner, request, probes, redo=True, console=self.console)[0]
        path = probes / "cells" / f"{cell.name}.json"
        if outcome.status != "ok" or not path.exists():
            return f"{outcome.status}: {outcome.reason}"
        result = load_file(path)
        self.cells[release] = result
        self.how[release] = f"measured {_rel(path)} ({rounds} rounds)"
        return self.target.measure(result)


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass
class Bisection:
    """A whole bisect: the minor releases' search, then (``--patches``) the patches' search, and the evidence."""

    target: Target
    axis: Axis
    good: str
    bad: str
    minors: Outcome
    patches: Outcome | None = None
    how: dict[str, str] = field(default_factory=dict)
    packages: list[tuple[str, str, str]] = field(default_factory=list)    # (package, last good, first bad)

    @property
    def final(self) -> Outcome:
        return self.patches if self.patches is not None and self.patches.found else self.minors

    @property
    def path(self) -> list[Probe]:
        """Every probe in the order it was measured (a release probed in both searches appears once)."""
        seen: set[str] = set()
        out = []
        for p in self.minors.probes + (self.patches.probes if self.patches else []):
            if p.release not in seen:
                seen.add(p.release)
                out.append(p)
        return out

    def lines(self) -> list[str]:
        out = [f"bisect {self.target.label}, {self.axis.what}, good {self.good}, bad {self.bad}"]
        for i, p in enumerate(self.path, start=1):
            out.append(f"  probe {i}: {p.text()}" + (f" [{self.how[p.release]}]" if p.release in self.how else ""))
        out.append(("answer: " if self.final.found else "no answer: ") + self.final.boundary_text())
        if self.patches is None and self.final.found and not self.final.between:
            out.append("  (minor releases only; --patches walks the patch releases in between)")
        out += ["note: " + n for n in self.minors.notes + (self.patches.notes if self.patches else [])]
        if self.packages:
            out.append("packages that differ at the boundary (last good -> first bad):")
            out += [f"  {name}: {a} -> {b}" for name, a, b in self.packages]
        measured = sum(1 for p in self.path if not p.end and p.state != "skipped")
        out.append(f"{measured} releases measured between the ends ({len(self.path)} probes with the ends)")
        return out

    def to_json(self) -> dict[str, Any]:
        def probe(p: Probe) -> dict[str, Any]:
            m = p.measure
            return {"release": p.release, "state": p.state, "end": p.end, "attempts": p.attempts, "reason": p.reason,
                    "value": m.value if m else None, "low": m.low if m else None, "high": m.high if m else None,
                    "unit": m.unit if m else None, "how": self.how.get(p.release, "")}
        final = self.final
        return {"target": self.target.key, "label": self.target.label, "axis": self.axis.name, "tf": self.axis.tf,
                "good": self.good, "bad": self.bad, "found": final.found, "last_good": final.last_good,
                "first_bad": final.first_bad, "answer": final.boundary_text(),
                "between": [p.release for p in final.between], "problem": final.problem,
                "probes": [probe(p) for p in self.path], "packages": [list(t) for t in self.packages],
                "notes": self.minors.notes + (self.patches.notes if self.patches else [])}


def bisect(target: Target, axis: Axis, good: str, bad: str, measure: Any, patches: bool) -> Bisection:
    """Minor releases first; with ``patches``, then every release between the two the minors left."""
    cache: dict[tuple[str, int], Measure | str] = {}

    def once(release: str, attempt: int) -> Measure | str:
        if (release, attempt) not in cache:
            cache[(release, attempt)] = measure(release, attempt)
        return cache[(release, attempt)]

    minors = search(minor_steps(axis, good, bad), once)
    out = Bisection(target, axis, good, bad, minors)
    if patches and minors.found and minors.last_good and minors.first_bad:
        steps = patch_steps(axis, minors.last_good, minors.first_bad)
        if len(steps) > 2:
            out.patches = search(steps, once)
    return out


def package_diff(good: CellResult | None, bad: CellResult | None) -> list[tuple[str, str, str]]:
    """Installed packages whose version differs between two cells (absent: "-")."""
    def packages(cell: CellResult | None) -> dict[str, str]:
        facts = cell.results.tf_facts if cell and cell.results else {}
        return dict(facts.get("packages") or {})
    a, b = packages(good), packages(bad)
    return [(name, a.get(name, "-"), b.get(name, "-")) for name in sorted(set(a) | set(b))
            if a.get(name) != b.get(name)]


def out_name(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", key)[:120] + ".json"


def cmd_bisect(args: argparse.Namespace) -> int:
    """``python -m tfmatrix bisect (--claim NAME | --bench ID) --good A --bad B [--axis tf|keras] [--patches]``."""
    from ..commands.common import load_matrix, output_dir
    from ..execution.dispatch import make_runner
    from ..execution.lock import command_line, run_lock

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    matrix = load_matrix(args)
    preset = args.preset or matrix.settings.preset or "seed"
    target = claim_target(args.claim, preset) if args.claim else bench_target(args.bench, preset)
    table = load_table()
    if args.axis == "keras":
        older = min(args.good, args.bad, key=lambda v: [int(x) for x in re.findall(r"\d+", v)])
        axis = keras_axis(table, args.tf, older)
    else:
        if args.tf:
            raise UserError("--tf: only with --axis keras (the TF release the Keras versions run on)")
        axis = tf_axis(table)
    good, bad = axis.exact(args.good, "--good"), axis.exact(args.bad, "--bad")
    if good == bad:
        raise UserError(f"--good {args.good} and --bad {args.bad} are the same release ({good}); name two")
    reports = output_dir(args.reports, "--reports")
    request = RunRequest(preset=preset, only=target.variant_ids, rounds=args.rounds or matrix.settings.rounds,
                         schedule="interleaved")
    with run_lock(paths.BUILD_DIR / "run.lock", command_line()):
        runner = make_runner(args.runner, matrix.settings.base_registry, console)
        prober = Prober(axis, target, matrix.settings, runner, request, reports, console)
        result = bisect(target, axis, good, bad, prober, args.patches)
    result.how = dict(prober.how)
    final = result.final
    if final.found and final.last_good and final.first_bad:
        result.packages = package_diff(prober.cells.get(final.last_good), prober.cells.get(final.first_bad))
    path = reports / OUT_DIR / out_name(f"{target.key}-{axis.name}{axis.tf}-{good}-{bad}")
    write_json_atomic(path, result.to_json())
    for line in result.lines():
        print(line)
    print(f"written: {_rel(path)}")
    return 0 if final.found else 1


def configure(p: argparse.ArgumentParser) -> None:
    from ..execution.dispatch import RUNNERS
    from ..matrix import KNOWN_PRESETS

    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--claim", metavar="NAME", help="a claim of the report's Claims section (its key, e.g. "
                      "predict_slower_after_compile): bisect its ratio in the seed's configuration")
    what.add_argument("--bench", metavar="ID", help="one variant id: bisect its time (probes minutes apart: "
                      "prefer a claim, whose ratio is taken inside one cell)")
    p.add_argument("--good", required=True, metavar="RELEASE", help="a release where it is as it should be "
                   "(2.1 = its newest patch, or an exact 2.1.0)")
    p.add_argument("--bad", required=True, metavar="RELEASE", help="a release where it changed (older or newer)")
    p.add_argument("--axis", choices=AXES, default="tf",
                   help="tf: TensorFlow releases (default); keras: Keras 3 releases on one TF (--tf)")
    p.add_argument("--tf", metavar="RELEASE", help="--axis keras: the TF the Keras releases run on (default: the "
                   "newest that accepts the older end)")
    p.add_argument("--patches", action="store_true",
                   help="after the minor releases, walk the patch releases between the two it left")
    p.add_argument("--preset", choices=KNOWN_PRESETS, help="the suite preset (default: matrix.toml's, seed)")
    p.add_argument("--rounds", type=int, choices=range(1, 21), metavar="N",
                   help="rounds per probe (default: matrix.toml's, 3); an undecided probe is measured again with 2N")
    p.add_argument("--runner", default="auto", choices=[r for r in RUNNERS if r != "ray"],
                   help="auto: Docker when an engine answers, else local virtualenvs")
    p.add_argument("--reports", default=str(paths.REPORTS_DIR), metavar="DIR",
                   help="where probes' cell files (DIR/releases/cells) and answers (DIR/bisect) go (default: reports)")

