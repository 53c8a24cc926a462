"""Helpers for the run-archive tests: a cell measured again and again, each run built into a report (which keeps it).

Each run is a real report build over schema-valid cell documents
(``report_docs``), so the archive, the series and the page are exercised on
the path a user's runs take; what changes from run to run is chosen by the test.
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from report_docs import cell_doc, record, results_doc, training_params, write

from tfmatrix.report.build import build

LOOPS = ("train_on_batch", "fit")
MODES = ("eager", "graph")
INPUTS = ("numpy", "tf.data")


def variants() -> list[dict[str, str]]:
    """Eight variants of one benchmark (loop x mode x input)."""
    return [{"loop": loop, "mode": mode, "input": inp} for loop in LOOPS for mode in MODES for inp in INPUTS]


def run_cell(cells_dir: Path, k: int, factor: Callable[[dict[str, str]], float], name: str = "tf2.15-cpu",
             noise: float = 0.03, host: dict[str, object] | None = None, seed: int = 0,
             code: str | None = None, api: str = "tf.keras") -> Path:
    """Run ``k`` of one cell: each variant three processes of three samples, its time times ``factor(variant)``.

    The request's hash of the user's files (``bench``) is ``code``, else the factors themselves: a run whose
    variants the test changed measured other code, as a user's edited file is. ``api="keras"``: the variants a
    seed's claim compares (TF2 graph against eager, standalone keras), so the run has claim lines.
    """
    rnd = random.Random(seed * 1000 + k)
    level = 1 + rnd.gauss(0, noise / 2)                  # the whole run's move
    recs = []
    for i, v in enumerate(variants()):
        centre = 0.004 * (1 + i / 4) * level * factor(v)
        per_process = [[centre * (1 + rnd.gauss(0, noise)) for _ in range(3)] for _ in range(3)]
        params = training_params(loop=v["loop"], mode=v["mode"], input=v["input"], api=api)
        recs.append(record("training.question", params, per_process=per_process))
    doc = cell_doc(name, "2.15", results=results_doc(recs, tf="2.15.1", cell=name))
    when = f"2026-11-{k + 1:02d}T12:00:00+00:00"
    doc["finished"] = doc["results"]["finished"] = when
    if host is not None:
        doc["host"] = {**doc["host"], **host}
    doc["request"]["bench"] = code if code is not None else repr([round(factor(v), 6) for v in variants()])
    return write(cells_dir, json.loads(json.dumps(doc)))


def run_series(reports: Path, runs: int, factor_of_run: Callable[[int, dict[str, str]], float], **kw: object) -> Path:
    """``runs`` runs of one cell into ``reports/cells``, the report built after each (as ``matrix`` does); ``kw``:
    ``run_cell``'s (``code="same"``: a change the files did not make, the host's)."""
    for k in range(runs):
        run_cell(reports / "cells", k, lambda v, k=k: factor_of_run(k, v), **kw)  # type: ignore[arg-type]
        build(reports / "cells", reports, generated="2026-11-28T00:00:00+00:00")
    return reports
