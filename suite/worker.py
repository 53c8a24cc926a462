"""The child process: import TensorFlow once, enter one mode, run variants.

Speaks JSON lines to its parent over a dedicated pipe (``--fd``), so that
whatever TensorFlow and Keras print on stdout/stderr can never corrupt the
protocol. Events: ``ready`` (after import), ``fingerprint``, ``start`` (before
each variant, so the parent can blame a crash or a hang on it) and
``record``.
"""
from __future__ import annotations

import gc
import json
import os
import sys
import time
import traceback
from typing import Any, Dict, List, Optional

from . import fingerprint
from .harness import measure, peak_rss_mb, reset_peak_rss, timer
from .registry import NotApplicable, Preset, Variant, all_variants, benchmark_by_name, load_benchmarks, preset_from_json

TRACEBACK_LINES = 25


class Env:
    """What ``Benchmark.prepare`` gets: TF, numpy, the compat layer, the preset."""

    def __init__(self, tf: Any, np: Any, compat: Any, mode: str, preset: Preset) -> None:
        self.tf = tf
        self.np = np
        self.compat = compat
        self.mode = mode
        self.preset = preset
        self.scale = preset.name

    def keras(self, api: str) -> Any:
        return self.compat.keras(api)

    def rng(self, seed: int = 1) -> Any:
        return self.np.random.RandomState(seed)


def tail(text: str, lines: int = TRACEBACK_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_variant(variant: Variant, bench: Any, env: Env) -> Dict[str, Any]:
    """One variant in this process: build, first call, warm-up, repeats."""
    reset_peak_rss()
    t_start = timer()
    out: Dict[str, Any] = {"id": variant.id, "status": "ok", "reason": None, "info": {}, "extra": {}}
    prepared = None
    try:
        t0 = timer()
        prepared = bench.prepare(variant, env)
        build = prepared.build_s if prepared.build_s is not None else timer() - t0
        m = measure(prepared.step, env.preset.budget, inner=prepared.inner)
        out.update(
            samples=m.samples,
            number=m.number,
            inner=prepared.inner,
            repeats=len(m.samples),
            warmup_calls=m.warmup_calls,
            build_s=build,
            first_call_s=m.first_call_s,
            unit=prepared.unit,
            work_flops=prepared.work_flops,
            info=dict(prepared.info),
        )
        if prepared.after is not None:
            out["extra"] = prepared.after()
    except NotApplicable as e:
        out.update(status="n/a", reason=str(e))
    except MemoryError:
        out.update(status="error", reason="MemoryError (out of memory)", traceback=tail(traceback.format_exc()))
    except Exception as e:
        out.update(status="error", reason="%s: %s" % (type(e).__name__, _first_line(str(e))),
                   traceback=tail(traceback.format_exc()))
    finally:
        if prepared is not None and prepared.cleanup is not None:
            try:
                prepared.cleanup()
            except Exception:
                pass
        prepared = None
        env.compat.clear_session()
        gc.collect()
    out["peak_rss_mb"] = peak_rss_mb()
    out["wall_s"] = timer() - t_start
    return out


def _first_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[0][:300] if lines else ""


def main(argv: Optional[List[str]] = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m suite.worker")
    p.add_argument("--fd", type=int, required=True)
    p.add_argument("--preset", required=True, help="the preset as JSON (overrides applied)")
    p.add_argument("--mode", required=True, choices=("eager", "graph"))
    p.add_argument("--plan", help="JSON file with the variant ids to run, in order")
    p.add_argument("--fingerprint", action="store_true", help="only report the environment")
    args = p.parse_args(argv)

    chan = os.fdopen(args.fd, "w", buffering=1)

    def send(obj: Dict[str, Any]) -> None:
        chan.write(json.dumps(obj, default=str) + "\n")
        chan.flush()

    t0 = timer()
    import numpy as np
    import tensorflow as tf

    from .compat import Compat

    compat = Compat(tf)
    compat.enter_mode(args.mode)
    # Move everything imported so far (TensorFlow, Keras, numpy: hundreds of
    # thousands of objects) out of the collector's reach. The harness collects
    # garbage before each repeat; without this, each of those collections
    # would scan TensorFlow itself (~0.16 s with TF 2.21 + Keras 3), and so
    # would any full collection that happens to fall inside a timed loop.
    gc.freeze()
    send({"event": "ready", "import_s": timer() - t0, "pid": os.getpid(), "mode": args.mode})

    if args.fingerprint:
        send({"event": "fingerprint", "facts": fingerprint.tf_facts(tf, compat)})
        return 0

    preset = preset_from_json(args.preset)
    with open(args.plan) as f:
        wanted = json.load(f)
    benchmarks = load_benchmarks()
    by_name = benchmark_by_name(benchmarks)
    by_id = {v.id: v for v in all_variants(preset, benchmarks)}
    env = Env(tf, np, compat, args.mode, preset)
    for vid in wanted:
        variant = by_id[vid]
        send({"event": "start", "id": vid, "time": time.time()})
        record = run_variant(variant, by_name[variant.benchmark], env)
        send({"event": "record", "record": record})
    return 0


if __name__ == "__main__":  # pragma: no cover
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: TensorFlow's thread pools can take seconds to
    # join (or hang, on some TF1 builds) and nothing is left to write.
    os._exit(code)
