"""The report's Devices section: one environment on the GPU against the CPU (or in two thread settings).

For each pair of ``devices.device_groups`` (the reference A: the CPU cell, B:
the GPU cell), every variant measured ok in both gets the time ratio B/A with
its 95% interval and a verdict (``upgrade.upgrade_view``: the numbers the
upgrade view and the Hardware section give; two cells of one interleaved run
pair round by round). Along the size axes the seeds turn on
(``devices.SIZE_AXES``) each configuration gets its crossover, in words and
as a small chart of the ratio against size (``charts.ratio_size_svg``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from markupsafe import Markup

from ..analysis.compare.upgrade import UpgradeView, upgrade_view
from ..analysis.devices import (
    Crossover,
    DeviceSetting,
    control_moved,
    crossovers,
    device_groups,
    device_setting,
    family_key,
)
from .charts import ratio_size_svg
from .tables import fmt_change, fmt_seconds


def pair_names(a: DeviceSetting, b: DeviceSetting) -> tuple[str, str]:
    """What tells the two settings apart: "CPU", "GPU" when the target differs, else their variables."""
    if a.target != b.target:
        return a.target.upper(), b.target.upper()
    return (", ".join(f"{k}={v}" for k, v in a.env) or "no setting",
            ", ".join(f"{k}={v}" for k, v in b.env) or "no setting")


@dataclass
class DevicePair:
    """One environment in two settings: A (the reference, the CPU) and B, compared variant by variant."""

    group: str
    setting_a: DeviceSetting
    setting_b: DeviceSetting
    view: UpgradeView                   # baseline = the cell in setting A, candidate = B
    crossovers: list[Crossover] = field(default_factory=list)
    family: list[str] = field(default_factory=list)     # the pairs whose sizes the crossovers pool (several presets)
    void: str = ""                      # why the pair's device ratios do not stand (its control moved), or ""

    @property
    def gpu_cpu(self) -> bool:
        """The two settings are two devices (targets), not two thread settings of one."""
        return self.setting_a.target != self.setting_b.target

    @property
    def names(self) -> tuple[str, str]:
        return pair_names(self.setting_a, self.setting_b)

    def verdict(self, verdict: str) -> str:
        b = self.names[1]
        return {"slower": f"slower on {b}", "faster": f"faster on {b}"}.get(verdict, verdict)

    def line(self) -> str:
        a, b = self.names
        c = self.view.counts()
        return (f"{self.view.candidate} ({self.setting_b.label}) against {self.view.baseline} "
                f"({self.setting_a.label}): {len(self.view.rows)} variants in both; {c['faster']} faster on {b}, "
                f"{c['slower']} slower on {b}, {c['no clear difference']} no clear difference, "
                f"{c['not enough replication']} not enough replication")


def _params(df: pd.DataFrame, cell: str) -> dict[str, Any]:
    mine = df[df["cell"] == cell] if len(df) else df
    return {str(r["id"]): dict(r["params"]) for _, r in mine.iterrows()}


def device_pairs(df: pd.DataFrame, cells: Sequence[Any]) -> list[DevicePair]:
    """Every pair of every device group, compared; the crossovers on the first pair of each family.

    A family is one environment's pairs at several presets (``devices.family_key``): their sizes pool into one
    crossover per configuration, since one preset measures one size of each.
    """
    out = []
    families: dict[tuple[str, DeviceSetting, DeviceSetting], list[tuple[DevicePair, dict[str, Any]]]] = {}
    for group in device_groups(cells):
        for a, b in group.pairs():
            pair = DevicePair(group.label, device_setting(a), device_setting(b), upgrade_view(df, a.name, b.name))
            params_a = _params(df, a.name)
            if pair.gpu_cpu:
                pair.void = control_moved(pair.view.rows, params_a)
            out.append(pair)
            families.setdefault((family_key(a), pair.setting_a, pair.setting_b), []).append((pair, params_a))
    data = {str(v.id): v.data for c in cells for v in c.variants if v.data}     # where each variant's data lives
    for members in families.values():
        params: dict[str, Any] = {}
        for _, params_a in members:
            params.update(params_a)
        first = members[0][0]
        valid = [pair for pair, _ in members if not pair.void]
        first.crossovers = crossovers([c for pair in valid for c in pair.view.rows], params,
                                      without_controls=first.gpu_cpu, data=data) if valid else []
        first.family = [f"{p.view.candidate} against {p.view.baseline}" for p, _ in members] if len(members) > 1 \
            else []
    return out


def page_view(pairs: Sequence[DevicePair]) -> dict[str, Any] | None:
    """What the page's Devices section shows; None when no environment ran in two settings."""
    if not pairs:
        return None
    views = []
    for pair in pairs:
        a, b = pair.names
        rows = [{"benchmark": c.benchmark, "id": c.id, "a_text": fmt_seconds(c.time_a), "b_text": fmt_seconds(c.time_b),
                 "ratio_text": f"{c.ci.ratio:.3f}",
                 "ci_text": f"{c.ci.low:.3f} – {c.ci.high:.3f}" if c.ci.replicated else "— (one round)",
                 "pct_text": fmt_change(c.ci.ratio), "verdict": pair.verdict(c.verdict),
                 "cls": {"faster": "better", "slower": "worse"}.get(c.verdict, "")}
                for c in sorted(pair.view.rows, key=lambda c: (c.ci.ratio, c.id))]
        sizes = [{"benchmark": x.benchmark, "config": x.config, "text": x.text(b, a), "found": x.at is not None,
                  "svg": Markup(ratio_size_svg(f"{x.benchmark}: {b}/{a}", x.axis.name,
                                        [(p.size, p.ratio, p.low, p.high) for p in x.points], x.at))}
                 for x in pair.crossovers]
        views.append({"group": pair.group, "cell_a": pair.view.baseline, "cell_b": pair.view.candidate,
                      "setting_a": pair.setting_a.label, "setting_b": pair.setting_b.label, "a": a, "b": b,
                      "line": pair.line(), "void": pair.void, "rows": rows, "sizes": sizes, "family": pair.family,
                      "unpaired": [f"{u.id}: {a} {u.baseline}, {b} {u.candidate}" for u in pair.view.unpaired]})
    return {"pairs": views}
