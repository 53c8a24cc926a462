"""Why one side of a comparison is slower: two profiles of the same kind of work, lined up function by function.

A profile (``suite.profiling``, cProfile over N calls of a variant's step
after its first call and warm-up) says, per function, how often it ran and
how long it took by itself. Two variants (a claim's two sides in one cell)
or one variant in two cells (two releases) are compared per call of their
step: the extra time per call is split by package (TensorFlow, Keras,
tf_keras, numpy, the interpreter, the suite, the user's file) and by
function, and the functions one side calls and the other never does are
listed. Functions match across releases by where they live inside their
package and their name, not by line number (lines move between releases).

Pure: it works on the records of a cell's profiles file
(``results.profile_docs.ProfilesDoc``, read there). The sentences
(``sentences``) are built from the figures alone, so a golden pair of
profiles gives the same ranking and the same words.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...results.profile_docs import ProfilesDoc

# package -> how a path (or a built-in's name) shows it; the first match wins, in this order
PACKAGES: tuple[tuple[str, str], ...] = (
    ("tf_keras", r"(^|/)tf_keras/|\btf_keras\."),
    ("keras", r"(^|/)keras/|\bkeras\."),
    ("tensorflow", r"(^|/)tensorflow(_core)?/|\btensorflow\.|_pywrap_tf|_pywrap_tensorflow|\bTFE?_"),
    ("numpy", r"(^|/)numpy/|\bnumpy\."),
    ("jax", r"(^|/)(jax|jaxlib)/|\bjax(lib)?\."),
    ("torch", r"(^|/)torch/|\btorch\."),
    ("suite", r"/opt/tfmatrix/suite/|(^|/)suite/"),
    ("your file", r"/opt/tfmatrix/bench/"),
)
INTERPRETER = "python"      # the standard library and built-ins that no package above names
MIN_LEVEL = 0.05            # a path level holds at least this share of the slower side's step
_SITE = re.compile(r".*?/(?:site|dist)-packages/")


def package_of(file: str, name: str) -> str:
    """Which package a function belongs to, from its file (or, for a built-in, its name)."""
    text = name if file == "~" else file
    for package, pattern in PACKAGES:
        if re.search(pattern, text):
            return package
    return INTERPRETER


def function_key(file: str, name: str) -> str:
    """Where a function lives, the same across releases and hosts: path inside its package, and its name."""
    if file == "~":
        return name
    path = _SITE.sub("", file)
    path = re.sub(r".*__autograph_generated_file\w*\.py$", "<autograph>.py", path)   # a temporary file's random name
    path = re.sub(r".*/opt/tfmatrix/suite/", "suite/", path)
    path = re.sub(r".*/lib/python3\.\d+/", "", path)
    return f"{path}:{name}"


@dataclass(frozen=True)
class Function:
    """One function of a profile, per call of the variant's step."""

    key: str
    package: str
    calls: float
    self_s: float
    cum_s: float
    callers: tuple[tuple[str, float], ...] = ()     # (caller's key, time with callees when called from it) per step


@dataclass(frozen=True)
class Profile:
    """One variant's profile in one cell, per call of its step."""

    cell: str
    variant: str
    step_s: float                   # wall time of one call, profiler included
    functions: tuple[Function, ...]
    rest_s: float                   # own time of the rows the suite left out, per call
    traces: int | None              # times its tf.function was traced during the profiled calls (when known)
    first_call_s: float | None
    ops: dict[str, Any] | None = None      # TensorFlow's profiler's table per step (``analysis.explain.ops`` reads it)
    ops_unavailable: str | None = None     # why there is none
    plain_step_s: float | None = None      # a step with no profiler, same process (the profilers' overhead)

    def by_key(self) -> dict[str, Function]:
        return {f.key: f for f in self.functions}


def _merge(rows: Iterable[dict[str, Any]], per: float) -> tuple[Function, ...]:
    """Rows per call; rows that share a key (several ``__init__`` in one file) merged: calls and own time summed,
    time with callees the largest (one may call the other: a subclass's ``__init__`` calling its base's)."""
    acc: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    package: dict[str, str] = {}
    callers: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        key = function_key(str(r["file"]), str(r["name"]))
        package[key] = package_of(str(r["file"]), str(r["name"]))
        acc[key][0] += float(r["calls"]) / per
        acc[key][1] += float(r["self_s"]) / per
        acc[key][2] = max(acc[key][2], float(r["cum_s"]) / per)
        for c in r.get("callers") or ():
            callers[key][function_key(str(c[0]), str(c[2]))] += float(c[4]) / per
    return tuple(Function(k, package[k], v[0], v[1], v[2], tuple(sorted(callers[k].items()))) for k, v in acc.items())


