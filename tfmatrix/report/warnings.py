"""The report's warnings: what a reader must know before trusting the numbers, each a rule over the cells.

Loud ones say the numbers are wrong or missing (a GPU cell that ran without
its GPU, failed cells, cell files left out, hardware mixed in one column);
the others say handle with care (unstable variants, different presets,
suite versions or hosts). The page lists them all at its top; the command
line repeats the loud ones (``build.Summary``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..analysis.cells import CellResult, Refused
from ..analysis.hardware import hardware_groups, mixed_hardware
from ..results.documents import CELL_FAILURES


@dataclass
class Warning_:
    level: str          # "loud": the numbers are wrong or missing; "warn": handle with care
    text: str


def warnings_for(cells: list[CellResult]) -> list[Warning_]:
    out: list[Warning_] = []
    for c in cells:
        if c.gpu_problem and c.has_records:
            out.append(Warning_("loud", f"{c.gpu_problem}, so its numbers are CPU timings, not GPU ones "
                                        "(its columns are marked ⚠ NO GPU)."))
        elif c.gpu_problem:
            out.append(Warning_("loud", f"{c.gpu_problem}, so the suite stopped it ({c.status}): "
                                        f"{first_line(c.reason or (c.results.error if c.results else None))}"))
    failed: dict[str, list[str]] = {}
    for c in cells:
        if c.status in CELL_FAILURES and not c.gpu_problem:
            what = "FAILED" if c.status == "failed" else "TIMED OUT"
            failed.setdefault(f"{what}: {first_line(c.reason)}", []).append(c.name)
    for text, names in failed.items():
        out.append(Warning_("loud", f"{_cells_text(names)} {text} (see Failures)."))
    for c in cells:
        if c.attempt_note:
            out.append(Warning_("warn", f"Cell {c.name}: {c.attempt_note} (the attempt's log: "
                                        f"{(c.last_attempt.log if c.last_attempt else None) or '?'})."))
    skipped_gpu = [c for c in cells if c.status == "skipped" and c.target == "gpu"]
    if skipped_gpu:
        reasons: dict[str, list[str]] = {}
        for c in skipped_gpu:
            reasons.setdefault(first_line(c.reason), []).append(c.name)
        listed = "; ".join(f"{', '.join(names)} ({reason})" for reason, names in reasons.items())
        out.append(Warning_("warn", f"GPU cells skipped, so this report has no GPU numbers for them: {listed}."))
    unstable: list[str] = []
    limits: set[str] = set()
    per_warning: dict[str, list[str]] = {}
    for c in cells:
        n = c.unstable_count()
        if n:
            unstable.append(f"{c.name} ({n} of {c.ok_count()})")
            cv = c.results.config.get("unstable_cv") if c.results else None
            limits.add(f"CV {100 * cv:.0f}%" if cv else "the preset's limit")
        for w in c.results.warnings if c.results else []:
            if "unstable" in w or (c.gpu_problem and "GPU" in w):
                continue                    # said above
            per_warning.setdefault(w, []).append(c.name)
    if unstable:
        out.append(Warning_("warn", f"UNSTABLE measured variants (spread above {' or '.join(sorted(limits))}) in "
                                    f"{len(unstable)} cell{'s' * (len(unstable) != 1)}: {', '.join(unstable)}; "
                                    "their medians cannot resolve small differences (marked ⚠)."))
    for w, names in per_warning.items():
        out.append(Warning_("warn", f"{_cells_text(names)}: {w}"))
    ran = [c for c in cells if c.has_records]
    presets = sorted({c.preset for c in ran})
    if len(presets) > 1:
        out.append(Warning_("warn", f"Cells ran different presets ({', '.join(presets)}): shapes differ between "
                                    "presets, so their variants are separate rows, not comparable columns."))
    suites = sorted({c.suite_version for c in ran})
    if len(suites) > 1:
        out.append(Warning_("warn", f"Cells ran different suite versions ({', '.join(suites)})."))
    side_by_side = sum(len(g.cells) for g in hardware_groups(ran))
    out += [Warning_("loud", line) for line in mixed_hardware(ran, side_by_side)]
    hosts = sorted({host_line(c) for c in ran})
    if len(hosts) > 1:
        out.append(Warning_("warn", "Cells ran on different hosts; timings are comparable only within a host: "
                                    + "; ".join(hosts) + "."))
    return out


def _cells_text(names: list[str]) -> str:
    return f"Cell {names[0]}" if len(names) == 1 else f"Cells {', '.join(names)}"


def refused_warnings(refused: Sequence[Refused]) -> list[Warning_]:
    """One loud line when cell files were left out: the report is missing cells the user ran."""
    if not refused:
        return []
    names = ", ".join(r.path.name for r in refused)
    n = len(refused)
    return [Warning_("loud", f"{n} cell file{'s' * (n != 1)} could not be read and {'are' if n != 1 else 'is'} "
                             f"left out of this report: {names} (see Failures).")]


def first_line(text: Any) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0] if lines else "no reason recorded"


def host_line(c: CellResult) -> str:
    h, cpu = c.facts.host_summary, c.facts.host.cpu
    return f"{h.hostname or '?'} ({h.cpu or cpu.model or '?'}, {h.cpus or cpu.logical_cpus or '?'} CPUs)"
