"""A profile's call tree, rebuilt from its caller edges: what a flame graph (drawn top down: an icicle) draws.

cProfile keeps, per function, its callers and the time it took (with its
callees) when called from each, not whole stacks. The tree is rebuilt as
gprof does it: a function's time on one path is shared out among its callees
in proportion to each edge's time, so a chain of wrappers is exact and a
function reached by several paths splits its callees alike on each. That is
enough to see where two sides' paths part; the function tables
(``profiles.explain``) stay the exact figures.

Pure: ``call_tree`` takes one ``Profile``, ``diff_tree`` lines up two, and
``speedscope`` writes a tree in speedscope's file format (a standard viewer:
https://www.speedscope.app), one profile per variant.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .profiles import Profile

STEP = "<step>"            # the root: one call of the variant's step
MIN_SHARE = 0.005          # a path under this share of the step is not drawn
MAX_DEPTH = 18             # frames below the step
_PROFILER = "_lsprof.Profiler"    # cProfile's own disable() call, recorded at the top level


@dataclass(frozen=True)
class Frame:
    """One path from the step down, its time per step on each side (0 where that side never takes it)."""

    path: tuple[str, ...]          # function keys, the step's own callee first
    package: str
    a_s: float
    b_s: float

    @property
    def key(self) -> str:
        return self.path[-1]


def call_tree(p: Profile, min_share: float = MIN_SHARE, max_depth: int = MAX_DEPTH) -> dict[tuple[str, ...], float]:
    """Time per step of every path from the top down (a path never enters a function twice)."""
    funcs = p.by_key()
    children: dict[str, list[tuple[str, float]]] = defaultdict(list)
    roots = []
    for f in p.functions:
        if not f.callers:
            if _PROFILER not in f.key:
                roots.append((f.key, f.cum_s))
            continue
        for caller, t in f.callers:
            children[caller].append((f.key, t))
    floor = min_share * p.step_s
    out: dict[tuple[str, ...], float] = {}

    def grow(path: tuple[str, ...], t: float) -> None:
        if len(path) >= max_depth:
            return
        f = funcs.get(path[-1])
        if f is None or f.cum_s <= 0:
            return
        kids = [(k, e * t / f.cum_s) for k, e in children.get(path[-1], ()) if k not in path]
        total = sum(e for _, e in kids)
        scale = min(1.0, t / total) if total > 0 else 1.0
        for k, e in sorted(kids):
            if e * scale >= floor:
                out[path + (k,)] = e * scale
                grow(path + (k,), e * scale)

    total = sum(t for _, t in roots)
    scale = min(1.0, p.step_s / total) if total > 0 else 1.0
    for key, t in sorted(roots):
        if t * scale >= floor:
            out[(key,)] = t * scale
            grow((key,), t * scale)
    return out


def diff_tree(a: Profile, b: Profile, min_share: float = MIN_SHARE,
              max_depth: int = MAX_DEPTH) -> list[Frame]:
    """Every path either side takes, with both sides' time per step, in path order (parents before children)."""
    ta, tb = call_tree(a, min_share, max_depth), call_tree(b, min_share, max_depth)
    packages = {f.key: f.package for f in a.functions} | {f.key: f.package for f in b.functions}
    return [Frame(path, packages.get(path[-1], ""), ta.get(path, 0.0), tb.get(path, 0.0))
            for path in sorted(set(ta) | set(tb))]


def speedscope(profiles: Sequence[Profile], name: str) -> dict[str, Any]:
    """The profiles' call trees as one speedscope file ("sampled": each path weighted by its own time, in ms)."""
    frames: list[dict[str, str]] = []
    index: dict[str, int] = {}
    out = []
    for p in profiles:
        tree = call_tree(p)
        below: dict[tuple[str, ...], float] = defaultdict(float)
        for path, t in tree.items():
            below[path[:-1]] += t
        samples, weights = [], []
        for path, t in sorted(tree.items()):
            own = max(0.0, t - below[path])
            if own <= 0:
                continue
            for key in path:
                if key not in index:
                    index[key] = len(frames)
                    frames.append({"name": key})
            samples.append([index[k] for k in path])
            weights.append(own * 1e3)
        out.append({"type": "sampled", "name": f"{p.variant} ({p.cell}), per step", "unit": "milliseconds",
                    "startValue": 0, "endValue": sum(weights), "samples": samples, "weights": weights})
    return {"$schema": "https://www.speedscope.app/file-format-schema.json", "name": name,
            "exporter": "tfmatrix (rebuilt from cProfile's caller edges)", "shared": {"frames": frames},
            "profiles": out}
