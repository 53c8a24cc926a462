"""Measuring a size sweep: one variant of one environment in two settings, round by round, at sizes chosen for it.

``analysis.sweep`` decides which sizes to measure and how many rounds each
needs; this module measures them. Both cells are existing environments of one
interpreter (the same packages, two device or thread settings: what the
Devices section pairs). A round is one fresh suite process per setting, in a
random order, at one size (``python -m suite run --set AXIS=SIZE``), so each
round's two times pair as two cells of one interleaved run do; rounds already
measured at a size are kept when the sweep asks for more there.
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.schema import setting_target

from ..analysis.compare.result import change_verdict
from ..analysis.devices import SizePoint
from ..analysis.statistics.inference import contrast, ratio_ci, side_of
from ..analysis.sweep import Probe
from ..errors import UserError
from ..matrix.records import Cell
from ..results.cell_log import CellLog
from ..runners.venv import VenvCellEnv

PROCESS_TIMEOUT_S = 600.0


@dataclass
class SizeSweeper:
    """Two prepared environments (A, B) and the variant (``only``) measured in both at the sizes asked for."""

    cells: tuple[Cell, Cell]
    envs: tuple[VenvCellEnv, VenvCellEnv]
    only: str
    axis: str
    preset: str
    log: CellLog
    rng: random.Random
    kept: dict[float, list[tuple[list[float], list[float]]]] = field(default_factory=dict)   # size -> rounds
    variant: str = ""
    sets: tuple[str, ...] = ()      # the suite parameters that are the size (``analysis.sweep.Work.sets``; () axis)

    def one(self, side: int, size: float) -> list[float]:
        """One fresh process of setting ``side`` at ``size``: its samples (seconds)."""
        cell, env = self.cells[side], self.envs[side]
        out = Path(env.suite_path(f"{cell.name}-{self.axis}{size:g}-{len(self.kept.get(size, []))}.json"))
        sets = [a for target in self.sets or (self.axis,) for a in ("--set", f"{target}={size:g}")]
        done = env.run_suite(["run", "--preset", self.preset, "--only", self.only, *sets,
                              "--processes", "1", "--out", str(out), "--cell", cell.name, "--target", cell.target,
                              "--runner", "existing"], self.log, PROCESS_TIMEOUT_S)
        doc: dict[str, Any] = json.loads(out.read_text()) if out.is_file() else {}
        records = doc.get("records") or []
        ok = [r for r in records if r.get("status") == "ok" and r.get("per_process")]
        if done.returncode != 0 or len(records) != 1 or not ok:
            what = "; ".join(f"{r.get('id')}: {r.get('status')} ({r.get('reason')})" for r in records) or \
                f"no records (exit {done.returncode}; see {self.log.path})"
            raise UserError(f"sweep: --bench {self.only} must select one variant that runs in {cell.name} at "
                            f"{self.axis}={size:g}: {what}")
        missing = [t for t in self.sets or (self.axis,) if set_value(ok[0].get("params") or {}, t) != size]
        if missing:
            raise UserError(f"sweep: --axis {self.axis} sets {', '.join(missing)}, which {ok[0]['id']} (chosen by "
                            f"--bench {self.only}) does not have; choose a variant with that size")
        self.variant = str(ok[0]["id"])
        return [float(x) for x in ok[0]["per_process"][0]]

    def measure(self, size: float, rounds: int) -> Probe:
        """``analysis.sweep.Measure``: ``rounds`` paired rounds at ``size`` (measuring only the missing ones)."""
        runs = self.kept.setdefault(size, [])
        while len(runs) < rounds:
            order = [0, 1]
            self.rng.shuffle(order)
            got = {side: self.one(side, size) for side in order}
            runs.append((got[0], got[1]))
        keys = [f"round{i}" for i in range(rounds)]
        a = side_of([r[0] for r in runs[:rounds]], keys, label="A")
        b = side_of([r[1] for r in runs[:rounds]], keys, label="B")
        c = contrast(b, a)
        if c is None:
            raise UserError(f"sweep: no time at {self.axis}={size:g} in one of the two settings")
        ci = ratio_ci(c)
        point = SizePoint(size, ci.ratio, ci.low, ci.high, self.variant, change_verdict(ci))
        return Probe(size, math.exp(a.mean), math.exp(b.mean), point, rounds)


def set_value(params: dict[str, Any], target: str) -> Any:
    """The value a record's parameters hold at ``target`` (``n``, or ``batch_shape[0]``: an element, read as the
    suite sets it: ``suite.schema.setting_target``); None: none."""
    name, index = setting_target(target) or (target, None)
    value = params.get(name)
    if index is None:
        return value
    return value[index] if isinstance(value, list) and len(value) > index else None
