"""What TensorFlow ran under each side's step, op by op: the level below cProfile's native calls.

``suite.opprofile`` runs each profiled variant's step again under TensorFlow's own profiler (TF 2.2+)
and keeps, per step, the op types by kind: eager ops, ops a graph function or session executed,
``tf.function`` calls, HLO ops of an XLA program (where the release traces them) and copies between
host and device; and per ``tf.function`` how often it was called and traced. Lined up for two sides,
that says what cProfile cannot: how many ops each side runs per step, which op type moved, whether
one side runs an XLA program where the other runs ops, whether a function is traced again on every
call, and how many copies a GPU side makes.

Pure: works on the profile records ``analysis.explain.profiles`` read.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .profiles import Explanation, Profile, ms, sentences

KIND_WORDS = {"eager": "eager ops", "graph": "graph ops", "function": "tf.function calls", "xla": "XLA (HLO) ops",
              "copy": "host-device copies"}
KIND_ORDER = ("eager", "graph", "function", "xla", "copy")
PROGRAM_SHARE = 0.5     # a call whose inside is not traced is "the step's program" when it holds this much of it
OPS_SHARE = 0.1         # a side's top op types are worth naming when they hold this much of its step


@dataclass(frozen=True)
class OpType:
    """One op type's executions and time per step on one side."""

    kind: str
    type: str
    count: float
    time_s: float


@dataclass(frozen=True)
class Ops:
    """One side's op table per step."""

    types: tuple[OpType, ...]
    kinds: dict[str, tuple[float, float]]          # kind -> (count, time) per step
    functions: dict[str, tuple[float, int]]        # tf.function -> (calls per step, times traced in the calls)
    steps: int = 1                                 # step calls under the profiler

    def time_of(self, kind: str, op: str) -> tuple[float, float]:
        for t in self.types:
            if t.kind == kind and t.type == op:
                return t.count, t.time_s
        return 0.0, 0.0


def ops_of(profile: Profile) -> Ops | str:
    """A profile's op table, or why it has none."""
    raw = profile.ops
    if not isinstance(raw, dict):
        return profile.ops_unavailable or "no op table (profiled before tfmatrix kept one)"
    types = tuple(OpType(str(r["kind"]), str(r["type"]), float(r["count"]), float(r["time_s"]))
                  for r in raw.get("types") or ())
    kinds = {str(k): (float(v["count"]), float(v["time_s"])) for k, v in (raw.get("kinds") or {}).items()}
    functions = {str(k): (float(v["calls"]), int(v["traced"])) for k, v in (raw.get("functions") or {}).items()}
    return Ops(types, kinds, functions, max(1, int(raw.get("step_calls") or 1)))


def _count(n: float) -> str:
    return f"{n:.2g}" if n < 10 else f"{n:,.0f}"


def _side(ops: Ops) -> str:
    parts = [f"{_count(ops.kinds[k][0])} {KIND_WORDS[k]} ({ms(ops.kinds[k][1])})" for k in KIND_ORDER
             if k in ops.kinds and ops.kinds[k][0] > 0]
    return ", ".join(parts) if parts else "no op it traces"


def moved_most(a: Ops, b: Ops, extra: float) -> tuple[OpType, float, float, float, float] | None:
    """The op type whose time per step moved most in the direction of the difference: (type, time A, time B,
    count A, count B)."""
    keys = {(t.kind, t.type) for t in a.types} | {(t.kind, t.type) for t in b.types}
    best = None
    for kind, op in keys:
        if kind == "function":       # a call's time holds its ops' time: the ops say more
            continue
        (ca, ta), (cb, tb) = a.time_of(kind, op), b.time_of(kind, op)
        if (tb - ta) * extra > 0 and (best is None or abs(tb - ta) > abs(best[2] - best[1])):
            best = (OpType(kind, op, 0, 0), ta, tb, ca, cb)
    return best


