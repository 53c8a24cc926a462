"""The report's Hardware section: the same cell on different hardware, variant by variant, side by side.

For each group of cells that ran the same thing on different hardware
(``hardware.hardware_groups``: a pool axis, or cells that landed on different
CPU/GPU models), every other cell is compared with the group's first: per
variant measured ok in both, the time on each, the ratio other/first with its
95% interval and a verdict. The numbers are the upgrade view's
(``upgrade.upgrade_view`` on ``compare.sets.variant_changes``): a verdict is clear
only when the interval excludes 1 and the difference exceeds the measured
between-process noise. Variants ok on one hardware only are listed with each
side's status, since a model that fails on the smaller GPU is a hardware
answer too.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..analysis.compare.upgrade import UpgradeView, upgrade_view
from ..analysis.hardware import Hardware, hardware_groups, hardware_of
from ..results.csv_files import csv_text
from .tables import fmt_change, fmt_seconds


@dataclass
class HardwarePair:
    """One cell on two kinds of hardware: A (the group's reference) and B, with the per-variant comparison."""

    group: str                  # what both ran ("TF 2.0 · keras 2.3.1 · py3.7 · cpu")
    hardware_a: Hardware
    hardware_b: Hardware
    view: UpgradeView           # baseline = the cell on A, candidate = the cell on B

    @property
    def cell_a(self) -> str:
        return self.view.baseline

    @property
    def cell_b(self) -> str:
        return self.view.candidate

    def verdict(self, verdict: str) -> str:
        """A ``VariantChange`` verdict (B against A) in hardware words."""
        return {"slower": f"slower on {self.hardware_b.short}", "faster": f"faster on {self.hardware_b.short}"}.get(
            verdict, verdict)

    def line(self) -> str:
        c = self.view.counts()
        return (f"{self.cell_b} ({self.hardware_b.label}) against {self.cell_a} ({self.hardware_a.label}): "
                f"{len(self.view.rows)} variants in both; {c['slower']} slower, {c['faster']} faster, "
                f"{c['no clear difference']} no clear difference")


def hardware_pairs(df: pd.DataFrame, cells: Sequence[Any]) -> list[HardwarePair]:
    """Every (reference, other) pair of every hardware group, compared variant by variant on the report's frame."""
    return [HardwarePair(group.label, hardware_of(a), hardware_of(b), upgrade_view(df, a.name, b.name))
            for group in hardware_groups(cells) for a, b in group.pairs()]


def to_rows(pair: HardwarePair) -> list[dict[str, Any]]:
    """Rows for the page and ``hardware.csv``: variants in both (largest slowdown on B first), then the others."""
    a, b = pair.hardware_a.short, pair.hardware_b.short
    out = []
    for c in pair.view.rows:
        out.append({"benchmark": c.benchmark, "id": c.id, "time_a_s": c.time_a, "time_b_s": c.time_b,
                    "ratio": c.ci.ratio, "ci_low": c.ci.low, "ci_high": c.ci.high, "noise": c.noise,
                    "verdict": pair.verdict(c.verdict), "status_a": "ok", "status_b": "ok", "reason": ""})
    for u in pair.view.unpaired:
        why = "; ".join(f"{hw}: {status}" + (f" ({reason})" if reason else "")
                        for hw, status, reason in ((a, u.baseline, u.baseline_reason),
                                                   (b, u.candidate, u.candidate_reason)) if status != "ok")
        verdict = f"ok on {a} only" if u.baseline == "ok" else (
            f"ok on {b} only" if u.candidate == "ok" else "not measured on either")
        out.append({"benchmark": u.benchmark, "id": u.id, "time_a_s": None, "time_b_s": None, "ratio": None,
                    "ci_low": None, "ci_high": None, "noise": None, "verdict": verdict, "status_a": u.baseline,
                    "status_b": u.candidate, "reason": why})
    return out


CSV_COLUMNS = ["group", "cell_a", "hardware_a", "cell_b", "hardware_b", "benchmark", "id", "time_a_s", "time_b_s",
               "ratio", "ci_low", "ci_high", "noise", "verdict", "status_a", "status_b", "reason"]


def hardware_csv(pairs: Sequence[HardwarePair]) -> str:
    """``hardware.csv``: one row per pair x variant, as the page lists them (just the header when there is none)."""
    return csv_text(CSV_COLUMNS, ([pair.group, pair.cell_a, pair.hardware_a.label, pair.cell_b, pair.hardware_b.label]
                                  + [f"{row[k]:.6g}" if isinstance(row[k], float) else row[k] for k in CSV_COLUMNS[5:]]
                                  for pair in pairs for row in to_rows(pair)))


def page_view(pairs: Sequence[HardwarePair], cells: Sequence[Any], device_pairs: int = 0) -> dict[str, Any] | None:
    """What the page's Hardware section shows; None when every cell with results ran on the same hardware.

    ``device_pairs``: how many GPU/CPU pairs the Devices section compares (one environment on the GPU and the CPU):
    with no pair here, the section points there rather than saying nothing compares the hardware."""
    kinds = sorted({hardware_of(c) for c in cells if c.has_records})
    if len(kinds) < 2:
        return None
    views = []
    for pair in pairs:
        rows = []
        for row in to_rows(pair):
            measured = row["ratio"] is not None
            rows.append({**row, "cls": _verdict_class(row["verdict"], pair),
                         "a_text": fmt_seconds(row["time_a_s"]) if measured else row["status_a"],
                         "b_text": fmt_seconds(row["time_b_s"]) if measured else row["status_b"],
                         "ratio_text": f"{row['ratio']:.3f}" if measured else "",
                         "ci_text": f"{row['ci_low']:.3f} – {row['ci_high']:.3f}" if measured else "",
                         "pct_text": fmt_change(row["ratio"]) if measured else ""})
        views.append({"group": pair.group, "cell_a": pair.cell_a, "cell_b": pair.cell_b,
                      "hardware_a": pair.hardware_a.label, "hardware_b": pair.hardware_b.label,
                      "short_b": pair.hardware_b.short, "line": pair.line(), "rows": rows})
    return {"kinds": [k.label for k in kinds], "pairs": views, "devices": device_pairs}


def _verdict_class(verdict: str, pair: HardwarePair) -> str:
    """Colour as the upgrade view does, from B's side: slower on B is "worse", faster "better"."""
    return {pair.verdict("slower"): "worse", pair.verdict("faster"): "better"}.get(verdict, "")
