"""One cell's table (a ``[[cell]]``, or a ``[[product]]``'s cell once expanded) read once into a typed record.

Every key's type is checked here, in one place, before anything resolves it:
the resolvers (``resolve``, ``base_image``, ``backends``, ``existing``,
``names``) read ``CellTable``'s fields and never the raw table, so a key is
checked once and a resolver can only ask for a key the record declares. What a
value means against the release table (a TF release that exists, a Keras that
pairs with it) stays the resolvers'.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .checks import Limits, Where, cell_limits, check_keys, get_str, type_name, user_pins
from .records import CELL_KEYS, TARGETS, Settings

# each string key and the example its one-line error shows (a float: "quote it: python = "3.10"")
STRING_KEYS = {"target": "cpu", "backend": "jax", "tf": "1.15", "keras": "2.2.5", "python": "3.10",
               "base": "python", "base_digest": "sha256:...", "cuda": "11.2", "cudnn": "8.1", "name": "my-cell",
               "jax": "0.6", "torch": "2.6"}


@dataclass(frozen=True)
class CellTable:
    """What one cell's table says, each key of its type (None: not given); ``where`` names the file and cell in its
    errors and collects the untested pairings; ``given``: the keys the table wrote."""

    where: Where
    given: frozenset[str]
    limits: Limits
    target: str = "cpu"
    backend: str | None = None
    tf: str | None = None
    keras: str | None = None
    python: str | None = None
    base: str | None = None
    base_digest: str | None = None
    cuda: str | None = None
    cudnn: str | None = None
    name: str | None = None
    jax: str | None = None                    # a jax cell's JAX release (a minor: its newest patch)
    torch: str | None = None                  # a torch cell's PyTorch release
    pins: tuple[str, ...] = ()
    env: Mapping[str, Any] | None = None      # NAME -> value: each checked where the environment is made
    opt_in: bool = False

    @property
    def allow_untested(self) -> bool:
        """``allow_untested = true``: untested pairings are warnings (``where`` holds it, since its checks ask)."""
        return self.where.allow_untested

    def backend_release(self, backend: str) -> str | None:
        """The release the table names for ``backend`` ("jax", "torch"); None for any other."""
        return {"jax": self.jax, "torch": self.torch}.get(backend)

    @property
    def existing(self) -> bool:
        """The cell names an interpreter by its path (``python = "/..."``), not a Python version
        (``existing``)."""
        return self.python is not None and "/" in self.python


def read_cell_table(file: str, origin: str, values: Mapping[str, Any], settings: Settings) -> CellTable:
    """``values`` as a ``CellTable``: unknown keys, and any key of the wrong type, are one line naming the file, the
    cell, the key and the fix (``UserError``)."""
    where = Where(file, origin)
    check_keys(where, values, CELL_KEYS, "cell")
    where.allow_untested = _flag(where, values, "allow_untested")
    strings = {key: get_str(where, values, key, example) for key, example in STRING_KEYS.items()}
    target = strings.pop("target") or "cpu"
    if target not in TARGETS:
        raise where.error("target", f"{target!r} is not a target", 'use "cpu" or "gpu"')
    env = values.get("env")
    if env is not None and not isinstance(env, dict):
        raise where.error("env", f"expected a table, got {type_name(env)}", 'write env = { NAME = "value" }')
    limits = cell_limits(where, values, settings)
    return CellTable(where, frozenset(values), limits, target, pins=tuple(user_pins(where, values, "h5py==2.10.0")),
                     env=env, opt_in=_flag(where, values, "opt_in"), **strings)


def _flag(where: Where, values: Mapping[str, Any], key: str) -> bool:
    value = values.get(key, False)
    if not isinstance(value, bool):
        raise where.error(key, f"expected true or false, got {type_name(value)}", f"write {key} = true")
    return value
