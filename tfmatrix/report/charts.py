"""Inline SVG charts: time (10th percentile a round, geometric mean) against TF version, CPU and GPU panels side by
side; bars from the fastest repeat to the median.

Hand-written SVG (no plotting library, no scripts): one ``<svg>`` per panel,
a shared HTML legend. The y axis is logarithmic when the values span more
than a factor of 8, linear from zero otherwise. Hollow markers are unstable
measurements. Every marker has a ``<title>`` tooltip with the exact numbers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from ..analysis.cells import CellResult
from ..analysis.chart_data import ChartData, Series
from ..versions import minor_series
from .tables import fmt_seconds

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999933")
DASHES = ("", "6 3", "2 3")
WIDTH, HEIGHT = 470, 300          # WIDTH: the least; a panel grows by X_STEP per cell so labels never overlap
X_STEP = 66
LEFT, RIGHT, TOP, BOTTOM = 64, 14, 26, 64
LOG_SPAN = 8.0


def series_styles(data: ChartData) -> dict[str, tuple[str, str]]:
    """Colour and dash per series label, the same in both panels."""
    labels: list[str] = []
    for _, series in data.panels.values():
        for s in series:
            if s.label not in labels:
                labels.append(s.label)
    return {label: (PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)])
            for i, label in enumerate(labels)}


def _nice_linear(top: float) -> list[float]:
    raw = top / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [i * step for i in range(0, int(top / step) + 2)]


def _log_ticks(lo: float, hi: float) -> list[float]:
    ticks = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo <= v <= hi:
                ticks.append(v)
    if len(ticks) < 2:
        ticks = [lo, hi]
    return ticks


def _keras_text(cell: CellResult) -> str:
    """The cell's Keras, short, for the axis's second line: "keras3", "keras2.3.1", "tf_keras", "tf.keras"."""
    middle = cell.name.removesuffix("-" + cell.target).split("-", 1)
    return middle[1] if len(middle) > 1 else "tf.keras"


def _x_labels(cells: list[CellResult]) -> list[tuple[str, str]]:
    """(TF version, Keras) per cell: two short lines instead of one long rotated one."""
    return [(minor_series(c.tf), _keras_text(c)) for c in cells]


def panel_width(cells: list[CellResult]) -> int:
    return max(WIDTH, LEFT + RIGHT + X_STEP * len(cells))


def panel_svg(title: str, cells: list[CellResult], series: list[Series], styles: dict[str, tuple[str, str]],
              empty: str) -> str:
    width = panel_width(cells)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {HEIGHT}" width="{width}" '
           f'height="{HEIGHT}" role="img" aria-label="{escape(title)}">',
           f'<text x="{LEFT}" y="16" class="ptitle">{escape(title)}</text>']
    points = [p for s in series for p in s.points]
    if not cells or not points:
        out.append(f'<text x="{width // 2}" y="{HEIGHT // 2}" class="empty" text-anchor="middle">'
                   f'{escape(empty)}</text>')
        out.append("</svg>")
        return "".join(out)
    lo = min(p.low for p in points)
    hi = max(p.high for p in points)
    lo = max(lo, min(p.time for p in points) / 10, 1e-12)
    log = hi / lo > LOG_SPAN
    plot_w, plot_h = width - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    bottom, mid = TOP + plot_h, TOP + plot_h // 2
    if log:
        y0, y1 = math.log10(lo) - 0.05, math.log10(hi) + 0.05
        ticks = _log_ticks(10 ** y0, 10 ** y1)

        def ypos(v: float) -> float:
            return TOP + plot_h * (1 - (math.log10(max(v, 1e-12)) - y0) / (y1 - y0))
    else:
        ticks = _nice_linear(hi * 1.05)
        top = ticks[-1]

        def ypos(v: float) -> float:
            return TOP + plot_h * (1 - v / top)
    # axes and grid
    for t in ticks:
        y = ypos(t)
        if TOP - 0.5 <= y <= bottom + 0.5:
            out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
            out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">'
                       f'{escape(fmt_seconds(t))}</text>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}" class="axis"/>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{bottom}" y2="{bottom}" class="axis"/>')
    out.append(f'<text x="14" y="{mid}" class="axlabel" transform="rotate(-90 14 {mid})" text-anchor="middle">'
               f'time per iteration{" (log)" if log else ""}</text>')
    step = plot_w / len(cells)
    xpos = {c.name: LEFT + step * (i + 0.5) for i, c in enumerate(cells)}
    for c, (version, keras) in zip(cells, _x_labels(cells), strict=True):
        x = xpos[c.name]
        y = bottom + 16
        out.append(f'<text x="{x:.1f}" y="{y}" class="tick" text-anchor="middle"><title>{escape(c.label)}</title>'
                   f'{escape(version)}<tspan x="{x:.1f}" dy="13" class="sub">{escape(keras)}</tspan></text>')
    out.append(f'<text x="{LEFT + plot_w // 2}" y="{HEIGHT - 6}" class="axlabel" text-anchor="middle">'
               'TensorFlow version (Keras below)</text>')
    # series: lines (broken at gaps), fastest-to-median bars, markers
    order = {c.name: i for i, c in enumerate(cells)}
    n = max(len(series), 1)
    for si, s in enumerate(series):
        colour, dash = styles.get(s.label, (PALETTE[0], ""))
        offset = (si - (n - 1) / 2) * min(4.0, step / (2 * n))     # dodge overlapping error bars
        pts = sorted(s.points, key=lambda p: order[p.cell.name])
        seg: list[str] = []
        prev = None
        for p in pts:
            i = order[p.cell.name]
            if prev is not None and i != prev + 1:         # a cell without this series: break the line
                if len(seg) > 1:
                    out.append(_polyline(seg, colour, dash))
                seg = []
            seg.append(f"{xpos[p.cell.name] + offset:.1f},{ypos(p.time):.1f}")
            prev = i
        if len(seg) > 1:
            out.append(_polyline(seg, colour, dash))
        for p in pts:
            x = xpos[p.cell.name] + offset
            ya, yb, ym = ypos(p.low), ypos(p.high), ypos(p.time)
            tip = (f"{s.label}\n{p.cell.name}: time (p10 a round, geometric mean) {fmt_seconds(p.time)}, "
                   f"fastest {fmt_seconds(p.low)}, median {fmt_seconds(p.high)}{' (UNSTABLE)' if p.unstable else ''}")
            out.append(f'<g class="pt"><title>{escape(tip)}</title>')
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{ya:.1f}" y2="{yb:.1f}" stroke="{colour}" class="err"/>')
            for yy in (ya, yb):
                out.append(f'<line x1="{x - 3:.1f}" x2="{x + 3:.1f}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="{colour}" '
                           'class="err"/>')
            fill = "#fff" if p.unstable else colour
            out.append(f'<circle cx="{x:.1f}" cy="{ym:.1f}" r="3.6" stroke="{colour}" fill="{fill}"/></g>')
    out.append("</svg>")
    return "".join(out)


def _polyline(points: list[str], colour: str, dash: str) -> str:
    extra = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<polyline points="{" ".join(points)}" fill="none" stroke="{colour}" stroke-width="1.6"{extra}/>'


def chart_html(data: ChartData) -> str:
    """Both panels and the legend, as an HTML fragment (escaped here; safe to insert as markup)."""
    styles = series_styles(data)
    panels = []
    for target in ("cpu", "gpu"):
        cells, series = data.panels.get(target, ([], []))
        absent = data.absent.get(target) or []
        if not cells or not any(s.points for s in series):
            # no empty panel: one line says why there is nothing to draw
            listed = ", ".join(f"{c.name} {c.status}" if c.status != "ok" else c.name for c in absent[:3])
            why = f" ({listed}{', ...' if len(absent) > 3 else ''})" if absent else " (no such cells in this report)"
            panels.append(f'<p class="panel-note" data-target="{target}">No {target.upper()} results for this '
                          f'chart{escape(why)}.</p>')
            continue
        svg = panel_svg(target.upper(), cells, series, styles, f"no {target.upper()} results")
        panels.append(f'<div class="panel" data-target="{target}">{svg}</div>')
    keys = []
    for label, (colour, dash) in styles.items():
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        keys.append(f'<span class="key"><svg width="26" height="10"><line x1="1" x2="25" y1="5" y2="5" '
                    f'stroke="{colour}" stroke-width="2"{extra}/></svg>{escape(label)}</span>')
    keys.append('<span class="key note">marker: 10th percentile of the repeats, geometric mean over the rounds '
                '(hollow: unstable); '
                'bars: fastest repeat to median</span>')
    return f'<div class="panels">{"".join(panels)}</div><div class="legend">{"".join(keys)}</div>'


# -- claims: a sparkline per claim and target -------------------------------------

SPARK_COLOURS = {"holds": "#1e8e3e", "reversed": "#b00020", "no clear difference": "#8a949d"}
SPARK_STEP, SPARK_H, SPARK_PAD = 18, 36, 5


@dataclass(frozen=True)
class SparkPoint:
    x: int                  # position among the panel's cells (TF order)
    ratio: float            # time ratio a/b
    verdict: str
    tip: str                # the tooltip: cell, configuration, ratio and interval


def sparkline(label: str, xs: list[str], series: list[list[SparkPoint]]) -> str:
    """A tiny inline SVG: the claim's ratio (log scale) across TF versions, a dashed line at 1.

    One polyline per configuration; each point coloured by its verdict and
    titled with its numbers. ``xs`` are the cells' names, in TF order.
    """
    width = SPARK_PAD * 2 + SPARK_STEP * max(len(xs), 1)
    points = [p for s in series for p in s]
    logs = [math.log10(p.ratio) for p in points if p.ratio > 0] + [0.0]
    lo, hi = min(logs), max(logs)
    span = max(hi - lo, 0.3)
    mid = (hi + lo) / 2

    def ypos(ratio: float) -> float:
        v = math.log10(ratio) if ratio > 0 else lo
        return SPARK_H / 2 - (v - mid) / span * (SPARK_H - 2 * SPARK_PAD)

    def xpos(i: int) -> float:
        return SPARK_PAD + SPARK_STEP * (i + 0.5)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="spark" width="{width}" height="{SPARK_H}" '
           f'viewBox="0 0 {width} {SPARK_H}" role="img" aria-label="{escape(label)}">'
           f'<title>{escape(label)}: time ratio across {escape(", ".join(xs))} (log scale; dashed: 1)</title>',
           f'<line x1="0" x2="{width}" y1="{ypos(1.0):.1f}" y2="{ypos(1.0):.1f}" class="one"/>']
    for s in series:
        pts = sorted(s, key=lambda p: p.x)
        if len(pts) > 1:
            coords = " ".join(f"{xpos(p.x):.1f},{ypos(p.ratio):.1f}" for p in pts)
            out.append(f'<polyline points="{coords}" fill="none" stroke="#5b6670" stroke-width="1"/>')
        for p in pts:
            colour = SPARK_COLOURS.get(p.verdict, "#5b6670")
            out.append(f'<circle cx="{xpos(p.x):.1f}" cy="{ypos(p.ratio):.1f}" r="2.6" fill="{colour}">'
                       f'<title>{escape(p.tip)}</title></circle>')
    out.append("</svg>")
    return "".join(out)


def host_speed_svg(series: list[tuple[int, float]], width: int = 640, height: int = 120) -> str:
    """The host's reference workload over an interleaved run: its time (ms) per turn, a line at the median.

    What the machine itself did while the cells were measured: a stretch
    where the line rises is a slow period that hit every cell of those turns
    alike (and cancels in their round-by-round ratios).
    """
    pad = 28
    pts = [(t, ms) for t, ms in series if ms > 0]
    if not pts:
        return ""
    lo, hi = min(ms for _, ms in pts), max(ms for _, ms in pts)
    span = max(hi - lo, hi * 0.05)
    t_max = max(max(t for t, _ in pts), 2)
    med = sorted(ms for _, ms in pts)[len(pts) // 2]

    def xy(t: float, ms: float) -> str:
        x = pad + (t - 1) / (t_max - 1) * (width - 2 * pad)
        y = height - pad / 2 - (ms - lo) / span * (height - pad)
        return f"{x:.1f},{y:.1f}"

    y_med = xy(1, med).split(",")[1]
    coords = " ".join(xy(t, ms) for t, ms in pts)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="hostspeed" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="host reference workload per turn">'
            f"<title>host reference workload per turn: {lo:.2f}-{hi:.2f} ms, median {med:.2f} ms</title>"
            f'<line x1="{pad}" x2="{width - pad}" y1="{y_med}" y2="{y_med}" stroke="#aaa" stroke-dasharray="4 3"/>'
            f'<polyline points="{coords}" fill="none" stroke="#2b6cb0" stroke-width="1.5"/>'
            f'<text x="2" y="12" font-size="10">{hi:.2f} ms</text>'
            f'<text x="2" y="{height - 2}" font-size="10">{lo:.2f} ms</text>'
            f'<text x="{width - pad}" y="{height - 2}" font-size="10" text-anchor="end">turn {t_max}</text></svg>')


# -- devices: a time ratio against size (the GPU's crossover) ------------------------

RATIO_W, RATIO_H = 360, 200


def ratio_size_svg(title: str, axis: str, points: list[tuple[float, float, float, float]],
                   crossover: float | None) -> str:
    """Ratio B/A (log y) against size (log x): markers with their 95% interval, a dashed line at 1, and a
    dotted vertical line at the crossover when there is one. ``points``: (size, ratio, low, high)."""
    pts = [p for p in points if p[0] > 0 and p[1] > 0]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart ratio-size" viewBox="0 0 {RATIO_W} {RATIO_H}" '
           f'width="{RATIO_W}" height="{RATIO_H}" role="img" aria-label="{escape(title)}">',
           f'<text x="{LEFT}" y="16" class="ptitle">{escape(title)}</text>']
    if not pts:
        out.append(f'<text x="{RATIO_W // 2}" y="{RATIO_H // 2}" class="empty" text-anchor="middle">no ratios</text>')
        return "".join(out) + "</svg>"
    ys = [v for _, r, lo, hi in pts for v in (r, lo, hi) if v > 0 and math.isfinite(v)] + [1.0]
    y0, y1 = math.log10(min(ys)) - 0.05, math.log10(max(ys)) + 0.05
    xs = [s for s, *_ in pts]
    x0, x1 = math.log10(min(xs)), math.log10(max(xs))
    if x1 - x0 < 0.1:
        x0, x1 = x0 - 0.15, x1 + 0.15
    plot_w, plot_h = RATIO_W - LEFT - RIGHT, RATIO_H - TOP - 44
    bottom = TOP + plot_h

    def xpos(v: float) -> float:
        return LEFT + plot_w * (math.log10(v) - x0) / (x1 - x0)

    def ypos(v: float) -> float:
        return TOP + plot_h * (1 - (math.log10(max(v, 1e-12)) - y0) / (y1 - y0))

    for t in _log_ticks(10 ** y0, 10 ** y1):
        out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{ypos(t):.1f}" y2="{ypos(t):.1f}" class="grid"/>'
                   f'<text x="{LEFT - 6}" y="{ypos(t) + 4:.1f}" class="tick" text-anchor="end">{t:g}</text>')
    for s in sorted(set(xs)):
        out.append(f'<text x="{xpos(s):.1f}" y="{bottom + 16}" class="tick" text-anchor="middle">{s:g}</text>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{ypos(1.0):.1f}" y2="{ypos(1.0):.1f}" class="axis" '
               'stroke-dasharray="5 3"/>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}" class="axis"/>')
    out.append(f'<text x="{LEFT + plot_w // 2}" y="{RATIO_H - 8}" class="axlabel" text-anchor="middle">'
               f'{escape(axis)} (log)</text>')
    if crossover is not None and 10 ** x0 <= crossover <= 10 ** x1:
        out.append(f'<line x1="{xpos(crossover):.1f}" x2="{xpos(crossover):.1f}" y1="{TOP}" y2="{bottom}" '
                   f'stroke="{PALETTE[1]}" stroke-dasharray="2 3"><title>crossover ≈ {crossover:.3g}</title></line>')
    pts.sort()
    if len(pts) > 1:
        out.append(_polyline([f"{xpos(s):.1f},{ypos(r):.1f}" for s, r, *_ in pts], PALETTE[0], ""))
    for s, r, lo, hi in pts:
        x = xpos(s)
        ci = f"95% CI {lo:.3f} – {hi:.3f}" if math.isfinite(lo) and math.isfinite(hi) else "one round: no interval"
        out.append(f'<g class="pt"><title>{escape(f"{axis} {s:g}: ratio {r:.3f} ({ci})")}</title>')
        if math.isfinite(lo) and math.isfinite(hi) and lo > 0:
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{ypos(lo):.1f}" y2="{ypos(hi):.1f}" '
                       f'stroke="{PALETTE[0]}" class="err"/>')
        out.append(f'<circle cx="{x:.1f}" cy="{ypos(r):.1f}" r="3.6" stroke="{PALETTE[0]}" fill="{PALETTE[0]}"/></g>')
    return "".join(out) + "</svg>"
