"""The report page: the template's context (summary, warnings, findings, charts, tables, environment, failures).

The page is one self-contained file: CSS, JavaScript and SVG are inline, and
nothing refers to the network. ``template.html`` is a jinja2 template with
autoescaping; the only markup passed in unescaped is the SVG that
``charts.py`` builds (it escapes its own text).
"""
from __future__ import annotations

import datetime
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup

from .. import __version__
from ..analysis.cells import CellResult, Refused
from ..analysis.chart_data import CHARTS, chart_data
from ..analysis.claim_records import SEEDS
from ..analysis.claims import ClaimResult
from ..analysis.frame import results_rows
from ..analysis.pairing import Comparison, FindingResult, GroupSummary
from ..analysis.statistics.stats import noise_of, pct_faster
from ..results.documents import CELL_FAILURES, CELL_STATUSES
from .charts import chart_html, host_speed_svg
from .claims_view import claim_view, line_label, ratio_words, sequential_note, varying_keys
from .grid import family_heads, grid_view
from .tables import Baselines, BenchTable, fmt_interval, fmt_seconds, row_anchor
from .warnings import Warning_, first_line, host_line

HERE = Path(__file__).resolve().parent


def fmt_pct(p: float) -> str:
    if p is None or math.isnan(p):
        return ""
    return f"{p:+.0f}%"


def comparison_view(f: FindingResult, c: Comparison) -> dict[str, Any]:
    fd = f.finding
    ci = c.ci
    if ci.verdict == "a":
        verdict = f"{fd.a} {1 / ci.ratio:.2f}× faster"
    elif ci.verdict == "b":
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
        "verdict_class": {"a": "faster", "b": "slower"}.get(ci.verdict, "unclear"),
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


def env_row(c: CellResult) -> dict[str, Any]:
    tf = c.tf_facts
    host = c.host_facts
    build = tf.get("build_info") or {}
    spec = c.cell_spec
    runner = c.runner_info
    keras = tf.get("keras") or {}
    tfk = keras.get("tf.keras") or {}
    sk = keras.get("keras") or {}
    cuda_built = "/".join(str(build.get(k)) for k in ("cuda_version", "cudnn_version") if build.get(k))
    if not cuda_built and tf:
        cuda_built = "CUDA build, versions not reported" if build.get("is_cuda_build") else "CPU-only build"
    cuda_spec = "/".join(str(spec.get(k)) for k in ("cuda", "cudnn") if spec.get(k))
    cpu = host.get("cpu") or {}
    py = (host.get("python") or {}).get("version") or c.python
    threads = tf.get("threads") or {}
    smi = host.get("nvidia_smi")
    if isinstance(smi, dict):
        smi = ", ".join(f"{k}={v}" for k, v in smi.items())
    base = runner.get("base") or ""
    if not base and isinstance(spec.get("base"), dict):
        base = spec["base"].get("ref") or ""
    tfk_flavour, tfk_version = str(tfk.get("flavour") or ""), str(tfk.get("version") or "")
    image = runner.get("image") or spec.get("image") or (c.results.cell.get("image") if c.results else None) or ""
    return {
        "name": c.name, "status": c.status, "target": c.target,
        "tf": (c.tf_installed or c.tf) + (f" ({c.tf_git})" if c.tf_git else "") if c.has_tf else "-",
        "tf_spec": c.tf,
        "tf_keras": tfk_flavour if tfk_version in tfk_flavour else (f"{tfk_flavour} {tfk_version}").strip(),
        "keras": sk.get("flavour") or ("n/a" if sk.get("unavailable") else "")
        or (f"{c.keras_flavour} {c.keras_version}").strip(),
        "keras_why": sk.get("unavailable") or "",
        "python": py, "numpy": tf.get("numpy") or "",
        "cuda_built": cuda_built, "cuda_spec": cuda_spec,
        "gpus": ", ".join(c.gpus_visible) or ("none" if tf else ""),
        "gpu_problem": c.gpu_problem,
        "nvidia_smi": str(smi or ""),
        "cpu": f"{cpu.get('model') or '?'} ({cpu.get('logical_cpus') or '?'} logical CPUs)" if cpu else "",
        "cpu_flags": " ".join(c.cpu_flags()),
        "onednn": "" if tf.get("onednn") is None else ("on" if tf.get("onednn") else "off"),
        "threads": f"intra {threads.get('intra_op')} / inter {threads.get('inter_op')}" if threads else "",
        "image": image,
        "image_id": runner.get("image_id") or "",
        "base": base,
        "runner": c.runner + (f" ({runner['interpreter']})" if runner.get("interpreter") else ""),
        "preset": c.preset, "suite": c.suite_version + (f" ({c.suite_hash})" if c.suite_hash else ""),
        "finished": c.finished,
        "platform": host.get("platform") or "",
    }


def variant_errors(cells: list[CellResult]) -> list[dict[str, Any]]:
    out = []
    for c in cells:
        for v in c.variants:
            if v.status in ("error", "timeout"):
                out.append({"cell": c.name, "id": v.id, "status": v.status, "reason": first_line(v.reason),
                            "detail": str(v.traceback or v.reason or "").strip()[-4000:]})
    return out


