"""The noise prior shipped with tfmatrix: what a fresh machine's first look borrows until it has a history of its own.

Why: a claim line of one round a side has no variance of its own, so a
machine with no noise history (no run archive) waited for round 2
before its first look, and on the default that second round was a whole
round of every claim's variants (12 minutes of a 41-minute cold run) spent
mostly on lines that are 5-30x effects. A suite variant's noise is much the
same wherever it runs (the same model and framework on a shared CPU), so the
variances one run measured here are shipped
(``tfmatrix/data/noise_prior.toml``: per variant id, pooled over the cells
that measured it, with the host and the day) and lent to a sequential run's
looks for each variant that neither the run's own rounds nor this machine's
history knows (``lend``).

Another host's noise is not this one's: the prior is lent ``scale`` times
wider than measured, on ``d`` degrees of freedom, so that a host with twice
this one's per-round SD still calls an unchanged line different at most
``ALPHA`` of the time over all its looks (the seeded simulations of
``tests/test_sequential.py``). It is a last resort: from round 2 a line has
a variance of its own and never sees it. Only large effects decide at
round 1 on it; the rest look again after round 2, as before. A run's cells
record that their looks borrowed it (``"prior"`` in their sequential
record), and the report lends it to those cells alone
(``report.build``): the line a look decided is the line the report shows.
"""
from __future__ import annotations

import dataclasses
import functools
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .noise_model import NoiseModel

PRIOR_PATH = Path(__file__).resolve().parent.parent.parent / "data" / "noise_prior.toml"   # package data


@dataclass(frozen=True)
class ShippedPrior:
    """Each suite variant's unit variance as measured where the table was made, and how it is lent elsewhere."""

    variances: Mapping[str, float]      # variant id -> variance of one round's log time (process effects out)
    scale: float                        # lent this many times wider than measured
    d: float                            # on this many degrees of freedom
    measured: str                       # where and when: the host, its reference, the run

    @property
    def source(self) -> str:
        return f"(the prior shipped with tfmatrix: {self.measured})"

    def lend(self, model: NoiseModel | None, keys: Iterable[tuple[str, str]]) -> NoiseModel | None:
        """``model`` (this machine's history, None: none) with the prior lent for each (cell, variant id) of
        ``keys`` that it does not know and the table does (``NoiseModel.lent``: used only where the run judged has
        no variance of its own either); ``model`` itself when nothing is lent."""
        known = model.variances if model is not None else {}
        lent = {k: (self.scale * self.variances[k[1]], self.d) for k in keys
                if k not in known and k[1] in self.variances}
        if not lent:
            return model
        if model is None:
            return NoiseModel({}, lent=lent, lent_source=self.source)
        return dataclasses.replace(model, lent=lent, lent_source=self.source)


def read_prior(path: Path) -> ShippedPrior:
    """The table at ``path`` (package data: a broken one is a bug of the release, so it raises)."""
    doc = tomllib.loads(path.read_text())
    how = doc["prior"]
    return ShippedPrior({str(k): float(v) for k, v in doc["variances"].items()}, float(how["scale"]),
                        float(how["d"]), str(how["measured"]))


@functools.cache
def shipped() -> ShippedPrior:
    """The prior shipped with this release (read once)."""
    return read_prior(PRIOR_PATH)
