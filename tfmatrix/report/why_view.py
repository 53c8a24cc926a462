"""The report's "why" panels: a claim line's two sides profiled (``tfmatrix explain``), lined up, drawn.

``explain --claim KEY --cell C`` (or ``--cell C --variants A B``) leaves
``reports/profiles/<cell>.json``; every claim line whose two variants have
profiles there gets a panel in the page: the sentences and the largest
differences of ``analysis.explain.profiles``, and a differential icicle (a flame
graph drawn top down) of both sides on one time axis, each frame coloured by
how much more (red) or less (blue) time that path takes on its side than on
the other. A side that could not be profiled is its reason, not a panel.
Profiles are never timings: the panel says so, and nothing here feeds a
verdict.

Pure: the profiles come read (``results.profile_docs.profiles_in``), and the
speedscope files go back as text for the report to write (``speedscope_files``).
"""
from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from ..analysis.claims.answers import ClaimResult
from ..analysis.explain.calltree import Frame, diff_tree, speedscope
from ..analysis.explain.ops import explanation_sentences
from ..analysis.explain.profiles import Explanation, Profile, explain, ms, pair, profile_of, short
from ..results.profile_docs import PROFILES_DIR, SPEEDSCOPE, ProfilesDoc, ProfilesFound
from .claims_view import why_anchor

WIDTH = 1200                 # the drawing's units are pixels at full width (the page is 1366 wide at its smallest)
ROW = 17
HEAD = 20
CHAR = 6.6                   # width of one character of the frames' 11 px text
ROWS = 8                     # differences in a panel's table


def _colour(mine: float, other: float, extra: float) -> str:
    """Red where this side's path takes more time than the other's, blue less, sand about the same; the deeper,
    the larger a share of the whole difference per step (``extra``) that path holds."""
    share = max(-1.0, min(1.0, (mine - other) / extra)) if extra > 0 else 0.0
    if share > 0.02:
        return f"hsl(4,75%,{88 - 40 * share:.0f}%)"
    if share < -0.02:
        return f"hsl(212,70%,{88 + 40 * share:.0f}%)"
    return "hsl(40,25%,84%)"


def _layout(frames: Sequence[Frame], side: str) -> list[tuple[Frame, float, float, int]]:
    """(frame, start, time, depth) of one side's frames: children left to right under their parent, by key."""
    nxt: dict[tuple[str, ...], float] = {(): 0.0}
    out = []
    for f in frames:                      # parents come before their children (path order)
        t = f.a_s if side == "a" else f.b_s
        if t <= 0 or f.path[:-1] not in nxt:
            continue
        x = nxt[f.path[:-1]]
        nxt[f.path[:-1]] = x + t
        nxt[f.path] = x
        out.append((f, x, t, len(f.path) - 1))
    return out


def icicle_svg(frames: Sequence[Frame], a: Profile, b: Profile, label_a: str, label_b: str) -> str:
    """Both sides' call trees on one time axis, the slower side on top; hover a frame for both sides' times."""
    scale = WIDTH / max(a.step_s, b.step_s, 1e-12)
    extra = abs(b.step_s - a.step_s)
    order = [("b", b, label_b), ("a", a, label_a)] if b.step_s >= a.step_s else [("a", a, label_a),
                                                                                   ("b", b, label_b)]
    parts, y = [], 0
    for side, prof, label in order:
        placed = _layout(frames, side)
        depth = max((d for *_, d in placed), default=-1) + 1
        parts.append(f'<text class="ic-head" x="0" y="{y + 14}">{html.escape(label)}: {ms(prof.step_s)} per step '
                     f'({html.escape(prof.cell)}; the bar\'s width is its time)</text>')
        y += HEAD
        for f, x, t, d in placed:
            mine, other = (f.a_s, f.b_s) if side == "a" else (f.b_s, f.a_s)
            w = t * scale
            if w < 1:
                continue
            tip = (f"{f.key} ({f.package})\n{label_a}: {ms(f.a_s)} per step on this path\n"
                   f"{label_b}: {ms(f.b_s)} per step on this path")
            text = ""
            room = int((w - 6) / CHAR)
            if room >= 4:
                name = short(f.key)
                name = name if len(name) <= room else name[:room - 1] + "…"
                text = f'<text x="{x * scale + 3:.1f}" y="{y + d * ROW + 12}">{html.escape(name)}</text>'
            parts.append(f'<g class="ic-f" data-side="{side}"><title>{html.escape(tip)}</title>'
                         f'<rect x="{x * scale:.1f}" y="{y + d * ROW}" width="{w:.1f}" height="{ROW - 1}" '
                         f'fill="{_colour(mine, other, extra)}"/>{text}</g>')
        y += depth * ROW + 8
    return (f'<svg class="icicle" viewBox="0 0 {WIDTH} {y}" width="100%" style="max-width:{WIDTH}px" '
            f'role="img" aria-label="call trees of {html.escape(label_a)} and {html.escape(label_b)}">'
            + "".join(parts) + "</svg>")


