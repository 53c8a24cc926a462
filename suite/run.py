"""``python -m suite run``: plan, run process groups, combine, write results.

The parent never imports TensorFlow; it plans, watches workers, and turns
their raw per-process samples into records (statistics, between-process
spread, unstable flags). The results document is opened, fingerprinted and
written (atomically) by ``suite.document``.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections import OrderedDict
from typing import IO, Any, Dict, List, Optional, Sequence, Tuple

from . import reference, stats
from .compat import mode_unsupported
from .definitions import Benchmark, Preset, Variant
from .document import finish, header, now_iso, take_fingerprint
from .frameworks import outside
from .harness import spread_over
from .isolation import run_group
from .plugins import side_names
from .registry import all_variants, benchmark_by_name, load_benchmarks, select
from .schema import OUTSIDE_KEY, PROGRESS_FORMAT
from .sides import Order, lead_side


def plan_groups(variants: Sequence[Variant]) -> "OrderedDict[str, List[Variant]]":
    """Variants by process group (mode + Keras package), in catalogue order."""
    groups: "OrderedDict[str, List[Variant]]" = OrderedDict()
    for v in variants:
        groups.setdefault(v.group, []).append(v)
    return groups


def unavailable(facts: Dict[str, Any], variant: Variant, bench: Optional[Benchmark] = None) -> Optional[str]:
    """Why a variant is n/a, when the fingerprint alone tells: another framework's (``outside``), or its Keras is
    absent or cannot run in its mode."""
    why = outside(facts, variant, bench)
    if why:
        return why
    keras = (facts.get("keras") or {}).get(variant.api)
    if not isinstance(keras, dict):
        return None
    if keras.get("unavailable"):
        return str(keras["unavailable"])
    tf_version = str((facts.get("tensorflow") or {}).get("version", "2"))
    return mode_unsupported(variant.api, str(keras.get("version", "")), tf_version.startswith("1."),
                            variant.mode == "eager")


def na_record(variant_id: str, reason: str) -> Dict[str, Any]:
    return {"id": variant_id, "status": "n/a", "reason": reason, "info": {}, "extra": {}, "peak_rss_mb": None,
            "wall_s": 0.0}


def combine(variant: Variant, bench: Benchmark, runs: List[Dict[str, Any]], preset: Preset) -> Dict[str, Any]:
    """One record from the raw results of each process that ran ``variant``."""
    ok = [r for r in runs if r.get("status") == "ok"]
    bad = [r for r in runs if r.get("status") != "ok"]
    per_process = [list(r["samples"]) for r in ok]
    samples = stats.all_samples(per_process)
    status = bad[0]["status"] if bad else "ok"
    reason = bad[0].get("reason") if bad else None
    if bad and ok:
        reason = "%s in %d of %d processes: %s" % (status, len(bad), len(runs), reason)
    first = ok[0] if ok else (runs[0] if runs else {})
    record: Dict[str, Any] = {
        "id": variant.id,
        "benchmark": variant.benchmark,
        "seed": variant.seed,
        "title": bench.title,
        "params": variant.as_dict(),
        "mode": variant.mode,
        "api": variant.api,
        "status": status,
        "reason": reason,
        "unit": first.get("unit", "s"),
        "samples": samples,
        "per_process": per_process,
        "iterations": {
            "per_repeat": [r["number"] for r in ok],
            "repeats": [r["repeats"] for r in ok],
            "inner": first.get("inner", 1),
            "warmup_calls": [r["warmup_calls"] for r in ok],
        },
        "stats": stats.summarize(samples) if samples and status == "ok" else None,
        "between_process": stats.between_processes(per_process) if status == "ok" else None,
        "unstable": bool(samples) and status == "ok" and stats.is_unstable(per_process, preset.unstable_cv),
        "setup": {
            "build_s": [r["build_s"] for r in ok],
            "first_call_s": [r["first_call_s"] for r in ok],
        },
        "schedule": {
            # per process: the window it was sampled in (records of one window were sampled in the same
            # rounds, sample i in round i: the host pairs them), how many rounds it ran and why it stopped
            "windows": [r.get("window") for r in ok],
            "rounds": [r.get("rounds") for r in ok],
            "stopped": [r.get("stopped") for r in ok],
        },
        "extra": dict(first.get("extra") or {}),
        "info": dict(first.get("info") or {}),
        "peak_rss_mb": max([r["peak_rss_mb"] for r in runs if r.get("peak_rss_mb") is not None], default=None),
        "wall_s": sum(float(r.get("wall_s") or 0.0) for r in runs),
    }
    leads = [str(r.get("lead") or "") for r in ok]
    if any(leads):      # an ab run's: per process, the side that went first in this variant's pair (sides.Order)
        record["schedule"]["leads"] = leads
    figures = figures_of(ok)
    if figures:
        record["figures"] = figures
    if record["stats"] and first.get("work_flops"):
        record["extra"]["gflops_per_s"] = first["work_flops"] / record["stats"]["median"] / 1e9
    tracebacks = [r["traceback"] for r in bad if r.get("traceback")]
    if tracebacks:
        record["traceback"] = tracebacks[0]
    return record


def figures_of(ok: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The figures each process measured (``Prepared.figures``), as the record keeps them: per name its unit and
    one value per process (None where a process has none)."""
    names: Dict[str, str] = {}
    for r in ok:
        for name, (_, unit) in (r.get("figures") or {}).items():
            names.setdefault(name, unit)
    return {name: {"unit": unit, "values": [((r.get("figures") or {}).get(name) or [None])[0] for r in ok]}
            for name, unit in names.items()}


