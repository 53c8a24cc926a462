"""The ``sweep`` command: from which size one environment's second setting (the GPU, two threads) pays.

``python -m tfmatrix sweep CELL_A CELL_B --axis n --bench PATTERN``: two
existing-environment cells of one interpreter in two device or thread
settings, one variant, its size parameter swept between ``--from`` and
``--to``. ``analysis.sweep`` chooses the sizes (two to calibrate, two a factor
of 2 apart around the predicted crossing, then bisection; at most six) and
the rounds (doubled where a size is open); ``execution.size_sweep`` measures
them round by round; the answer is printed and kept as JSON.
"""
from __future__ import annotations

import argparse
import math
import random
from typing import Any

from .. import paths
from ..errors import UserError
from ..matrix import display_path
from .common import find_cell, load_matrix, output_dir
from .options import add_bench, add_preset, add_reports, add_rounds, add_seed


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..analysis.devices import DEVICE_ENV, ONE_ROUND, DeviceSetting
    from ..analysis.sweep import MAX_SIZES, WORK, sweep
    from ..execution.size_sweep import SizeSweeper
    from ..report.devices_view import pair_names
    from ..results.cell_log import CellLog
    from ..results.documents import CellRequest
    from ..results.store import write_json_atomic
    from ..runners.existing import ExistingRunner
    from ..runners.job import CellJob
    from ..runners.venv import VenvCellEnv

    if not args.bench:
        raise UserError("sweep: name the one variant to sweep with --bench PATTERN (glob on variant id)")
    matrix = load_matrix(args)
    cells = (find_cell(matrix, args.a), find_cell(matrix, args.b))
    for c in cells:
        if not c.existing:
            raise UserError(f"sweep: {c.name} is not an existing environment (python = \"/path/bin/python\" in the "
                            "matrix file); a sweep runs one interpreter in two settings")
    if cells[0].interpreter != cells[1].interpreter or cells[0].name == cells[1].name:
        raise UserError(f"sweep: {cells[0].name} and {cells[1].name} must be two cells of one interpreter (one "
                        "environment in two device or thread settings)")
    if args.axis not in WORK:
        raise UserError(f"sweep: --axis {args.axis}: not a size axis; choose one of {', '.join(sorted(WORK))}")
    if not 2 <= args.rounds <= args.max_rounds:
        raise UserError(f"sweep: --rounds {args.rounds} --max-rounds {args.max_rounds}: give 2 <= rounds <= "
                        "max-rounds")
    if not 0 < args.low < args.high:
        raise UserError(f"sweep: --from {args.low} --to {args.high}: give two sizes, the first smaller")
    preset = args.preset or "quick"
    runner = ExistingRunner()
    for c in cells:
        why = runner.skip_reason(c)
        if why:
            raise UserError(f"sweep: {c.name}: {why}")
    out_dir = output_dir(args.reports, "--reports")
    settings = [DeviceSetting(c.target, tuple(sorted((k, v) for k, v in c.env if k in DEVICE_ENV))) for c in cells]
    a_name, b_name = pair_names(settings[0], settings[1])
    log = CellLog(out_dir / f"{cells[0].name}-{cells[1].name}-{args.axis}.log")
    envs: list[VenvCellEnv] = []
    try:
        for c in cells:
            env = runner.prepare(CellJob(c, CellRequest(preset=preset)), log, None)
            if not isinstance(env, VenvCellEnv):
                raise UserError(f"sweep: {c.name}: {env.reason}")
            envs.append(env)
        seed = args.seed if args.seed is not None else random.randrange(2 ** 31)
        sweeper = SizeSweeper((cells[0], cells[1]), (envs[0], envs[1]), args.bench, args.axis, preset, log,
                              random.Random(seed), sets=WORK[args.axis].sets)

        def measure(size: float, rounds: int) -> Any:
            probe = sweeper.measure(size, rounds)
            p = probe.point
            ci = f"[{p.low:.3f}, {p.high:.3f}]" if p.verdict != ONE_ROUND else "(one round)"
            print(f"  {args.axis}={size:g}: {b_name}/{a_name} {p.ratio:.3f} {ci} {p.verdict}, {rounds} rounds",
                  flush=True)
            return probe

        found = sweep(measure, args.low, args.high, WORK[args.axis], rounds=args.rounds,
                      max_sizes=MAX_SIZES, max_rounds=args.max_rounds)
    finally:
        for env in envs:
            env.close()
        log.close()
    text = found.text(b_name, a_name)
    path = out_dir / f"{cells[0].name}-{cells[1].name}-{args.axis}.json"
    write_json_atomic(path, {
        "schema": "tfmatrix.sweep", "schema_version": 1, "a": cells[0].name, "b": cells[1].name,
        "setting_a": settings[0].label, "setting_b": settings[1].label, "variant": sweeper.variant,
        "axis": args.axis, "seed": seed, "preset": preset, "work": found.work.name, "from": args.low,
        "to": args.high, "predicted": found.predicted,
        "bracket": list(found.bracket) if found.bracket else None, "why": found.why, "answer": text,
        "probes": [{"size": p.size, "rounds": p.rounds, "time_a": p.time_a, "time_b": p.time_b,
                    "ratio": p.point.ratio, "low": _or_null(p.point.low), "high": _or_null(p.point.high),
                    "verdict": p.point.verdict, "samples": sweeper.kept.get(p.size, [])[:p.rounds]}
                   for p in found.probes]})
    print(f"{sweeper.variant}: {text}; kept in {display_path(path)}")
    return 0


def _or_null(x: float) -> float | None:
    return None if math.isnan(x) else x      # nan (one round) as null


def configure_sweep(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="CELL_A", help="the reference setting (the CPU, one thread): an existing environment")
    p.add_argument("b", metavar="CELL_B", help="the same interpreter in the other setting (the GPU, two threads)")
    add_bench(p, old_name=True, one="the one variant to sweep (glob on variant id; required)")
    p.add_argument("--axis", default="n", help="its size: n (seed 002's matrix size, the default), batch (the batch "
                                               "of seeds 000/001's batch_shape), side (seed 003's image side)")
    p.add_argument("--from", dest="low", type=int, default=16, metavar="SIZE", help="the smallest size (default 16)")
    p.add_argument("--to", dest="high", type=int, default=2048, metavar="SIZE", help="the largest size (default 2048)")
    add_rounds(p, fewest=2, most=12, default=2, then=" at each size first; doubled where the sign is still open")
    p.add_argument("--max-rounds", type=int, default=12, metavar="N",
                   help="the most rounds a size gets before it is left as 'the same' (default 12)")
    add_preset(p, default="quick")
    add_seed(p)
    add_reports(p, "the sweep's answer and log go", paths.REPORTS_DIR / "sweep")
