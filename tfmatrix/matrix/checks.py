"""One-line errors for matrix values, and the ``[matrix]``/``[images]`` settings.

Every check names file, cell and key and says the fix (``Where.error``); the value
checkers are shared by the product expansion and the cell resolution: ``Where``,
``check_keys``, ``get_str``, ``checked``, ``suggest`` and ``type_name`` are what the
other matrix modules check their tables with.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from .records import (
    ALL_FAMILIES,
    AUTO_ROUNDS,
    AUTO_ROUNDS_CAP,
    CLAIM_FAMILIES,
    CLUSTER_KEYS,
    DEFAULT_CLUSTER_CPUS,
    DEFAULT_MEMORY,
    DEFAULT_PRESET,
    DEFAULT_ROUNDS,
    DEFAULT_SCHEDULE,
    DEFAULT_TIMEOUT_S,
    IMAGES_KEYS,
    KNOWN_PRESETS,
    PATTERNS,
    REGISTRY_ENV,
    SCHEDULES,
    SETTINGS_KEYS,
    VARIANTS,
    Settings,
)
from .size import DEFAULT_MAX_CELLS


@dataclass
class Where:
    """Where a value came from, for one-line messages: file, cell origin, untested policy."""

    file: str
    origin: str
    allow_untested: bool = False
    untested: list[str] = field(default_factory=list)

    def cannot_install(self) -> str:
        """Said after what pip cannot install, only to a cell that set allow_untested (it does not help there)."""
        return " (allow_untested does not change that)" if self.allow_untested else ""

    def error(self, key: str | None, problem: str, fix: str) -> UserError:
        keypart = f"key '{key}': " if key else ""
        return UserError(f"{self.file}: {self.origin}: {keypart}{problem}; {fix}")

    def not_tested(self, key: str, problem: str, fix: str) -> None:
        """An unsupported-but-possible pairing: an error, or a warning under allow_untested."""
        if not self.allow_untested:
            raise self.error(key, problem, f"{fix}, or set allow_untested = true to run it untested")
        self.untested.append(f"{self.file}: {self.origin}: key '{key}': {problem} (allowed by allow_untested = true)")


def suggest(key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    return "known keys: " + ", ".join(known)


def check_keys(where: Where, table: Mapping[str, Any], known: Sequence[str], what: str) -> None:
    for key in table:
        if key not in known:
            if key in ("include", "exclude") and "include" not in known:
                raise where.error(key, f"'{key}' belongs to [[product]] tables", "move the cell into a [[product]]")
            raise where.error(key, f"unknown {what} key", suggest(key, known))


def type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)  # fmt: skip


def get_str(where: Where, values: Mapping[str, Any], key: str, example: str) -> str | None:
    """A string value or None; floats get their own hint (TOML reads 3.10 as 3.1)."""
    if key not in values:
        return None
    value = values[key]
    if isinstance(value, str):
        return value
    if isinstance(value, float | int) and not isinstance(value, bool):
        raise where.error(key, f"expected a string, got {type_name(value)} ({value!r})",
                          f'quote it: {key} = "{example}" (unquoted, TOML reads a version as a number: 3.10 is 3.1)')
    if isinstance(value, list):
        raise where.error(key, "expected a string, got an array",
                          "arrays are axes and belong in [[product]] tables")
    raise where.error(key, f"expected a string, got {type_name(value)}", f'write {key} = "{example}"')


def checked(where: Where, key: str, value: str, pattern: str, expected: str, fix: str) -> str:
    if not PATTERNS[pattern].fullmatch(value):
        raise where.error(key, f"{value!r} is not {expected}", fix)
    return value



def _timeout(where: Where, key: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str) and re.fullmatch(r"[1-9][0-9]{0,6}[smh]?", value):
        seconds = int(value.rstrip("smh")) * {"s": 1, "m": 60, "h": 3600}.get(value[-1], 1)
    else:
        raise where.error(key, f"{value!r} is not a duration", 'write seconds (3600) or "90m" / "2h"')
    if not 1 <= seconds <= 7 * 24 * 3600:
        raise where.error(key, f"{seconds} s is out of range", "use 1 s .. 7 days")
    return seconds


def _memory(where: Where, key: str, value: Any) -> str:
    if not isinstance(value, str) or not PATTERNS["memory"].fullmatch(value):
        raise where.error(key, f"{value!r} is not a memory size", 'write a number and k/m/g, like "8g"')
    return value


def _repeats(where: Where, key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1000:
        raise where.error(key, f"{value!r} is not a repeat count", "use an integer from 1 to 1000")
    return value


def _auto_rounds(where: Where, key: str, value: Any) -> dict[str, Any]:
    """``rounds``: a fixed count, or "auto" (sequential rounds up to the cap)."""
    if value == AUTO_ROUNDS:
        return {"rounds": AUTO_ROUNDS_CAP, "sequential": True}
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 20:
        raise where.error(key, f"{value!r} is not a number of rounds",
                          f'use an integer from 1 to 20, or "{AUTO_ROUNDS}" (more rounds only where a claim is open)')
    return {"rounds": value}


def _variants(where: Where, key: str, value: Any) -> str:
    if value not in VARIANTS:
        raise where.error(key, f"{value!r} is not a choice of variants",
                          "use " + " or ".join(repr(v) for v in VARIANTS))
    return str(value)


def families(where: Where, key: str, value: Any) -> tuple[str, ...]:
    """``claims`` (and ``--claims``): built-in claim families, a string or an array; "all" is every one."""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not names or not all(isinstance(n, str) for n in names):
        raise where.error(key, f"{value!r} is not a list of claim families",
                          f'write {key} = ["seeds", "today"] (or "{ALL_FAMILIES}")')
    out: list[str] = []
    for name in (n.strip() for n in names):
        if name == ALL_FAMILIES:
            out += CLAIM_FAMILIES
        elif name in CLAIM_FAMILIES:
            out.append(name)
        else:
            raise where.error(key, f"{name!r} is not a claims family",
                              "use " + ", ".join(CLAIM_FAMILIES) + f" or {ALL_FAMILIES} (your own claims always run)")
    return tuple(n for n in CLAIM_FAMILIES if n in out)


def _schedule(where: Where, key: str, value: Any) -> str:
    if value not in SCHEDULES:
        raise where.error(key, f"{value!r} is not a schedule", "use " + " or ".join(repr(s) for s in SCHEDULES))
    return str(value)


def _preset(where: Where, key: str, value: Any) -> str:
    if not isinstance(value, str) or not PATTERNS["preset"].fullmatch(value) or value not in KNOWN_PRESETS:
        raise where.error(key, f"{value!r} is not a suite preset", "use one of: " + ", ".join(KNOWN_PRESETS))
    return value


def _registry(where: Where, key: str | None, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not PATTERNS["registry"].fullmatch(value):
        raise where.error(key, f"{value!r} is not a registry host",
                          'write a host[:port][/path] like "mirror.example.com"')
    return value


def parse_settings(file: str, doc: Mapping[str, Any], environ: Mapping[str, str]) -> Settings:
    """``[matrix]`` + ``[images]`` + $TFMATRIX_BASE_REGISTRY -> Settings (baseline still unresolved)."""
    m = doc.get("matrix", {})
    im = doc.get("images", {})
    cl = doc.get("cluster", {})
    for name, table, keys in (("[matrix]", m, SETTINGS_KEYS), ("[images]", im, IMAGES_KEYS),
                              ("[cluster]", cl, CLUSTER_KEYS)):
        where = Where(file, name)
        if not isinstance(table, dict):
            raise where.error(None, f"{name} must be a table", f"write it as a {name} section")
        check_keys(where, table, keys, name)
    where = Where(file, "[matrix]")
    baseline = m.get("baseline")
    if baseline is not None and not isinstance(baseline, str):
        raise where.error("baseline", f"expected a cell name, got {type_name(baseline)}",
                          'write baseline = "tf1.14-cpu"')
    if REGISTRY_ENV in environ:
        registry = _registry(Where(f"environment variable {REGISTRY_ENV}", "value"), None, environ[REGISTRY_ENV])
    else:
        registry = _registry(Where(file, "[images]"), "base_registry", im.get("base_registry"))
    return Settings(
        preset=_preset(where, "preset", m["preset"]) if "preset" in m else DEFAULT_PRESET,
        baseline=baseline,
        timeout_s=_timeout(where, "timeout", m["timeout"]) if "timeout" in m else DEFAULT_TIMEOUT_S,
        memory=_memory(where, "memory", m["memory"]) if "memory" in m else DEFAULT_MEMORY,
        repeats=_repeats(where, "repeats", m["repeats"]) if "repeats" in m else None,
        base_registry=registry,
        max_cells=_max_cells(where, m["max_cells"]) if "max_cells" in m else DEFAULT_MAX_CELLS,
        **(_auto_rounds(where, "rounds", m["rounds"]) if "rounds" in m else {"rounds": DEFAULT_ROUNDS}),
        schedule=_schedule(where, "schedule", m["schedule"]) if "schedule" in m else DEFAULT_SCHEDULE,
        variants=_variants(where, "variants", m["variants"]) if "variants" in m else "all",
        claims=families(where, "claims", m["claims"]) if "claims" in m else CLAIM_FAMILIES[:1],
        **_cluster(Where(file, "[cluster]"), cl),
    )


def _cluster(where: Where, table: Mapping[str, Any]) -> dict[str, Any]:
    """``[cluster]``: where the ray runner's Ray cluster is, the default hardware pool, CPUs per CPU cell."""
    out: dict[str, Any] = {"cluster_cpus": DEFAULT_CLUSTER_CPUS}
    if "address" in table:
        value = table["address"]
        if not isinstance(value, str) or not PATTERNS["address"].fullmatch(value):
            raise where.error("address", f"{value!r} is not a Ray cluster address",
                              'write "ray://head.example.com:10001", "head.example.com:6379" or "auto"')
        out["cluster_address"] = value
    if "pool" in table:
        out["cluster_pool"] = pool(where, "pool", table["pool"])
    if "cpus" in table:
        value = table["cpus"]
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1024:
            raise where.error("cpus", f"{value!r} is not a CPU count", "use an integer from 1 to 1024")
        out["cluster_cpus"] = value
    return out