def profile_of(record: dict[str, Any], cell: str) -> Profile:
    """A profile record of the suite's file, per call of the variant's step."""
    per = max(1, int(record["step_calls"]))
    extra = record.get("extra") or {}
    traces = extra.get("tf_tracing_count", extra.get("traces"))
    return Profile(cell, str(record["id"]), float(record["wall_s"]) / per, _merge(record["functions"], per),
                   float((record.get("rest") or {}).get("self_s", 0.0)) / per,
                   int(traces) if isinstance(traces, (int, float)) else None,
                   record.get("first_call_s"), record.get("ops"), record.get("ops_unavailable"),
                   record.get("plain_step_s"))


@dataclass(frozen=True)
class FunctionChange:
    """One function's own time and calls per step call on each side."""

    key: str
    package: str
    self_a: float
    self_b: float
    calls_a: float
    calls_b: float
    cum_a: float = 0.0              # with its callees
    cum_b: float = 0.0

    @property
    def delta(self) -> float:
        return self.self_b - self.self_a


@dataclass(frozen=True)
class Explanation:
    """Where B's time per call differs from A's."""

    a: Profile
    b: Profile
    packages: tuple[tuple[str, float, float], ...]     # (package, own time per step in A, in B), largest change first
    changes: tuple[FunctionChange, ...]                # largest change of own time first
    only_b: tuple[FunctionChange, ...]                 # functions B calls and A never does, costliest own time first
    only_a: tuple[FunctionChange, ...]
    paths_b: tuple[FunctionChange, ...] = ()           # the same, most time with their callees first: B's own path
    paths_a: tuple[FunctionChange, ...] = ()

    @property
    def extra_s(self) -> float:
        return self.b.step_s - self.a.step_s


def explain(a: Profile, b: Profile, top: int = 10) -> Explanation:
    """Line up two profiles per step call: packages, functions, and the calls only one side makes."""
    fa, fb = a.by_key(), b.by_key()
    changes = []
    for key in set(fa) | set(fb):
        x, y = fa.get(key), fb.get(key)
        changes.append(FunctionChange(key, (x or y).package if (x or y) else INTERPRETER,  # type: ignore[union-attr]
                                      x.self_s if x else 0.0, y.self_s if y else 0.0,
                                      x.calls if x else 0.0, y.calls if y else 0.0,
                                      x.cum_s if x else 0.0, y.cum_s if y else 0.0))
    by_package: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for c in changes:
        by_package[c.package][0] += c.self_a
        by_package[c.package][1] += c.self_b
    packages = tuple(sorted(((p, v[0], v[1]) for p, v in by_package.items()), key=lambda t: -abs(t[2] - t[1])))
    ranked = tuple(sorted(changes, key=lambda c: (-abs(c.delta), c.key)))
    only_b = [c for c in changes if c.calls_a == 0 and c.calls_b > 0]
    only_a = [c for c in changes if c.calls_b == 0 and c.calls_a > 0]
    return Explanation(a, b, packages, ranked[:top],
                       tuple(sorted(only_b, key=lambda c: (-c.self_b, c.key))[:top]),
                       tuple(sorted(only_a, key=lambda c: (-c.self_a, c.key))[:top]),
                       tuple(sorted(only_b, key=lambda c: (-c.cum_b, c.key))[:top]),
                       tuple(sorted(only_a, key=lambda c: (-c.cum_a, c.key))[:top]))


def ms(seconds: float) -> str:
    """A time per step in words: "1.2 s", "53.9 ms"."""
    return f"{seconds:.3g} s" if seconds >= 1 else f"{seconds * 1e3:.3g} ms"


def _calls(n: float) -> str:
    return f"{n:.3g}" if n < 10 else f"{n:,.0f}"


def _times(n: float) -> str:
    return "once" if n == 1 else f"{_calls(n)} times"


def short(key: str) -> str:
    """A function key without its folders: ``data_adapter.py:__init__``."""
    return key.rsplit("/", 1)[-1]


def path_levels(paths: Sequence[FunctionChange], on_b: bool, step_s: float, n: int = 3,
                drop: float = 0.85) -> list[tuple[FunctionChange, float]]:
    """The outermost functions of one side's own path, one per level: each at most ``drop`` of the one before.

    ``paths`` are the functions only that side calls, most time with callees
    first; a chain of wrappers with about the same time is one level, named
    by its outermost function. A time above the step's own (keys merged
    across nested calls) is no level; nor are the suite's own functions (each
    variant has its own step closure) or levels under ``MIN_LEVEL`` of the step.
    """
    out: list[tuple[FunctionChange, float]] = []
    for c in paths:
        t = c.cum_b if on_b else c.cum_a
        if c.package == "suite":        # the suite's own step closures differ by variant: not a path of the code
            continue
        if t < MIN_LEVEL * step_s:
            break
        if t > 1.01 * step_s or (out and t > drop * out[-1][1]):
            continue
        out.append((c, t))
        if len(out) == n:
            break
    return out