class Progress:
    """One line per finished variant run: ``[suite 12/140] ok id  median``.

    The host runner parses these lines to show 'benchmark i of n' and an ETA.
    ``total`` shrinks when a variant turns out n/a or broken: it is not
    repeated in further processes.
    """

    def __init__(self, total: int, out: IO[str]) -> None:
        self.total = total
        self.done = 0
        self.out = out

    def __call__(self, rec: Dict[str, Any]) -> None:
        self.done += 1
        detail = rec.get("reason") or ""
        if rec.get("status") == "ok" and rec.get("samples"):
            med = stats.median(rec["samples"])
            detail = "median %s" % format_seconds(med)
        self.out.write(PROGRESS_FORMAT
                       % (self.done, self.total, rec.get("status"), rec.get("id"), detail))
        self.out.flush()


def format_seconds(s: float) -> str:
    rounded = float("%.3g" % s)       # the unit after rounding: 0.0009996 s is "1 ms", not "1e+03 us"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if rounded >= scale:
            return "%.3g %s" % (rounded / scale, unit)
    return "%.3g ns" % (rounded / 1e-9)



def measure(variants: Sequence[Variant], settled: Dict[str, Dict[str, Any]], preset: Preset, log: IO[str],
            by_name: Dict[str, Benchmark], passes: Optional[List[int]] = None,
            order_seed: Optional[int] = None) -> List[Dict[str, Any]]:
    """Run every variant not ``settled`` (id -> its n/a record) in ``preset.processes`` processes per group.

    ``passes``: the matrix rounds these processes belong to (an interleaved
    schedule's slice), recorded per process so the host pairs cells by round.
    ``order_seed``: an ``ab`` run's seed; each process is then told its
    ``sides.Order`` (which side goes first: ``lead_side``).
    """
    groups = plan_groups(variants)
    progress = Progress(len(variants) * preset.processes, log)
    runs: Dict[str, List[Dict[str, Any]]] = {v.id: [] for v in variants}
    done_early = set(settled)   # n/a or broken in the first process: not worth repeating
    for vid, rec in settled.items():
        if vid in runs:
            runs[vid].append(rec)
            progress.total -= preset.processes - 1
            progress(rec)
    for round_no in range(preset.processes):
        for group, members in groups.items():
            todo = [v for v in members if v.id not in done_early]
            if not todo:
                continue
            mode = todo[0].mode
            log.write("[suite] process %d/%d, group %s: %d variants\n"
                      % (round_no + 1, preset.processes, group, len(todo)))
            recs = run_group(mode, todo, preset, log, on_record=progress,
                             order=process_order(order_seed, (passes or [0])[0], round_no))
            for vid, rec in recs.items():
                runs[vid].append(rec)
                if rec.get("status") != "ok":
                    done_early.add(vid)
                    progress.total -= preset.processes - 1 - round_no
    records = [combine(v, by_name[v.benchmark], runs[v.id], preset) for v in variants]
    if passes is not None:
        for rec in records:
            n = len(rec.get("per_process") or [])
            rec.setdefault("schedule", {})["passes"] = [passes[min(i, len(passes) - 1)] for i in range(n)]
    return records