def pool(where: Where, key: str, value: Any) -> str:
    """A hardware pool: the name of a Ray custom resource that the pool's nodes declare."""
    if isinstance(value, list):
        raise where.error(key, "expected one pool name, got an array", 'arrays are axes and belong in [[product]] '
                               'tables, where pool = ["a", "b"] gives one cell per pool')
    if not isinstance(value, str) or not PATTERNS["pool"].fullmatch(value):
        raise where.error(key, f"{value!r} is not a pool name",
                          'write a Ray custom resource name like "h100" (letters, digits, _ and -, '
                          "declared by the pool's nodes: ray start --resources '{\"h100\": 1}')")
    return value


@dataclass(frozen=True)
class Limits:
    """How a cell runs, apart from what it installs: its own values, else the ``[matrix]``/``[cluster]`` defaults."""

    preset: str
    repeats: int | None
    timeout_s: int
    memory: str
    pool: str | None


def cell_limits(where: Where, values: Mapping[str, Any], settings: Settings) -> Limits:
    """One place for the keys every kind of cell (TF, jax, torch) takes the same way."""
    return Limits(
        preset=_preset(where, "preset", values["preset"]) if "preset" in values else settings.preset,
        repeats=_repeats(where, "repeats", values["repeats"]) if "repeats" in values else settings.repeats,
        timeout_s=_timeout(where, "timeout", values["timeout"]) if "timeout" in values else settings.timeout_s,
        memory=_memory(where, "memory", values["memory"]) if "memory" in values else settings.memory,
        pool=pool(where, "pool", values["pool"]) if "pool" in values else settings.cluster_pool,
    )


def _max_cells(where: Where, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 100_000:
        raise where.error("max_cells", f"{value!r} is not a cell count", "use an integer from 1 to 100000")
    return value



def user_pins(where: Where, values: Mapping[str, Any], example: str) -> list[str]:
    """A cell's ``pins``: requirement strings, each through the same gate as the table's."""
    pins = values.get("pins", [])
    if not isinstance(pins, list) or not all(isinstance(p, str) for p in pins):
        raise where.error("pins", "expected an array of requirement strings", f'write pins = ["{example}"]')
    for pin in pins:
        checked(where, "pins", pin, "requirement", "a requirement with a version specifier",
                f'write one requirement per string, like "{example}" or "numpy<1.19" (no markers, no spaces)')
    return list(pins)


def gated_requirements(where: Where, lines: list[str]) -> tuple[str, ...]:
    """The requirement lines, the table's included: the table is data too, checked like user input."""
    for line in lines:
        if not PATTERNS["requirement"].fullmatch(line):
            raise where.error(None, f"requirement {line!r} from the compatibility table is malformed",
                              "fix tfmatrix/data/releases.toml")
    return tuple(lines)