def sentences(e: Explanation, label_a: str = "A", label_b: str = "B") -> list[str]:
    """What the figures say, in words a person can act on; the first says how much, the next where and why."""
    out = []
    extra = e.extra_s
    slower, faster = (label_b, label_a) if extra >= 0 else (label_a, label_b)
    slow, fast = (e.b.step_s, e.a.step_s) if extra >= 0 else (e.a.step_s, e.b.step_s)
    ratio = slow / fast if fast > 0 else float("inf")
    out.append(f"{slower} takes {ms(slow)} per step against {ms(fast)} for {faster} ({ratio:.2f}x, profiler "
               f"included): {ms(abs(extra))} more per step.")
    levels = path_levels(e.paths_b if extra >= 0 else e.paths_a, extra >= 0, slow)
    if levels:
        under = [f"{t / slow:.0%} under {short(c.key)}" for c, t in levels]
        where = under[0] if len(under) == 1 else ", ".join(under[:-1]) + " and " + under[-1]
        out.append(f"Where the paths part: {slower} spends {where.replace(' under', ' of its step under', 1)} "
                   f"(with their callees), none of which {faster} calls.")
    moved = [(p, b - a) for p, a, b in e.packages if (b - a) * extra > 0]
    total = sum(d for _, d in moved)
    moved = [(p, d) for p, d in moved if total and d / total >= 0.005]
    if moved and total:
        shares = ", ".join(f"{p} {d / total:.0%}" for p, d in moved[:3])
        out.append(f"Of that, the packages' own time: {shares}.")
    lead = next((c for c in e.changes if c.delta * extra > 0), None)
    rival = next((c for c in e.changes if c.delta * extra < 0), None)
    if lead is not None and rival is not None and abs(lead.delta) > abs(extra) and abs(rival.delta) > abs(extra) / 2:
        # the two sides spend their time in different functions (eager execution against Session.run):
        # no share of the difference belongs to either; say where each side's time is instead
        own = (lead.self_b, rival.self_a) if extra >= 0 else (lead.self_a, rival.self_b)
        out.append(f"{slower}'s time is mostly the own time of {lead.key} ({ms(own[0])} per step), {faster}'s "
                   f"of {rival.key} ({ms(own[1])}): the two run their work through different entry points, and the "
                   "difference is inside them, below what cProfile sees.")
    elif lead is not None and extra:
        if lead.calls_a and lead.calls_b:
            how = f"called {_times(lead.calls_b)} per step by {label_b} and {_times(lead.calls_a)} by {label_a}"
        else:
            how = (f"called only by {label_b if lead.calls_b else label_a}, "
                   f"{_times(max(lead.calls_a, lead.calls_b))} per step")
        native = ": native code, whose inside cProfile does not see" if lead.key.startswith("<built-in") else ""
        out.append(f"{abs(lead.delta) / abs(extra):.0%} of the difference is the own time of {lead.key} "
                   f"({lead.package}), {how}{native}.")
    only = e.only_b if extra >= 0 else e.only_a
    if only:
        cost = sum(c.self_b if extra >= 0 else c.self_a for c in only)
        names = ", ".join(short(c.key) for c in only[:3])
        out.append(f"{slower} makes calls {faster} never does ({len(only)} functions, {ms(cost)} per step of their "
                   f"own): {names}.")
    ta, tb = e.a.traces, e.b.traces
    if ta is not None and tb is not None and ta != tb:
        out.append(f"Its tf.function was traced {_times(tb)} for {label_b} and {_times(ta)} for {label_a} (first "
                   "call, warm-up and profiled calls): retracing.")
    return out


def report_lines(e: Explanation, label_a: str = "A", label_b: str = "B", rows: int = 8) -> list[str]:
    """The figures behind the sentences: packages and functions, own time per step on each side."""
    lines = [f"{'package':<12} {label_a:>12} {label_b:>12}"]
    for p, a, b in e.packages[:rows]:
        lines.append(f"{p:<12} {ms(a):>12} {ms(b):>12}")
    lines.append(f"{'function (own time per step)':<60} {label_a:>10} {label_b:>10} {'calls ' + label_a:>9} "
                 f"{'calls ' + label_b:>9}")
    for c in e.changes[:rows]:
        key = c.key if len(c.key) <= 60 else "..." + c.key[-57:]
        own_a, own_b = (ms(c.self_a) if c.calls_a else "-"), (ms(c.self_b) if c.calls_b else "-")
        lines.append(f"{key:<60} {own_a:>10} {own_b:>10} {_calls(c.calls_a):>9} {_calls(c.calls_b):>9}")
    return lines


def pair(doc_a: ProfilesDoc, id_a: str, doc_b: ProfilesDoc, id_b: str) -> tuple[Profile, Profile] | str:
    """Both sides' profiles (``id_a`` of ``doc_a``'s cell, ``id_b`` of ``doc_b``'s), or why there is nothing to
    explain ("could not profile: ...")."""
    found = []
    for doc, vid in ((doc_a, id_a), (doc_b, id_b)):
        cell = doc.cell
        rec = doc.records.get(vid)
        if rec is None:
            return f"could not profile {vid} in {cell}: the profiled run has no such variant"
        if rec.get("status") != "ok":
            return f"could not profile {vid} in {cell}: {rec.get('reason') or rec.get('status')}"
        found.append(profile_of(rec, cell))
    return found[0], found[1]
