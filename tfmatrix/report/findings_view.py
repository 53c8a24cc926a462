"""The Findings section: each finding's answer per cell (group), its headline from the claim that heads it, and
every comparison with its interval and noise (``analysis.claims.pairing.FindingResult`` in, the partial's context
out)."""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..analysis.claims.answers import ClaimResult
from ..analysis.claims.pairing import Comparison, FindingResult, GroupSummary
from ..analysis.statistics.stats import pct_faster
from ..analysis.statistics.words import A, B
from .claims_view import line_label, ratio_words, varying_keys
from .tables import fmt_interval, fmt_seconds, row_anchor


def fmt_pct(p: float) -> str:
    if p is None or math.isnan(p):
        return ""
    return f"{p:+.0f}%"


def comparison_view(f: FindingResult, c: Comparison) -> dict[str, Any]:
    fd = f.finding
    ci = c.ci
    if ci.verdict == A:
        verdict = f"{fd.a} {1 / ci.ratio:.2f}× faster"
    elif ci.verdict == B:
        verdict = f"{fd.a} {ci.ratio:.2f}× slower"
    else:
        verdict = f"no clear difference ({ci.why_unclear})"
    a_text = fd.a + (f" [{c.a_detail}]" if c.a_detail else "")
    b_text = fd.b + (f" [{c.b_detail}]" if c.b_detail else "")
    return {
        "benchmark": c.benchmark,
        "config": c.config,
        "a": a_text,
        "b": b_text,
        "group": c.group,
        "target": c.cell_a.target,
        "time_a": fmt_seconds(c.time_a),
        "time_b": fmt_seconds(c.time_b),
        "ratio": f"{ci.ratio:.3g}",
        "ratio_sort": ci.ratio,
        "ci": fmt_interval(ci),
        "pct": fmt_pct(c.pct),
        "pct_sort": c.pct,
        "pct_ci": f"{fmt_pct(c.pct_low)} … {fmt_pct(c.pct_high)}",
        "verdict": verdict,
        "verdict_class": {A: "faster", B: "slower"}.get(ci.verdict, "unclear"),
        "n": f"{ci.rounds} rounds, paired by round" if ci.rounds else
             f"{ci.n_a} / {ci.n_b}" + (" paired" if ci.paired else ""),
        "noise": (f"±{ci.noise:.0%} a round; resolves {ci.mde:.0%}" if ci.replicated and math.isfinite(ci.mde)
                  else "not enough replication")
        + (f" (previous run: {ci.rerun:.3g})" if ci.rerun is not None else ""),
        "replicated": ci.replicated,
        "unstable": c.unstable,
        "a_href": "#" + row_anchor(c.a_id) if c.a_id else "",
        "b_href": "#" + row_anchor(c.b_id) if c.b_id else "",
        "line": f"{c.group}: {a_text} vs {b_text}, {c.config}: time ratio {ci.ratio:.3g} "
                f"(95% CI {fmt_interval(ci)}), {fmt_pct(c.pct)}, {verdict}",
    }


def _median_text(f: FindingResult, comps: list[Comparison], g: GroupSummary) -> str:
    """The median ratio, per side value where the sides differ in what the question is about.

    ``stage=compiled`` and ``stage=train_built``, or ``model(x)`` and
    ``model(x, training=False)``, ask different questions: one median over
    both would hide either, so each gets its own.
    """
    fd = f.finding
    multi = len(fd.compare) > 1

    def key(c: Comparison) -> str:
        parts = ([c.benchmark] if multi else []) + [p for p in (c.a_detail, c.b_detail) if p]
        return ", ".join(parts)

    keys = list(dict.fromkeys(key(c) for c in comps))
    if len(keys) <= 1:
        return (f"median time ratio {fd.a}/{fd.b} {g.median_ratio:.3g} ({fmt_pct(pct_faster(g.median_ratio))}; "
                f"range {g.min_ratio:.3g}–{g.max_ratio:.3g})")
    parts = []
    for k in keys:
        ratios = sorted(c.ci.ratio for c in comps if key(c) == k)
        med = float(pd.Series(ratios).median())
        parts.append(f"[{k}] {med:.3g} ({len(ratios)})")
    return f"median time ratio {fd.a}/{fd.b} per side: " + "; ".join(parts)


def group_view(f: FindingResult, g: GroupSummary, comps: list[Comparison] | None = None) -> dict[str, Any]:
    fd = f.finding
    if g.a_faster > g.b_faster and g.a_faster > g.unclear:
        lean = "faster"
    elif g.b_faster > g.a_faster and g.b_faster > g.unclear:
        lean = "slower"
    else:
        lean = "unclear"
    comps = comps if comps is not None else [c for c in f.comparisons if c.group == g.group]
    return {
        "group": g.group,
        "target": g.target,
        "text": f"all configurations: {fd.a} faster in {g.a_faster}, {fd.b} faster in {g.b_faster}, no clear "
                f"difference in {g.unclear} (of {g.n}); {_median_text(f, comps, g)}",
        "lean": lean,
        "headline": False,
        "href": "",
    }


def headline_views(f: FindingResult, claims: list[ClaimResult]) -> dict[str, list[dict[str, Any]]]:
    """Per group (cell or cell pair): the seed's own configuration, from the claim that heads this finding."""
    out: dict[str, list[dict[str, Any]]] = {}
    for result in claims:
        if result.claim.finding != f.finding.key:
            continue
        varying = varying_keys(result)
        for cell in result.cells:
            for line in cell.lines:
                ci = line.comparison.ci
                label = line_label(line, varying)
                out.setdefault(cell.name, []).append({
                    "group": cell.name, "target": cell.target,
                    "text": f"the seed's configuration ({result.claim.claim.rstrip('.')}"
                            f"{'; ' + label if label else ''}{'; ' + line.standin if line.standin else ''}): "
                            f"time ratio {ci.ratio:.3g} (95% CI {fmt_interval(ci)}), "
                            f"{ratio_words(line, result.claim.a)}: {line.verdict}",
                    "lean": {"holds": "faster", "reversed": "slower"}.get(line.verdict, "unclear"),
                    "headline": True, "href": "#claim-" + result.claim.key,
                })
    return out


def answer_views(f: FindingResult, claims: list[ClaimResult]) -> list[dict[str, Any]]:
    """Each group's headline (the seed's configuration) first, then its counts over all configurations."""
    heads = headline_views(f, claims)
    groups = f.groups
    known = {g.group for g in groups}
    out = [h for name, items in heads.items() if name not in known for h in items]
    for g in groups:
        out += heads.get(g.group, [])
        out.append(group_view(f, g))
    return out


def finding_view(f: FindingResult, claims: list[ClaimResult] | None = None) -> dict[str, Any]:
    comps = [comparison_view(f, c) for c in f.comparisons]
    return {
        "key": f.finding.key,
        "seed": f.finding.seed,
        "question": f.finding.question,
        "a": f.finding.a,
        "b": f.finding.b,
        "note": f.finding.note,
        "groups": answer_views(f, claims or []),
        "comparisons": comps,
        "benchmarks": " ".join(sorted({c["benchmark"] for c in comps})),
        "notes": f.notes,
        "answered": bool(comps),
    }