def summary_view(cells: list[CellResult], df: pd.DataFrame, baselines: Baselines, generated: str) -> dict[str, Any]:
    counts = Counter(c.status for c in cells)
    ran = [c for c in cells if c.has_records]
    finished = sorted(c.finished for c in cells if c.finished)
    # another framework's variants (``Variant.outside``) are counted apart: not results of their cells, not n/a
    results = results_rows(df)
    status_counts = Counter(results["status"]) if len(results) else Counter()
    return {
        "cells": cells,
        "counts": [(s, counts.get(s, 0)) for s in CELL_STATUSES if counts.get(s, 0)]
        + [(s, n) for s, n in counts.items() if s not in CELL_STATUSES],
        "n_cells": len(cells),
        "hosts": sorted({host_line(c) for c in cells if c.doc.host or c.host_facts}),
        "presets": sorted({c.preset for c in ran}) or sorted({c.preset for c in cells}),
        "suites": sorted({c.suite_version + (f" ({c.suite_hash})" if c.suite_hash else "") for c in ran}),
        "first": finished[0] if finished else "",
        "last": finished[-1] if finished else "",
        "generated": generated,
        "tfmatrix": __version__,
        "baseline": baselines.describe() or "none (no cell has results)",
        "variants": len(results),
        "record_counts": ", ".join(f"{n} {s}" for s, n in sorted(status_counts.items())),
        "outside": len(df) - len(results),
        "noise": noise_line(df),
        "agreement": [],
    }


def noise_line(df: pd.DataFrame) -> str:
    """How far apart the processes (or rounds) of each variant were: the noise every verdict must beat."""
    if not len(df) or "between_cv" not in df:
        return ""
    ok = df[(df["status"] == "ok") & (df["processes"] >= 2)]
    if not len(ok):
        return ("each variant ran in one process: its between-process noise is not measured, so a verdict rests "
                "on the interval alone; run with rounds = 2 (or --rounds 2) to measure it")
    spreads = sorted(noise_of(p) for p in ok["per_process"])
    mid = spreads[len(spreads) // 2]
    p90 = spreads[min(len(spreads) - 1, int(0.9 * len(spreads)))]
    return (f"{len(ok)} variants ran in 2 or more processes or rounds; their times (10th percentiles) were "
            f"{mid:.1%} apart (median; 90th percentile {p90:.1%}). A comparison whose ratio lies within its sides' "
            "spread is reported as no clear difference.")


def render(cells: list[CellResult], df: pd.DataFrame, tables: list[BenchTable], findings: list[FindingResult],
           baselines: Baselines, generated: str | None = None, claims: list[ClaimResult] | None = None,
           agreement: list[str] | None = None, refused: Sequence[Refused] = (),
           upgrade: dict[str, Any] | None = None, hardware: dict[str, Any] | None = None,
           devices: dict[str, Any] | None = None, bisections: Sequence[Any] = (), timelines: Sequence[Any] = (),
           whys: Sequence[dict[str, Any]] = (), warnings: Sequence[Warning_] = ()) -> str:
    generated = generated or datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    charts = []
    for chart in CHARTS:
        data = chart_data(chart, df, cells)
        if data is not None:
            charts.append({"key": chart.key, "title": chart.title, "benchmarks": " ".join(data.benchmarks),
                           "svg": Markup(chart_html(data))})
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["seconds"] = fmt_seconds
    template = env.get_template("template.html")
    targets = sorted({c.target for c in cells}, key=lambda t: (t != "cpu", t))
    heads = family_heads(claims or [])
    return template.render(
        css=Markup((HERE / "report.css").read_text(encoding="utf-8")),
        js=Markup((HERE / "report.js").read_text(encoding="utf-8")),
        summary={**summary_view(cells, df, baselines, generated), "agreement": agreement or []},
        warnings=list(warnings),
        claims=[claim_view(r, {w["anchor"] for w in whys}, heads.get(r.claim.key, "")) for r in claims or []],
        only_seeds=all(r.claim.family == SEEDS for r in claims or []),
        claims_level=sequential_note(claims or []),
        whys=list(whys),
        grid=grid_view(claims or [], cells),
        findings=[finding_view(f, claims) for f in findings],
        charts=charts,
        tables=tables,
        benchmarks=[t.benchmark for t in tables],
        targets=targets,
        env_rows=[env_row(c) for c in cells],
        failed=[c for c in cells if c.status in CELL_FAILURES],
        skipped=[c for c in cells if c.status == "skipped"],
        variant_errors=variant_errors(cells),
        refused=list(refused),
        upgrade=upgrade,
        hardware=hardware,
        devices=devices,
        schedule=schedule_view(cells),
        bisections=list(bisections),
        timelines=list(timelines),
    )


def schedule_view(cells: list[CellResult]) -> dict[str, Any] | None:
    """How the run was scheduled (interleaved: seed, rounds, turns) and the host's speed over it, from the first
    cell that recorded them (every cell of one run holds the same series)."""
    for c in cells:
        schedule = c.results.config.get("schedule") if c.results else None
        series = c.results.host_speed if c.results else []
        if isinstance(schedule, dict) and series:
            points = [(p.turn, p.seconds * 1e3) for p in series]
            runs = {str(((x.results.config.get("schedule") or {}) if x.results else {}).get("run")) for x in cells
                    if x.results and x.results.config.get("schedule")}
            values = sorted(ms for _, ms in points)
            return {"run": schedule.get("run"), "seed": schedule.get("seed"), "rounds": schedule.get("rounds_asked"),
                    "turns": len(points), "runs": len(runs), "svg": Markup(host_speed_svg(points)),
                    "spread": f"{values[0]:.2f}–{values[-1]:.2f} ms (median {values[len(values) // 2]:.2f} ms)"}
    return None