def table_rows(e: Explanation, rows: int = ROWS) -> list[dict[str, str]]:
    return [{"key": c.key, "package": c.package, "a": ms(c.self_a) if c.calls_a else "–",
             "b": ms(c.self_b) if c.calls_b else "–", "calls_a": f"{c.calls_a:.3g}", "calls_b": f"{c.calls_b:.3g}",
             "cls": "slower" if c.delta * e.extra_s > 0 else "faster"} for c in e.changes[:rows]]


def panel(result: ClaimResult, sides: tuple[tuple[ProfilesDoc, str], tuple[ProfilesDoc, str]],
          anchor: str) -> dict[str, Any]:
    """One claim line's why panel: sentences, differences and the icicle, or its "could not profile" reason.

    ``sides``: (that cell's profiles, variant id) for A and for B (two cells when the claim spans two).
    """
    claim = result.claim
    (doc_a, a_id), (doc_b, b_id) = sides
    cells = [doc_a.cell] if doc_a.cell == doc_b.cell else [doc_a.cell, doc_b.cell]
    head = {"anchor": anchor, "claim": claim.key, "text": claim.claim, "cell": " and ".join(cells),
            "a": claim.a, "b": claim.b, "a_id": a_id, "b_id": b_id,
            "speedscope": [(c, f"{PROFILES_DIR}/{c}{SPEEDSCOPE}") for c in cells]}
    both = pair(doc_a, a_id, doc_b, b_id)
    if isinstance(both, str):
        return dict(head, reason=both)
    e = explain(*both)
    return dict(head, reason="", sentences=explanation_sentences(e, "A", "B"), rows=table_rows(e),
                calls=f"{doc_a.records[a_id]['step_calls']} and {doc_b.records[b_id]['step_calls']}",
                svg=Markup(icicle_svg(diff_tree(*both), *both, f"A = {claim.a}", f"B = {claim.b}")))


def why_views(claims: Sequence[ClaimResult], profiles: ProfilesFound) -> list[dict[str, Any]]:
    """A panel for every claim line whose two sides both have a profile record in their cells (the line links to
    it); a claim that spans two cells takes each side from its own cell's profiles."""
    out = []
    for result in claims:
        for c in result.headline():
            for n, line in enumerate(c.lines):
                cmp = line.comparison
                sides = ((profiles.by_cell.get(cmp.cell_a.name), cmp.a_id),
                         (profiles.by_cell.get(cmp.cell_b.name), cmp.b_id))
                found = [(doc, vid) for doc, vid in sides if doc is not None and vid in doc.records]
                if len(found) == 2:
                    out.append(panel(result, (found[0], found[1]), why_anchor(result.claim.key, c.name, n)))
    return out


def speedscope_files(profiles: ProfilesFound) -> dict[str, str]:
    """``<cell>.speedscope.json`` text for each cell with a profile: every profiled variant of it, for a viewer."""
    out = {}
    for cell, doc in sorted(profiles.by_cell.items()):
        ok = [profile_of(r, cell) for r in doc.records.values() if r.get("status") == "ok"]
        if ok:
            out[f"{cell}{SPEEDSCOPE}"] = json.dumps(speedscope(ok, f"tfmatrix profiles: {cell}")) + "\n"
    return out
