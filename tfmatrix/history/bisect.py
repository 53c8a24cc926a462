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

The steps take what they need (a ``Prober`` with its runner, the ends);
the ``bisect`` command (``commands/bisect.py``) reads the options, picks the
axis and holds the checkout's run lock around them.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from ..analysis.cells import CellResult, load_file
from ..execution.request import RunRequest
from ..matrix import Settings
from ..results.history_docs import BISECT_DIR, BisectDoc, ProbeDoc
from ..results.store import suite_fingerprint, write_json_atomic
from ..runners.base import Runner
from .axis import Axis, minor_steps, patch_steps
from .probes import PROBES_DIR, EarlierFiles, probe_cell
from .search import Measure, Outcome, Probe, search
from .targets import Target


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
                    self.how[release] = f"reused {relative(earlier.path)}"
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
        self.how[release] = f"measured {relative(path)} ({rounds} rounds)"
        return self.target.measure(result)


def relative(path: Path) -> str:
    """``path`` relative to the current directory when it is below it (shorter lines), else as it is."""
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
    why: list[str] = field(default_factory=list)          # where it changed, profiled at the boundary (history.why)

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
        if self.why:
            out.append("where, from profiles of both releases (a run of their own; not timings):")
            out += ["  " + line for line in self.why]
        measured = sum(1 for p in self.path if not p.end and p.state != "skipped")
        out.append(f"{measured} releases measured between the ends ({len(self.path)} probes with the ends)")
        return out

    def doc(self) -> BisectDoc:
        """The answer as ``report.bisect_view`` reads it back (``results.history_docs.BisectDoc``)."""
        def probe(p: Probe) -> ProbeDoc:
            m = p.measure
            return ProbeDoc(p.release, p.state, p.end, p.attempts, p.reason, m.value if m else None,
                            m.low if m else None, m.high if m else None, m.unit if m else None,
                            self.how.get(p.release, ""))
        final = self.final
        return BisectDoc(self.target.key, self.target.label, self.axis.name, self.axis.tf, self.good, self.bad,
                         final.found, final.last_good, final.first_bad, final.boundary_text(),
                         [p.release for p in final.between], final.problem, [probe(p) for p in self.path],
                         [list(t) for t in self.packages],
                         self.minors.notes + (self.patches.notes if self.patches else []), list(self.why),
                         self.axis.keras)

    def to_json(self) -> dict[str, Any]:
        return self.doc().to_json()


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
    a, b = (cell.facts.tf.packages if cell else {} for cell in (good, bad))
    return [(name, a.get(name, "-"), b.get(name, "-")) for name in sorted(set(a) | set(b))
            if a.get(name) != b.get(name)]


def out_name(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", key)[:120] + ".json"


def with_evidence(result: Bisection, prober: Prober) -> Bisection:
    """``result`` with how each probe was answered and, when found, the packages that differ at the boundary."""
    result.how = dict(prober.how)
    final = result.final
    if final.found and final.last_good and final.first_bad:
        result.packages = package_diff(prober.cells.get(final.last_good), prober.cells.get(final.first_bad))
    return result


def write_answer(result: Bisection, reports: Path) -> Path:
    """The answer as ``<reports>/bisect/<target>-<axis>-<good>-<bad>.json`` (``report.bisect_view`` reads it)."""
    key = f"{result.target.key}-{result.axis.name}{result.axis.tf or result.axis.keras}-{result.good}-{result.bad}"
    path = reports / BISECT_DIR / out_name(key)
    write_json_atomic(path, result.to_json())
    return path