def process_order(seed: Optional[int], pass_no: int, process: int) -> Optional[Order]:
    """The ``sides.Order`` of an ``ab`` run's ``process``-th process in round ``pass_no`` (None outside ``ab``)."""
    names = side_names()
    if seed is None or not names:
        return None
    return Order(lead_side(names, seed, pass_no, process), "%d/%d/%d" % (seed, pass_no, process))


def settle(facts: Dict[str, Any], variants: Sequence[Variant]) -> Dict[str, Dict[str, Any]]:
    """The n/a records the fingerprint alone decides (a Keras package absent, another framework's variant), by id."""
    out: Dict[str, Dict[str, Any]] = {}
    for v in variants:
        why = unavailable(facts, v)
        if why:
            out[v.id] = na_record(v.id, why)
    return out


def set_aside(facts: Dict[str, Any], variants: Sequence[Variant], by_name: Dict[str, Benchmark]
              ) -> Tuple[List[Variant], List[Dict[str, Any]]]:
    """The cell's own catalogue, and the variants of frameworks it does not have by reason (``OUTSIDE_KEY``)."""
    own: List[Variant] = []
    groups: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
    for v in variants:
        why = outside(facts, v, by_name.get(v.benchmark))
        if why is None:
            own.append(v)
        else:
            groups.setdefault(why, []).append({"id": v.id, "benchmark": v.benchmark, "seed": v.seed,
                                               "params": v.as_dict(), "mode": v.mode, "api": v.api})
    return own, [{"reason": why, "variants": entries} for why, entries in groups.items()]


def slices(variants: Sequence[Variant]) -> "OrderedDict[str, List[Variant]]":
    """The run's slices for an interleaved schedule: one per process group, in catalogue order.

    Defined by the catalogue alone (mode and Keras package of each variant),
    never by what a cell can run, so slice ``eager:tf.keras`` holds the same
    variants in every cell and the host can pair cells round by round. A
    slice is one worker process: its variants share a fresh import.
    """
    return plan_groups(variants)


def _warn_unstable(doc: Dict[str, Any], preset: Preset) -> None:
    unstable = [r["id"] for r in doc["records"] if r.get("unstable")]
    if unstable:
        doc["warnings"].append("%d of %d variants are unstable (CV above %.0f%%)" % (
            len(unstable), len(doc["records"]), preset.unstable_cv * 100))


def run(
    preset: Preset,
    only: Sequence[str],
    out_path: str,
    cell: Dict[str, Any],
    log: IO[str] = sys.stderr,
    benchmarks: Optional[Sequence[Benchmark]] = None,
) -> int:
    """The whole cell in one go: fingerprint, then every group (the sequential schedule)."""
    t0 = time.monotonic()
    benchmarks = list(benchmarks) if benchmarks is not None else load_benchmarks()
    variants = select(all_variants(preset, benchmarks), only)
    doc = header(preset, only, cell, variants)
    facts = take_fingerprint(doc, log, preset)
    if facts is None:
        return finish(doc, out_path, t0, log, code=3)
    by_name = benchmark_by_name(benchmarks)
    variants, doc["config"][OUTSIDE_KEY] = set_aside(facts, variants, by_name)
    doc["records"] = measure(variants, settle(facts, variants), preset, log, by_name)
    _warn_unstable(doc, preset)
    return finish(doc, out_path, t0, log, code=0)


