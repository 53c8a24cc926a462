"""The child process: import TensorFlow once, enter one mode, run variants.

Speaks JSON lines to its parent over a dedicated pipe (``--fd``), so that
whatever TensorFlow and Keras print on stdout/stderr can never corrupt the
protocol. Events: ``ready`` (after import), ``fingerprint``, ``start`` (before
each variant is built) and ``bout`` (before each of its samples), so the
parent can blame a crash or a hang on the variant that was running, and
``record``. Variants run in windows (``run_window``): built one after the
other, then sampled round robin.
"""
from __future__ import annotations

import gc
import json
import os
import random
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import fingerprint
from .definitions import NotApplicable, Preset, Variant, preset_from_json
from .harness import Sampler, interleave, peak_rss_mb, reset_peak_rss, run_loop, timer
from .registry import all_variants, benchmark_by_name, load_benchmarks
from .schema import NO_TF_BACKENDS
from .sides import Order, Sides, crossover

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


def _base_record(variant: Variant) -> Dict[str, Any]:
    return {"id": variant.id, "status": "ok", "reason": None, "info": {}, "extra": {}}


def _failed(out: Dict[str, Any], error: BaseException, text: str) -> None:
    if isinstance(error, MemoryError):
        out.update(status="error", reason="MemoryError (out of memory)", traceback=tail(text))
    else:
        out.update(status="error", reason="%s: %s" % (type(error).__name__, _first_line(str(error))),
                   traceback=tail(text))


def _cleanup(prepared: Any) -> None:
    if prepared is not None and prepared.cleanup is not None:
        try:
            prepared.cleanup()
        except Exception:
            pass


def windows(variants: Sequence[Variant], by_name: Dict[str, Any], size: int) -> List[List[Variant]]:
    """Consecutive variants with the same window key, at most ``size`` together.

    A window's variants are built together and sampled round by round; the
    key (by default the benchmark) keeps what a comparison divides in one
    window, and ``size`` bounds how many models are alive at once.
    """
    out: List[List[Variant]] = []
    last = None
    for v in variants:
        key = by_name[v.benchmark].window_key(v)
        if out and key == last and len(out[-1]) < max(1, size):
            out[-1].append(v)
        else:
            out.append([v])
        last = key
    return out


def run_window(window: Sequence[Variant], tag: str, by_name: Dict[str, Any], env: Env,
               send: Callable[[Dict[str, Any]], None], rng: Optional[random.Random] = None,
               lead: str = "") -> None:
    """Build every variant of a window, sample them interleaved, then send one record each.

    Build, first call, warm-up and calibration happen per variant (timed
    apart, as before); the steady-state samples are taken in rounds over the
    whole window (``harness.interleave``), and each record says which window
    it was sampled in (``window``), so the host can pair two variants of a
    window sample by sample. ``rng``: the window's draws (default: seeded by
    the OS); ``lead``: an ``ab`` process's side that goes first in each pair
    (``sides.crossover``), recorded in each record (``lead``).
    """
    live: List[Tuple[Variant, Any, Sampler, Dict[str, Any], float]] = []
    # Which variant is built first, where its objects land and whose bout comes first: a position that is the
    # same in every process is a bias no interval sees (two identical sides of an A/B came out 2-4% apart;
    # Mytkowicz et al. 2009). Shuffled per process and each build's heap offset moved by a random pad, it becomes
    # noise between processes, which the rounds measure; in an ``ab`` process the two sides of each pair take
    # turns instead (``lead``), so the host can also see what going first gave them.
    rng = rng if rng is not None else random.Random()
    crossed = bool(lead) and isinstance(by_name[window[0].benchmark], Sides)
    order = crossover(window, lead, rng) if crossed else list(window)
    if not crossed:
        rng.shuffle(order)
    pads = []
    for variant in order:
        pads.append(bytearray(rng.randrange(1, 1 << 16)))
        send({"event": "start", "id": variant.id, "time": time.time()})
        reset_peak_rss()
        t_start = timer()
        out = _base_record(variant)
        if crossed:
            out["lead"] = lead
        prepared = None
        try:
            t0 = timer()
            prepared = by_name[variant.benchmark].prepare(variant, env)
            build = prepared.build_s if prepared.build_s is not None else timer() - t0
            sampler = Sampler(prepared.step, env.preset.budget, inner=prepared.inner, self_timed=prepared.self_timed)
            out.update(build_s=build, first_call_s=sampler.first_call_s, unit=prepared.unit,
                       work_flops=prepared.work_flops, info=dict(prepared.info), window=tag)
            live.append((variant, prepared, sampler, out, timer() - t_start))
        except NotApplicable as e:
            out.update(status="n/a", reason=str(e))
        except Exception as e:      # MemoryError included: an error record, the window goes on
            _failed(out, e, traceback.format_exc())
        out["peak_rss_mb"] = peak_rss_mb()
        if out["status"] != "ok":
            _cleanup(prepared)
            out["wall_s"] = timer() - t_start
            send({"event": "record", "record": out})

    samplers = [s for _, _, s, _, _ in live]
    rounds = interleave(samplers, before=lambda i: send({"event": "bout", "id": live[i][0].id}))
    del pads
    for _variant, prepared, sampler, out, setup_wall in live:
        if sampler.error is not None:
            _failed(out, sampler.error, sampler.error_text)
        else:
            m = sampler.result()
            out.update(samples=m.samples, number=m.number, inner=prepared.inner, repeats=len(m.samples),
                       warmup_calls=m.warmup_calls, stopped=m.stopped, rounds=rounds)
            if prepared.after is not None:
                try:
                    out["extra"] = prepared.after()
                except Exception as e:
                    _failed(out, e, traceback.format_exc())
            if prepared.figures is not None and out["status"] == "ok":
                try:
                    out["figures"] = {k: [float(v), str(u)] for k, (v, u) in prepared.figures().items()}
                except Exception as e:
                    _failed(out, e, traceback.format_exc())
        _cleanup(prepared)
        out["wall_s"] = setup_wall + sampler.wall
        send({"event": "record", "record": out})


