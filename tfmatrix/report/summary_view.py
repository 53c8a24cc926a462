"""The Summary section (cells, host, presets, suite, variants, baseline, the noise every verdict must beat) and the
Failures section's variants that failed inside cells that ran."""
from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from .. import __version__
from ..analysis.cells import CellResult
from ..analysis.frame import results_rows
from ..analysis.statistics.stats import noise_of
from ..results.documents import CELL_STATUSES
from .tables import Baselines
from .warnings import first_line, host_line


def summary_view(cells: list[CellResult], df: pd.DataFrame, baselines: Baselines, generated: str) -> dict[str, Any]:
    counts = Counter(c.status for c in cells)
    ran = [c for c in cells if c.has_records]
    finished = sorted(c.finished for c in cells if c.finished)
    # another framework's variants (``Variant.outside``) are counted apart: not results of their cells, not n/a
    results = results_rows(df)
    status_counts = Counter(results["status"]) if len(results) else Counter()
    return {
        "cells": cells,
        "counts": [(s, counts.get(s, 0)) for s in CELL_STATUSES if counts.get(s, 0)]
        + [(s, n) for s, n in counts.items() if s not in CELL_STATUSES],
        "n_cells": len(cells),
        "hosts": sorted({host_line(c) for c in cells if c.facts.host_summary.reported or c.facts.host.reported}),
        "presets": sorted({c.preset for c in ran}) or sorted({c.preset for c in cells}),
        "suites": sorted({c.suite_version + (f" ({c.suite_hash})" if c.suite_hash else "") for c in ran}),
        "first": finished[0] if finished else "",
        "last": finished[-1] if finished else "",
        "generated": generated,
        "tfmatrix": __version__,
        "baseline": baselines.describe() or "none (no cell has results)",
        "variants": len(results),
        "record_counts": ", ".join(f"{n} {s}" for s, n in sorted(status_counts.items())),
        "outside": len(df) - len(results),
        "noise": noise_line(df),
        "agreement": [],
    }


def noise_line(df: pd.DataFrame) -> str:
    """How far apart the processes (or rounds) of each variant were: the noise every verdict must beat."""
    if not len(df) or "between_cv" not in df:
        return ""
    ok = df[(df["status"] == "ok") & (df["processes"] >= 2)]
    if not len(ok):
        return ("each variant ran in one process: its between-process noise is not measured, so a verdict rests "
                "on the interval alone; run with rounds = 2 (or --rounds 2) to measure it")
    spreads = sorted(noise_of(p) for p in ok["per_process"])
    mid = spreads[len(spreads) // 2]
    p90 = spreads[min(len(spreads) - 1, int(0.9 * len(spreads)))]
    return (f"{len(ok)} variants ran in 2 or more processes or rounds; their times (10th percentiles) were "
            f"{mid:.1%} apart (median; 90th percentile {p90:.1%}). A comparison whose ratio lies within its sides' "
            "spread is reported as no clear difference.")


def variant_errors(cells: list[CellResult]) -> list[dict[str, Any]]:
    out = []
    for c in cells:
        for v in c.variants:
            if v.status in ("error", "timeout"):
                out.append({"cell": c.name, "id": v.id, "status": v.status, "reason": first_line(v.reason),
                            "detail": str(v.traceback or v.reason or "").strip()[-4000:]})
    return out
