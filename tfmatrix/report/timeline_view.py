"""The report's Timeline section: each claim's ratio against the release, from what ``tfmatrix timeline`` wrote.

``<reports>/timeline.json`` (TF releases) and ``timeline-keras.json`` (Keras
3 releases on one TF) hold one point per claim and release
(``results.history_docs.TimelineDoc``, the one definition of that shape). Per
claim, one inline SVG: the releases in order on x, the ratio A/B on a log
scale with its 95% interval, each point in its verdict's colour, a line at 1
and a dashed mark before every release where the verdict changes
(``analysis.timeline.verdict_steps``: the rule, with the flickers it counts
and does not mark).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from markupsafe import Markup

from ..analysis.timeline import DECIDED, Reading, reading, verdict_counts, verdict_steps
from ..results.history_docs import FoundTimeline, TimelineDoc, TimelinePoint
from .charts import SPARK_COLOURS


@dataclass
class ClaimChart:
    key: str
    claim: str
    svg: Markup
    changes: list[str] = field(default_factory=list)     # "2.0.4 holds -> 2.1.4 no clear difference"
    measured: int = 0
    flickers: int = 0          # neighbours whose verdicts differ within overlapping intervals
    verdicts: str = ""         # verdict_counts of the measured releases


@dataclass
class TimelineView:
    title: str                 # "TensorFlow releases" | "Keras 3 releases on TF 2.16.2"
    file: str
    releases: list[str]
    charts: list[ClaimChart]
    left_out: list[str]


def timeline_view(found: FoundTimeline) -> TimelineView:
    """A timeline found beside the report, as its section shows it (titled by its axis, and its TF for Keras)."""
    doc = found.doc
    return view(doc, found.title + (f" on TF {doc.tf}" if doc.tf else "")
                + (f" under Keras {doc.keras}" if doc.keras else ""), found.file)


def view(doc: TimelineDoc, title: str, file: str) -> TimelineView:
    releases = doc.releases
    charts = []
    for key, about in doc.claims.items():
        by_release = {p.release: p for p in doc.of(key)}
        ordered = [by_release[r] for r in releases if r in by_release]
        decided = [p for p in ordered if p.verdict in DECIDED and p.ratio]
        steps, flickers = verdict_steps([_reading(p) for p in decided])
        moves = [f"{decided[i].release} {decided[i].verdict} → {decided[i + 1].release} "
                 f"{decided[i + 1].verdict}" for i in steps]
        after_change = {decided[i + 1].release for i in steps}
        charts.append(ClaimChart(key, f"{about.claim} (time {about.a} / {about.b})",
                                 Markup(claim_svg(releases, by_release, key, after_change)), moves, len(decided),
                                 flickers, verdict_counts([p.verdict for p in decided])))
    return TimelineView(title, file, releases, charts, doc.left_out)


def _reading(p: TimelinePoint) -> Reading:
    return reading(p.verdict, p.low, p.high)


def y_ticks(lo: float, hi: float, plot_px: float, min_gap_px: float = 13.0) -> list[float]:
    """Ratios to label on a log axis spanning ``10**lo .. 10**hi``: 1x first, then 1-2-5 steps, then the ends.

    A label closer than ``min_gap_px`` to one already kept is dropped, so a
    chart whose range barely leaves 1x does not print "1.2x" over "1x".
    """
    per_decade = plot_px / max(hi - lo, 1e-9)
    candidates = [0.0]
    for decade in range(math.floor(lo), math.ceil(hi) + 1):
        candidates += [decade + math.log10(m) for m in (1, 2, 5)]
    candidates += [hi, lo]
    kept: list[float] = []
    for c in candidates:
        if lo - 1e-9 <= c <= hi + 1e-9 and all(abs(c - k) * per_decade >= min_gap_px for k in kept):
            kept.append(c)
    return [10 ** k for k in kept]


def _ratio_label(r: float) -> str:
    return f"{r:.3g}x"


def claim_svg(releases: list[str], points: dict[str, TimelinePoint], key: str, after_change: set[str],
              height: int = 170) -> str:
    """The ratio (log scale) with its interval per release; colour = verdict; dashed before each of ``after_change``."""
    step, pad_l, pad_r, pad_t, pad_b = 34, 46, 12, 10, 44
    width = pad_l + pad_r + step * max(1, len(releases))
    shown = [(p.low or p.ratio, p.high or p.ratio) for p in points.values() if p.ratio]
    lows = [math.log10(max(low, 1e-9)) for low, _ in shown] + [0.0]
    highs = [math.log10(max(high, 1e-9)) for _, high in shown] + [0.0]
    lo, hi = min(lows), max(highs)
    if hi - lo < 0.3:
        lo, hi = lo - 0.15, hi + 0.15

    def y(ratio: float) -> float:
        return pad_t + (hi - math.log10(max(ratio, 1e-9))) / (hi - lo) * (height - pad_t - pad_b)

    def x(i: int) -> float:
        return pad_l + step * i + step / 2

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" id="timeline-{escape(key)}" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(key)} by release">']
    for tick in y_ticks(lo, hi, height - pad_t - pad_b):
        grid = "#999" if tick == 1.0 else "#e4e4e4"
        out.append(f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="{grid}"/>')
        out.append(f'<text class="ytick" x="{pad_l - 4}" y="{y(tick) + 3:.1f}" font-size="10" '
                   f'text-anchor="end">{_ratio_label(tick)}</text>')
    for i, release in enumerate(releases):
        out.append(f'<text x="{x(i):.1f}" y="{height - pad_b + 12}" font-size="9" text-anchor="end" '
                   f'transform="rotate(-50 {x(i):.1f} {height - pad_b + 12})">{escape(release)}</text>')
        p = points.get(release)
        if not p or not p.ratio:
            why = (p.reason or p.verdict if p else "") or "not measured"
            out.append(f'<text x="{x(i):.1f}" y="{y(1.0) - 4:.1f}" font-size="10" text-anchor="middle" fill="#aaa">'
                       f'·<title>{escape(release)}: {escape(str(why))}</title></text>')
            continue
        if release in after_change:
            xm = x(i) - step / 2
            out.append(f'<line class="change" x1="{xm:.1f}" x2="{xm:.1f}" y1="{pad_t}" y2="{height - pad_b}" '
                       f'stroke="#444" stroke-dasharray="3 3"/>')
        colour = SPARK_COLOURS.get(p.verdict, "#5b6670")
        if p.low and p.high:
            tip = f"{release}: {p.ratio:.3g}x [{p.low:.3g}, {p.high:.3g}], {p.verdict}"
            out.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(p.high):.1f}" y2="{y(p.low):.1f}" '
                       f'stroke="{colour}" stroke-width="2"/>')
        else:       # one process a side: the ratio, no interval (not enough replication)
            tip = f"{release}: {p.ratio:.3g}x, no interval (one process a side), {p.verdict}"
        out.append(f'<circle class="point" cx="{x(i):.1f}" cy="{y(p.ratio):.1f}" r="3.5" fill="{colour}">'
                   f'<title>{escape(tip)}</title></circle>')
    out.append("</svg>")
    return "".join(out)
