"""A cell's results, one record per benchmark variant, each read once into a read-only ``Variant``.

``cells.describe`` reads a cell's records here as it loads the cell; analysis
and views read a ``Variant``'s fields, never the record's dict.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


def _frozen(value: Any) -> Mapping[str, Any]:
    """A record's object, read-only (null or absent: empty)."""
    return MappingProxyType(dict(value) if isinstance(value, dict) else {})


def _label(rid: str, bench: str) -> str:
    """The id without its benchmark: ``model=small,loop=fit,...``."""
    if bench and rid.startswith(bench + "[") and rid.endswith("]"):
        return rid[len(bench) + 1:-1]
    return rid


@dataclass(frozen=True)
class Figure:
    """A number measured beside a variant's samples (``suite.schema.FIGURE_KEYS``): its unit, one value per
    process; ``median`` over the processes that measured it."""

    unit: str
    values: tuple[float | None, ...]

    @property
    def median(self) -> float | None:
        found = sorted(float(v) for v in self.values if isinstance(v, (int, float)))
        if not found:
            return None
        mid = len(found) // 2
        return found[mid] if len(found) % 2 else (found[mid - 1] + found[mid]) / 2

    def text(self) -> str:
        m = self.median
        return "–" if m is None else f"{m:.3g} {self.unit}"


def _figures(value: Any) -> Mapping[str, Figure]:
    if not isinstance(value, dict):
        return _frozen(None)
    return MappingProxyType({str(k): Figure(str(v.get("unit") or ""), tuple(v.get("values") or ()))
                             for k, v in value.items() if isinstance(v, dict)})


@dataclass(frozen=True)
class Variant:
    """One record of a cell's results (one benchmark variant, ``suite.schema.ALL_RECORD_KEYS``), read once.

    Built by ``of`` when the cell is loaded; every field is what the report's
    reads of the record's dict gave, a key the record lacks (or holds as null)
    at that read's default. ``SuiteResults.records`` keeps the dicts for the
    run loop, which merges rounds and writes them back.
    """

    id: str | None = None
    benchmark: str = "?"                    # the record's benchmark, else its id up to "["
    variant: str = ""                       # the id without its benchmark (``model=small,...``)
    seed: str | None = None
    title: str | None = None
    mode: Any = None                        # the record's mode, else its params' mode
    api: Any = None                         # the record's api, else its params' api
    keras_used: str | None = None           # info.keras.flavour: the Keras the variant ran on
    data: str | None = None                 # info.data: where its data lives (a backend step: on the device)
    status: str | None = None               # ok | n/a | error | timeout, as recorded (None when absent)
    reason: str | None = None
    traceback: str | None = None            # a failed process's tail
    unit: str = "s"
    params: Mapping[str, Any] = field(default_factory=lambda: _frozen(None))
    samples: tuple[Any, ...] = ()
    per_process: tuple[tuple[Any, ...], ...] = ()   # the processes that sampled (empty ones left out)
    cv: float | None = None                 # stats.cv
    between_cv: float | None = None         # between_process.cv
    build_s: tuple[Any, ...] = ()           # setup.build_s, per process
    first_call_s: tuple[Any, ...] = ()      # setup.first_call_s, per process
    calls: tuple[Any, ...] = ()             # iterations.per_repeat: calls timed in one sample, per process
    warmup_calls: tuple[Any, ...] = ()      # iterations.warmup_calls: calls before sampling, per process
    inner: int = 1                          # iterations.inner: what one call runs (samples are per iteration)
    unstable: bool = False
    peak_rss_mb: float | None = None
    wall_s: float | None = None
    windows: tuple[str, ...] = ()           # schedule.windows: the window each process sampled in
    passes: tuple[Any, ...] = ()            # schedule.passes: the matrix round each process came from
    leads: tuple[str, ...] = ()             # schedule.leads (ab): the side that went first in its pair, per process
    extra: Mapping[str, Any] = field(default_factory=lambda: _frozen(None))
    figures: Mapping[str, Figure] = field(default_factory=lambda: _frozen(None))   # measured beside the samples
    outside: bool = False                   # another framework's variant, not in the cell's catalogue: n/a, not run

    @classmethod
    def set_aside(cls, reason: str, entry: Mapping[str, Any]) -> Variant:
        """A variant of a framework the cell does not have (``SuiteResults.outside``): no record, only its
        catalogue entry and why, so a claim can still say why it cannot exist in the cell."""
        rid, bench = str(entry["id"]), str(entry["benchmark"])
        return cls(id=rid, benchmark=bench, variant=_label(rid, bench), seed=entry["seed"], mode=entry["mode"],
                   api=entry["api"], status="n/a", reason=reason, params=_frozen(entry["params"]), wall_s=0.0,
                   outside=True)

    @classmethod
    def of(cls, rec: Mapping[str, Any]) -> Variant:
        params, info = _frozen(rec.get("params")), _frozen(rec.get("info"))
        schedule, setup = _frozen(rec.get("schedule")), _frozen(rec.get("setup"))
        iterations = _frozen(rec.get("iterations"))
        return cls(
            id=rec.get("id"),
            benchmark=rec.get("benchmark") or str(rec.get("id", "?")).split("[")[0],
            variant=_label(str(rec.get("id") or ""), str(rec.get("benchmark") or "")),
            seed=rec.get("seed"), title=rec.get("title"),
            mode=rec.get("mode") or params.get("mode"), api=rec.get("api") or params.get("api"),
            keras_used=_frozen(info.get("keras")).get("flavour"), data=info.get("data"),
            status=rec.get("status"), reason=rec.get("reason"), traceback=rec.get("traceback"),
            unit=rec.get("unit") or "s",
            params=params,
            samples=tuple(rec.get("samples") or ()),
            per_process=tuple(tuple(p) for p in (rec.get("per_process") or ()) if p),
            cv=_frozen(rec.get("stats")).get("cv"),
            between_cv=_frozen(rec.get("between_process")).get("cv"),
            build_s=tuple(setup.get("build_s") or ()), first_call_s=tuple(setup.get("first_call_s") or ()),
            calls=tuple(iterations.get("per_repeat") or ()), warmup_calls=tuple(iterations.get("warmup_calls") or ()),
            inner=iterations["inner"] if isinstance(iterations.get("inner"), int) and iterations["inner"] > 0 else 1,
            unstable=bool(rec.get("unstable")),
            peak_rss_mb=rec.get("peak_rss_mb"), wall_s=rec.get("wall_s"),
            windows=tuple(schedule.get("windows") or ()), passes=tuple(schedule.get("passes") or ()),
            leads=tuple(str(x) for x in schedule.get("leads") or ()),
            extra=_frozen(rec.get("extra")), figures=_figures(rec.get("figures")),
        )

    @property
    def ok(self) -> bool:
        return self.status == "ok"