def profile_window(window: Sequence[Variant], by_name: Dict[str, Any], env: Env,
                   send: Callable[[Dict[str, Any]], None], calls: int) -> None:
    """``--profile N``: each variant built, first called and warmed up as ``run_window`` does, then ``calls``
    samples' worth of calls under cProfile (``suite.profiling``) and, apart, a few under TensorFlow's own profiler
    (``suite.opprofile``); one record each, never a time."""
    from .opprofile import OP_SAMPLES, op_profile
    from .profiling import new_record, profile_calls

    for variant in window:
        send({"event": "start", "id": variant.id, "time": time.time()})
        out = new_record(variant)
        prepared = None
        try:
            prepared = by_name[variant.benchmark].prepare(variant, env)
            sampler = Sampler(prepared.step, env.preset.budget, inner=prepared.inner)
            out.update(first_call_s=sampler.first_call_s, info=dict(prepared.info))
            few = max(1, min(calls, OP_SAMPLES)) * max(1, sampler.number)
            out["plain_step_s"] = run_loop(prepared.step, few) / few   # no profiler: what each one costs
            out.update(profile_calls(prepared.step, max(1, calls) * max(1, sampler.number)))
            out.update(op_profile(prepared.step, few))
            if prepared.after is not None:
                out["extra"] = prepared.after()
        except NotApplicable as e:
            out.update(status="n/a", reason=str(e))
        except Exception as e:      # MemoryError included, as in run_window
            _failed(out, e, traceback.format_exc())
        _cleanup(prepared)
        send({"event": "record", "record": out})


def _no_tf_guard(send: Callable[[Dict[str, Any]], None], kind: str) -> Callable[[Dict[str, Any]], None]:
    """``send`` that turns an ok record into an error once TensorFlow is in this jax/torch process."""
    from .backend import tf_imported

    def guarded(obj: Dict[str, Any]) -> None:
        rec = obj.get("record")
        if obj.get("event") == "record" and rec and rec.get("status") == "ok" and tf_imported():
            rec.update(status="error", reason="TensorFlow was imported in a Keras 3 on %s variant: the cell "
                                              "must not use it" % kind)
        send(obj)

    return guarded


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
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="profile N calls a sample of each variant instead of sampling it (suite.profiling)")
    p.add_argument("--order", help="LEAD:SEED: an ab process's order (sides.Order): LEAD's side first in each pair, "
                                   "its file imported first, the windows' draws from SEED")
    args = p.parse_args(argv)

    chan = os.fdopen(args.fd, "w", buffering=1)

    def send(obj: Dict[str, Any]) -> None:
        chan.write(json.dumps(obj, default=str) + "\n")
        chan.flush()

    t0 = timer()
    import numpy as np

    from . import backend as keras_backend

    kind = keras_backend.cell_backend()
    tf: Any = None
    if kind in NO_TF_BACKENDS:      # Keras 3 on JAX/PyTorch: TensorFlow is never imported
        import keras  # noqa: F401  (imports the backend: part of the import time, like TF's)

        compat: Any = keras_backend.BackendCompat(kind)
    else:
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
        facts = fingerprint.tf_facts(tf, compat) if tf is not None else keras_backend.facts(compat)
        send({"event": "fingerprint", "facts": facts})
        return 0
    if tf is None:
        send = _no_tf_guard(send, kind)

    preset = preset_from_json(args.preset)
    with open(args.plan) as f:
        wanted = json.load(f)
    order = Order.parse(args.order) if args.order else None
    benchmarks = load_benchmarks(order.lead if order else "")
    by_name = benchmark_by_name(benchmarks)
    by_id = {v.id: v for v in all_variants(preset, benchmarks)}
    env = Env(tf, np, compat, args.mode, preset)
    for k, window in enumerate(windows([by_id[vid] for vid in wanted], by_name, preset.window)):
        if args.profile:
            profile_window(window, by_name, env, send, args.profile)
        elif order is not None:
            run_window(window, "%d:%d" % (os.getpid(), k), by_name, env, send, order.rng(k), order.lead)
        else:
            run_window(window, "%d:%d" % (os.getpid(), k), by_name, env, send)
        # the window's models are unreachable once run_window has returned: free them before the next one
        env.compat.clear_session()
        gc.collect()
    return 0


if __name__ == "__main__":  # pragma: no cover
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: TensorFlow's thread pools can take seconds to
    # join (or hang, on some TF1 builds) and nothing is left to write.
    os._exit(code)