def op_sentences(e: Explanation, label_a: str = "A", label_b: str = "B") -> list[str]:
    """What TensorFlow's profiler saw under each side's step, in words."""
    a, b = ops_of(e.a), ops_of(e.b)
    if isinstance(a, str) and isinstance(b, str):
        return [f"TensorFlow's ops: not profiled ({a})."] if a == b else \
            [f"TensorFlow's ops: not profiled ({label_a}: {a}; {label_b}: {b})."]
    if isinstance(a, str) or isinstance(b, str):
        which, why = (label_a, a) if isinstance(a, str) else (label_b, b)
        return [f"TensorFlow's ops: not profiled for {which} ({why})."]
    out = [f"Per step, TensorFlow ran for {label_a}: {_side(a)}; for {label_b}: {_side(b)} (its profiler's own "
           "time included)."]
    extra = e.extra_s
    best = moved_most(a, b, extra)
    if best is not None and extra:
        t, ta, tb, ca, cb = best
        share = abs(tb - ta) / abs(extra)
        if not ca or not cb:
            who, n, spent = (label_b, cb, tb) if cb else (label_a, ca, ta)
            out.append(f"The op type that moved most: {t.type} ({KIND_WORDS[t.kind]}), run only by {who}: "
                       f"{_count(n)} per step, {ms(spent)}.")
        else:
            part = f", {share:.0%} of the difference" if share <= 1 else ""
            out.append(f"The op type that moved most: {t.type} ({KIND_WORDS[t.kind]}), {ms(ta)} per step for "
                       f"{label_a} against {ms(tb)} for {label_b} ({_count(ca)} against {_count(cb)} "
                       f"executions){part}.")
    for ops, label, step in ((a, label_a, e.a.step_s), (b, label_b, e.b.step_s)):
        programs = [t for t in ops.types if t.kind == "function"]
        if programs and not {"graph", "xla"} & set(ops.kinds) and programs[0].time_s >= PROGRAM_SHARE * step:
            out.append(f"{label}'s step is {_count(programs[0].count)} call(s) of {programs[0].type} per step "
                       f"({ms(programs[0].time_s)}), a program whose inside this release's profiler does not show "
                       "(with jit_compile, XLA's; TF 2.21 traces its HLO ops, 2.15 and 2.16 do not).")
        elif best is None and extra:
            top = [t for t in ops.types if t.kind in ("graph", "eager", "xla")][:3]
            if top and sum(t.time_s for t in top) >= OPS_SHARE * step:
                out.append(f"{label}'s op time is mostly " + ", ".join(
                    f"{t.type} ({ms(t.time_s)}, {_count(t.count)} runs)" for t in top) + ".")
    for ops, other, label, olabel in ((a, b, label_a, label_b), (b, a, label_b, label_a)):
        for name, (calls, traced) in sorted(ops.functions.items()):
            theirs = other.functions.get(name, (0.0, 0))[1]
            if traced and calls and traced > theirs:
                every = "on every call" if traced >= round(calls * ops.steps) else "during the calls"
                out.append(f"{name} was traced {traced} times in {_count(calls * ops.steps)} calls for {label} "
                           f"(against {theirs} for {olabel}): it is traced again {every}, after warm-up (retracing).")
    copies_a, copies_b = a.kinds.get("copy", (0.0, 0.0)), b.kinds.get("copy", (0.0, 0.0))
    if copies_a[0] or copies_b[0]:
        out.append(f"Copies between host and device per step: {_count(copies_a[0])} ({ms(copies_a[1])}) for "
                   f"{label_a}, {_count(copies_b[0])} ({ms(copies_b[1])}) for {label_b}.")
    return out


def overhead(profile: Profile) -> tuple[float | None, float | None]:
    """(cProfile's, TensorFlow's profiler's) step time over the same step with no profiler, where measured."""
    plain = profile.plain_step_s
    if not plain:
        return None, None
    raw = profile.ops if isinstance(profile.ops, dict) else {}
    tf = float(raw["wall_s"]) / max(1, int(raw.get("step_calls") or 1)) / plain if raw.get("wall_s") else None
    return profile.step_s / plain, tf


def overhead_line(e: Explanation, label_a: str = "A", label_b: str = "B") -> str | None:
    """What each profiler cost each side, measured in the profiled run itself (a guide to how far to trust a split)."""
    parts = []
    for p, label in ((e.a, label_a), (e.b, label_b)):
        cp, tf = overhead(p)
        if cp is not None:
            parts.append(f"{label}: cProfile {cp:.2f}x" + (f", TensorFlow's profiler {tf:.2f}x" if tf else ""))
    return ("Profilers' cost against the same step unprofiled (same process): " + "; ".join(parts) + ".") \
        if parts else None


def explanation_sentences(e: Explanation, label_a: str = "A", label_b: str = "B") -> list[str]:
    """Python level (cProfile), then TensorFlow level (its profiler): what ``explain``, the why panel and bisect say."""
    return sentences(e, label_a, label_b) + op_sentences(e, label_a, label_b)


def op_lines(e: Explanation, label_a: str = "A", label_b: str = "B", rows: int = 8) -> list[str]:
    """The op types behind the sentences: executions and time per step on each side."""
    a, b = ops_of(e.a), ops_of(e.b)
    if isinstance(a, str) or isinstance(b, str):
        return []
    keys = ranked_op_types(e)
    lines = [f"{'op type (per step)':<44} {label_a:>10} {label_b:>10} {'runs ' + label_a:>9} {'runs ' + label_b:>9}"]
    for kind, op in keys[:rows]:
        (ca, ta), (cb, tb) = a.time_of(kind, op), b.time_of(kind, op)
        name = f"{op} [{kind}]"
        name = name if len(name) <= 44 else "..." + name[-41:]
        lines.append(f"{name:<44} {ms(ta) if ca else '-':>10} {ms(tb) if cb else '-':>10} {_count(ca):>9} "
                     f"{_count(cb):>9}")
    return lines


def ranked_op_types(e: Explanation) -> Sequence[tuple[str, str]]:
    """(kind, type) in the order ``op_lines`` ranks them (what a golden test pins)."""
    a, b = ops_of(e.a), ops_of(e.b)
    if isinstance(a, str) or isinstance(b, str):
        return []
    keys = {(t.kind, t.type) for t in a.types} | {(t.kind, t.type) for t in b.types}
    return sorted(keys, key=lambda k: (-abs(b.time_of(*k)[1] - a.time_of(*k)[1]), k))

