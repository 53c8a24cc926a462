"""Command line: ``python -m suite list``, ``run``, ``plan`` and ``profile``.

``run`` measures a whole cell at once (the sequential schedule). An
interleaved schedule calls ``plan`` once per cell (the fingerprint, what
cannot run, the slices), then ``run --plan FILE --slice KEY --pass N`` for
each slice in each round. ``profile`` is never a measurement: it writes a
function table per variant (``suite.profiling``) for ``tfmatrix explain``.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from .definitions import PRESETS, customized
from .registry import all_variants, load_benchmarks, parse_value, select
from .schema import setting_target

if TYPE_CHECKING:
    from .definitions import Preset


def _cell_from(args: argparse.Namespace) -> dict:
    """What the runner told us about the cell: its flags (``RunRequest.suite_args``), the one way they arrive."""
    return {
        "name": args.cell or "local",
        "target": args.target or "cpu",
        "image": args.image,
        "runner": args.runner or "direct",
    }


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _budget_item(text: str) -> tuple:
    from .harness import Budget

    name, _, value = text.partition("=")
    fields = Budget.__dataclass_fields__
    if name not in fields:
        raise argparse.ArgumentTypeError("unknown budget field %r; fields: %s" % (name, ", ".join(fields)))
    kind = int if fields[name].type in ("int", int) else float
    try:
        return name, kind(value)
    except ValueError:
        raise argparse.ArgumentTypeError("%s=%r is not a number" % (name, value))


def cmd_list(args: argparse.Namespace) -> int:
    preset = customized(PRESETS[args.preset], values=args.set)
    benchmarks = load_benchmarks()
    variants = select(all_variants(preset, benchmarks), args.only)
    if args.json:
        json.dump([{"id": v.id, "benchmark": v.benchmark, "seed": v.seed, "mode": v.mode, "api": v.api,
                    "params": v.as_dict()} for v in variants], sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    by_bench = {}
    for v in variants:
        by_bench.setdefault(v.benchmark, []).append(v)
    for b in benchmarks:
        members = by_bench.get(b.name, [])
        if not members:
            continue
        print("%s  (seed %s, %d variants)  %s" % (b.name, b.seed, len(members), b.title))
        for v in members:
            print("    %s" % v.id)
    print("%d variants in preset %r" % (len(variants), preset.name))
    return 0


def _setting(text: str) -> Tuple[str, Any]:
    """``NAME=VALUE`` or ``NAME[INDEX]=VALUE`` (an element of a shape: ``batch_shape[0]=64``)."""
    name, sep, value = text.partition("=")
    if not sep or setting_target(name) is None or not value:
        raise argparse.ArgumentTypeError("expected NAME=VALUE or NAME[INDEX]=VALUE, e.g. n=300, batch_shape[0]=64")
    return name, parse_value(value)


def _preset(args: argparse.Namespace) -> "Preset":
    preset = customized(PRESETS[args.preset], repeats=args.repeats, processes=args.processes, window=args.window,
                        values=args.set)
    if args.budget:
        import dataclasses

        preset = dataclasses.replace(preset, budget=dataclasses.replace(preset.budget, **dict(args.budget)))
    return preset


def cmd_run(args: argparse.Namespace) -> int:
    from .run import run, run_slice

    if args.plan or args.slice:
        if not (args.plan and args.slice and args.pass_no):
            print("python -m suite run: --plan, --slice and --pass go together", file=sys.stderr)
            return 2
        return run_slice(_preset(args), args.plan, args.slice, args.pass_no, args.out, rounds=args.of or 1,
                         ids=args.variant, order_seed=args.order_seed)
    return run(_preset(args), args.only, args.out, _cell_from(args))


def cmd_plan(args: argparse.Namespace) -> int:
    from .run import plan

    return plan(_preset(args), args.only, args.out, _cell_from(args))


def cmd_profile(args: argparse.Namespace) -> int:
    from .profiling import profile

    return profile(_preset(args), args.only, args.out, _cell_from(args), calls=args.calls)


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m suite", description=__doc__)
    sub = p.add_subparsers(dest="command")
    for name in ("list", "run", "plan", "profile"):
        sp = sub.add_parser(name)
        sp.add_argument("--preset", default="quick", choices=sorted(PRESETS))
        sp.add_argument("--only", action="append", default=[], metavar="PATTERN",
                        help="glob on variant id or benchmark name (plain text: substring); repeatable")
        sp.add_argument("--set", action="append", type=_setting, default=[], metavar="NAME=VALUE",
                        help="the variants with this parameter (or NAME[I]: one element of a shape) at another value "
                             "(a sweep's size: n=300, batch_shape[0]=64); repeatable")
        if name == "list":
            sp.add_argument("--json", action="store_true")
        else:
            sp.add_argument("--out", required=True, help="results JSON file (written atomically)")
            sp.add_argument("--cell", help="cell name recorded in the results")
            sp.add_argument("--target", choices=("cpu", "gpu"), help="gpu: fail loudly when TF sees no GPU")
            sp.add_argument("--image", help="image tag recorded in the results")
            sp.add_argument("--runner", help="runner recorded in the results")
            sp.add_argument("--repeats", type=_positive, help="samples per process (overrides the preset)")
            sp.add_argument("--processes", type=_positive, help="fresh processes per variant (overrides the preset)")
            sp.add_argument("--budget", action="append", type=_budget_item, default=[], metavar="FIELD=VALUE",
                            help="override one field of the preset's Budget (experiments: target_time=0.005)")
            sp.add_argument("--window", type=_positive,
                            help="variants sampled round robin together (1: one after the other; overrides the preset)")
        if name == "run":
            sp.add_argument("--plan", help="the cell's plan (python -m suite plan --out FILE): run one slice of it")
            sp.add_argument("--slice", help="the slice of the plan to run (a process group, e.g. eager:tf.keras)")
            sp.add_argument("--pass", dest="pass_no", type=_positive, help="the matrix round this slice runs in")
            sp.add_argument("--of", type=_positive, help="how many rounds there are: each process takes 1/N of the "
                                                         "preset's samples")
            sp.add_argument("--variant", action="append", default=[], metavar="ID",
                            help="with --slice: measure only these of its variants (a later round of a sequential "
                                 "run: the variants whose claim lines are still open)")
            sp.add_argument("--order-seed", type=int, metavar="N",
                            help="with --slice, in an ab run (SIDE=FILE plugins): the run's seed; which side goes "
                                 "first in each process takes turns from it round by round (suite.sides.lead_side)")
        if name == "profile":
            sp.add_argument("--calls", type=_positive, default=20,
                            help="samples' worth of calls profiled per variant (default 20), after its first call "
                                 "and warm-up")
    args = p.parse_args(argv)
    if args.command == "profile":
        return cmd_profile(args)
    if args.command == "list":
        return cmd_list(args)
    if args.command == "run":
        return cmd_run(args)
    if args.command == "plan":
        return cmd_plan(args)
    p.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
