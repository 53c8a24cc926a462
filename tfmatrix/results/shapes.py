"""Shapes: the type of every field a results document may hold, checked before anything reads it.

A cell file is written by tfmatrix, but it is also truncated by crashes, edited
by hand and copied between machines. One field of the wrong type (``"cell":
"oops"``, ``"request": 5``) must not end as a traceback deep in the report, so
``tfmatrix.results.documents`` declares each field's shape (its top-level fields beside
the dataclass fields, the nested ones here) and refuses a file whose field has
the wrong type with one line naming the file and the field
(``results.records[3].samples[0]``), before any other code sees it.

``None`` is accepted everywhere: every reader treats a missing value and null
alike. Keys not declared are not read by the report and are not checked.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from suite import schema as suite_schema


@dataclass(frozen=True)
class Leaf:
    """A scalar: one of ``types`` (``choices``, when given, lists the only values allowed)."""

    types: tuple[type, ...]
    expected: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Obj:
    """A JSON object: declared ``keys`` have their own shapes; ``rest`` (if any) applies to the others."""

    keys: Mapping[str, Shape] = field(default_factory=dict)
    rest: Shape = None


@dataclass(frozen=True)
class ListOf:
    """A JSON array whose every item has shape ``item``."""

    item: Shape = None


Shape = Union[Leaf, Obj, ListOf, None]      # None: anything goes (the report only prints it)

STR = Leaf((str,), "a string")
NUM = Leaf((int, float), "a number")
BOOL = Leaf((bool,), "true or false")


def from_types(types: Any) -> Shape:
    """The shape of a ``suite.schema`` type spec (``(str, type(None))`` -> a string; None: any value)."""
    kinds = {t for t in (types if isinstance(types, tuple) else (types,)) if t is not type(None)}
    if kinds == {str}:
        return STR
    if kinds in ({int, float}, {int}, {float}):
        return NUM
    if kinds == {bool}:
        return BOOL
    if kinds == {dict}:
        return Obj()
    if kinds == {list}:
        return ListOf()
    return None


# What the host knows of a record beyond the suite's top-level types; its keys are the suite's
# (``suite.schema.ALL_RECORD_KEYS``), so one definition says which keys a record has.
RECORD_DETAIL: Mapping[str, Shape] = {
    "samples": ListOf(NUM),
    "per_process": ListOf(ListOf(NUM)),
    "iterations": Obj({"per_repeat": ListOf(NUM), "repeats": ListOf(NUM), "inner": NUM, "warmup_calls": ListOf(NUM)}),
    "stats": Obj(rest=NUM),
    "between_process": Obj({"cv": NUM}),
    "setup": Obj({"build_s": ListOf(NUM), "first_call_s": ListOf(NUM)}),
    "schedule": Obj({"windows": ListOf(STR), "rounds": ListOf(NUM), "stopped": ListOf(STR), "passes": ListOf(NUM),
                     "leads": ListOf(STR)}),
    "info": Obj({"keras": Obj({"flavour": STR})}),
}
RECORD = Obj({key: RECORD_DETAIL.get(key, from_types(types)) for key, types in suite_schema.ALL_RECORD_KEYS.items()})
# ``config.outside``: the variants of frameworks the cell does not have, by reason (``suite.schema.OUTSIDE_KEY``)
OUTSIDE = ListOf(Obj({"reason": STR, "variants": ListOf(Obj({key: from_types(types) for key, types
                                                             in suite_schema.OUTSIDE_VARIANT_KEYS.items()}))}))
KERAS_FACTS = Obj({"flavour": STR, "version": STR})
TF_FACTS = Obj({
    "tensorflow": Obj({"version": STR, "git_version": STR}),
    "keras": Obj({"tf.keras": KERAS_FACTS, "keras": KERAS_FACTS}),
    "build_info": Obj(), "threads": Obj(), "gpus_visible": ListOf(),
})
HOST_FACTS = Obj({
    "cpu": Obj({"flags": Obj()}),
    "python": Obj({"version": STR}),
})


def _got(value: Any) -> str:
    kind = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} ({text[:30]}{'...' if len(text) > 30 else ''})" if not isinstance(value, (list, dict)) else kind


def problem(value: Any, shape: Shape, where: str) -> str | None:
    """The first field of ``value`` that does not have ``shape``, as "field 'a.b[0]' is X, expected Y"; else None."""
    if shape is None or value is None:
        return None
    if isinstance(shape, Leaf):
        ok = isinstance(value, shape.types) and not (isinstance(value, bool) and bool not in shape.types)
        if ok and shape.choices and value not in shape.choices:
            return f"field '{where}' is {value!r}, expected one of {', '.join(shape.choices)}"
        if not ok:
            return f"field '{where}' is {_got(value)}, expected {shape.expected}"
        return None
    if isinstance(shape, ListOf):
        if not isinstance(value, list):
            return f"field '{where}' is {_got(value)}, expected an array"
        for i, item in enumerate(value):
            found = problem(item, shape.item, f"{where}[{i}]")
            if found:
                return found
        return None
    if not isinstance(value, dict):
        return f"field '{where}' is {_got(value)}, expected an object"
    for key, item in value.items():
        found = problem(item, shape.keys.get(key, shape.rest), f"{where}.{key}" if where else str(key))
        if found:
            return found
    return None