def plan(preset: Preset, only: Sequence[str], out_path: str, cell: Dict[str, Any], log: IO[str] = sys.stderr) -> int:
    """``python -m suite plan``: fingerprint once, settle what cannot run, and list the slices to measure.

    The plan is a results document whose records are the settled (n/a)
    variants and whose ``config.slices`` maps each slice to the ids still to
    measure; every later ``run --plan`` of this cell starts from it and never
    imports the framework just to learn about the cell again.
    """
    t0 = time.monotonic()
    benchmarks = load_benchmarks()
    variants = select(all_variants(preset, benchmarks), only)
    doc = header(preset, only, cell, variants)
    facts = take_fingerprint(doc, log, preset)
    if facts is None:
        return finish(doc, out_path, t0, log, code=3)
    by_name = benchmark_by_name(benchmarks)
    own, doc["config"][OUTSIDE_KEY] = set_aside(facts, variants, by_name)
    settled = settle(facts, own)
    doc["records"] = [combine(v, by_name[v.benchmark], [settled[v.id]], preset) for v in own if v.id in settled]
    measured = {v.id for v in own} - set(settled)
    doc["config"]["slices"] = OrderedDict(       # the whole catalogue's slices: the same keys in every cell
        (key, [v.id for v in members if v.id in measured]) for key, members in slices(variants).items())
    doc["config"]["order"] = [v.id for v in own]
    return finish(doc, out_path, t0, log, code=0)


def run_slice(preset: Preset, plan_path: str, key: str, pass_no: int, out_path: str, log: IO[str] = sys.stderr,
              rounds: int = 1, ids: Sequence[str] = (), order_seed: Optional[int] = None) -> int:
    """``python -m suite run --plan P --slice KEY --pass N --of R``: one slice of a planned cell, in fresh processes.

    Writes a results document holding only the slice's records, each process
    tagged with the matrix round it ran in (the record's ``schedule["passes"]``). With ``R``
    rounds each process takes 1/R of the preset's samples (``spread_over``).
    ``ids``: only these of the slice's variants (a sequential run's later
    rounds measure only what an open line needs; the plan's order is kept).
    ``order_seed``: an ``ab`` run's seed (``--order-seed``: ``measure``).
    """
    t0 = time.monotonic()
    preset = dataclasses.replace(preset, budget=spread_over(preset.budget, rounds))
    with open(plan_path) as f:
        planned = json.load(f)
    wanted = (planned.get("config") or {}).get("slices", {}).get(key)
    if wanted is None:
        log.write("[suite] ERROR: slice %r is not in the plan %s\n" % (key, plan_path))
        return 2
    if ids:
        wanted = [vid for vid in wanted if vid in set(ids)]
    benchmarks = load_benchmarks()
    by_id = {v.id: v for v in all_variants(preset, benchmarks)}
    missing = [vid for vid in wanted if vid not in by_id]
    doc = dict(planned, records=[], warnings=list(planned.get("warnings") or []), started=now_iso())
    doc["config"] = dict(planned["config"], slice=key, passes=[pass_no], budget=dict(preset.budget.__dict__))
    doc["config"].pop("slices", None)
    doc["config"].pop("order", None)
    if missing:
        doc["status"] = "error"
        doc["error"] = "the plan names variants this suite does not have (%s): plan the cell again" % missing[0]
        return finish(doc, out_path, t0, log, code=3)
    variants = [by_id[vid] for vid in wanted]
    log.write("[suite] slice %s, round %d: %d variants\n" % (key, pass_no, len(variants)))
    before = reference.probe()      # this container's own speed, before and after (suite.reference)
    doc["records"] = measure(variants, {}, preset, log, benchmark_by_name(benchmarks), passes=[pass_no],
                             order_seed=order_seed)
    doc["config"]["reference_s"] = [before, reference.probe()]
    _warn_unstable(doc, preset)
    return finish(doc, out_path, t0, log, code=0)
