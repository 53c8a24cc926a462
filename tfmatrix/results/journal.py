"""The head of an interleaved run's journal: ``reports/.interleaved/run.json``, one record with one reader and writer.

The journal keeps every complete slice of a run until it ends, so that an
interrupted run resumes with the same seed (``execution.interleaved``). Its
head says which run that is (``identity``: the cells' requests and inputs;
``seed``; ``run``, the name its cells' files carry), the turns planned so
far, the host's speed before each turn, a sequential run's settings and
stops, and what the way turns run wants kept (the duet's CPUs). The run
loop changes the head as it goes and writes it after each step; the cells'
files are made from it (``execution.live.cell_results``). A head written
before the format had a version carries no ``schema`` key and reads as
version 1, which it is.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from .documents import HostSpeedPoint, host_speed_points
from .formats import Format, versioned
from .store import write_json_atomic

HEAD_FILE = "run.json"          # <journal>/run.json
JOURNAL_FORMAT = Format("tfmatrix.journal", 1, {}, "run journal")
_FIELDS = ("schema", "schema_version", "identity", "seed", "run", "host_speed", "turns", "sequential")


@dataclass
class JournalHead:
    """What an interleaved run is and how far it got: changed by the run loop as it goes, written after each step."""

    identity: str                  # the cells' requests and inputs, hashed: a resume needs the same
    seed: int
    run: str                       # "<time>-<seed>": the name the cells' files and the noise history give the run
    host_speed: list[HostSpeedPoint] = field(default_factory=list)     # one per turn that ran, before it
    turns: list[list[Any]] = field(default_factory=list)               # ``execution.turns.Turn.to_json`` rows
    sequential: dict[str, Any] | None = None        # a sequential run's settings and, at its end, each line's stop
    how: dict[str, Any] = field(default_factory=dict)   # what the way turns run keeps (``OneAfterAnother.note``)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": JOURNAL_FORMAT.schema, "schema_version": JOURNAL_FORMAT.version,
                               "identity": self.identity, "seed": self.seed, "run": self.run,
                               "host_speed": [p.to_json() for p in self.host_speed], "turns": self.turns}
        if self.sequential is not None:
            out["sequential"] = self.sequential
        return {**out, **self.how}

    @classmethod
    def from_json(cls, doc: Any, path: Path) -> JournalHead:
        doc = versioned(doc, JOURNAL_FORMAT, path)
        try:
            return cls(str(doc["identity"]), int(doc["seed"]), str(doc["run"]),
                       host_speed_points(doc.get("host_speed")), list(doc.get("turns") or []),
                       doc.get("sequential"), {k: v for k, v in doc.items() if k not in _FIELDS})
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{path}: not a {JOURNAL_FORMAT.what} head this tfmatrix reads ({exc})") from None


def read_head(journal: Path) -> JournalHead | None:
    """The head kept in ``journal`` (None: none, or one that cannot be read: the run starts anew)."""
    path = journal / HEAD_FILE
    try:
        return JournalHead.from_json(json.loads(path.read_text()), path)
    except (OSError, ValueError, UserError):
        return None


def write_head(journal: Path, head: JournalHead) -> None:
    """The head, atomically: a crash leaves the previous head or this one."""
    write_json_atomic(journal / HEAD_FILE, head.to_json())
