"""What a claim is: ``Claim``, its configurations (``Setup``) and the cells it names (``CellMatch``); records only.

A claim is data a user can write (``files.py`` reads it from TOML: the
seeds' thirteen in ``tfmatrix/data/claims/seeds.toml``, today's questions in
``today.toml``, a user's own in the matrix file or a claims file beside it):
one sentence, its two sides as benchmark globs and parameter values
(``specs.Compare``), the side it says is faster (none: a question, the
seeds' fourteen in ``tfmatrix/data/questions.toml``), what its source said
and where. How a claim is answered in a cell, and its
verdicts, is ``answers.py``; every built-in claim and a user's go through the
same record and the same answer.

The ``seed_*`` fields are what the claim's source said (a seed's, or an issue
thread's), named as ``claims.csv`` names them.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from suite.schema import FRAMEWORKS

from ...paths import DEFAULT_FAMILY
from ...versions import minor_series
from .specs import Compare

NOT_A = "not_a"       # a claim that side a does not help: judged against ``Claim.margin``, not against 1
QUESTION = "either"   # a question: no side expected; each line says which side is faster, where one is
ACROSS = ("backend",)  # ``Claim.across``: cells that differ only in this, every pair (later over earlier)
MARGIN = 0.10         # "does not help": a is not faster by more than this (its interval says so)
SEEDS = DEFAULT_FAMILY     # the family of the seeds' own claims (../shared/seeds/): shown as "seed 000"
QUESTIONS = "questions"    # the seeds' questions (tfmatrix/data/questions.toml): every page answers them
WEB_SCHEMES = ("http", "https")


def web_link(url: str) -> bool:
    """Whether ``url`` is a web page a report may link a claim's source to: http(s) with a host.

    A claim's ``url`` becomes a clickable link on the report and the published
    site, and a claims file may come from anyone: a ``javascript:`` or
    ``data:`` link would run in the reader's browser, a ``file:`` one open the
    reader's own files. The loader refuses anything else, and the page asks
    again (a ``Claim`` can be made without the loader). Whitespace and control
    characters are refused too: browsers drop some of them, so what the
    reader's browser opens would not be what this function checked.
    """
    if any(c.isspace() or not c.isprintable() for c in url):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:          # a malformed netloc (an unclosed IPv6 bracket, a bad port)
        return False
    return parts.scheme.lower() in WEB_SCHEMES and bool(host)


class CellLike(Protocol):
    """What a claim asks of a cell to know whether it is about it (an ``analysis.cells.CellResult``, or a matrix
    cell as ``claims.files`` sees it before anything ran)."""

    @property
    def name(self) -> str: ...
    @property
    def tf(self) -> str: ...
    @property
    def keras_version(self) -> str: ...
    @property
    def backend(self) -> str | None: ...          # Keras 3's backend; None for a cell without Keras 3
    @property
    def tf_major(self) -> int | None: ...


def _version_prefix(version: str, prefix: str) -> bool:
    """``3.15.1`` starts with ``3`` and ``3.15``, never ``31``: prefixes end at a dot."""
    return not prefix or version == prefix or version.startswith(prefix + ".")


@dataclass(frozen=True)
class CellMatch:
    """Cells by TF minor series, Keras version prefix, Keras 3 backend and name: how a claim names its cells.

    Every field given must hold; ``backend`` "tensorflow" is Keras 3 on TF
    (a Keras 2 cell has no backend), ``name`` globs match the cell's name.
    """

    tf: str = ""                                # "2.0", "1.14"; "" for any
    keras: str = ""                             # a version prefix ("2.3.1", "3"); "" for any
    backend: tuple[str, ...] = ()               # Keras 3 backends: "tensorflow", "jax", "torch"
    name: tuple[str, ...] = ()                  # globs over cell names
    tf_major: int | None = None                 # only cells of this TF major version

    def matches(self, cell: CellLike) -> bool:
        return ((not self.tf or minor_series(cell.tf) == self.tf)
                and _version_prefix(cell.keras_version, self.keras)
                and (not self.backend or (cell.backend or "") in self.backend)
                and (not self.name or any(fnmatch.fnmatchcase(cell.name, g) for g in self.name))
                and (self.tf_major is None or cell.tf_major == self.tf_major))

    def text(self) -> str:
        parts = [f"TF {self.tf}"] if self.tf else []
        parts += [f"TF {self.tf_major}.x"] if self.tf_major is not None and not self.tf else []
        parts += [f"Keras {self.keras}"] if self.keras else []
        parts += ["Keras 3 on " + " or ".join(FRAMEWORKS.get(b, b) for b in self.backend)] if self.backend else []
        parts += [" or ".join(self.name)] if self.name else []
        return " + ".join(parts) or "any cell"


@dataclass(frozen=True)
class Setup:
    """One configuration a claim is measured at: the source's own first, then stand-ins (with why)."""

    compare: Compare                # ``compare.backends``: only cells on those frameworks (their own answer)
    standin: str = ""               # "" for the source's configuration

    def applies(self, cell: CellLike) -> bool:
        return self.compare.applies(cell)


def answered_with(answer: str, backend: str) -> str:
    """A setup's line label where a framework answers the claim its own way (``answer`` in a claims file)."""
    return f"answered with {answer} on this {FRAMEWORKS.get(backend, backend)} cell (no TensorFlow)"


@dataclass(frozen=True)
class Claim:
    key: str
    seed: str                       # where it was said: a seed's number ("000"), or an issue ("keras-team/keras#21851")
    claim: str                      # the claim, in one sentence
    a: str                          # side labels; the ratio is time(a) / time(b)
    b: str
    setups: tuple[Setup, ...]
    expect: str                     # "a" or "b": the side the claim says is faster; NOT_A: a does not help;
    #                                 QUESTION: none (every configuration of every compare that applies answers)
    seed_figure: str                # the source's own numbers
    seed_setup: str                 # the source's version, device, model
    seed_size: str                  # the source's shape / size
    size: tuple[str, ...]           # parameters that state the measured size
    seed_device: str = "unstated"   # cpu | gpu | cpu+gpu | unstated
    seed_cell: CellMatch | None = None      # the source's own cell (side a's cell for cross-cell claims)
    ref_cell: CellMatch | None = None       # cross-cell claims: side b's cell; every other cell is compared with it
    expect_gpu: str | None = None           # where the claim differs on a GPU (XLA)
    family: str = SEEDS                     # the group it is shown in: "seeds", "today", a user's ("own")
    cells: CellMatch | None = None          # only the cells it is about (side a's, cross-cell); None: every cell
    #                                         (seed 000's TF1-vs-TF2: its TF major version, ``cells.tf_major``)
    margin: float = MARGIN                  # NOT_A: how much faster A may be and still "not help"
    overhead: bool = False                  # its lines also say A - B per call (a per-call cost, in time)
    source_url: str = ""                    # a link to where it was said
    across: str = ""                        # "backend": each pair of cells that differ only in it (``ACROSS``)
    question: str = ""                      # the seeds' question this claim is one configuration of (its key)

    @property
    def is_question(self) -> bool:
        """No side expected: each line says which side is faster (the seeds' questions, a user's own)."""
        return self.expect == QUESTION

    def expected(self, target: str) -> str:
        return self.expect_gpu if target == "gpu" and self.expect_gpu else self.expect

    def about(self, cell: CellLike) -> bool:
        """Whether side a's cell may be ``cell`` (the claim's ``cells``)."""
        return self.cells is None or self.cells.matches(cell)

    def concerns(self, cell: CellLike) -> bool:
        """Whether a side of the claim can be in ``cell``: side a's where it is about the cell, side b's in its
        reference cell, each where one of its configurations applies."""
        here = self.about(cell) or (self.ref_cell is not None and self.ref_cell.matches(cell))
        return here and any(s.applies(cell) for s in self.setups)

    @property
    def origin(self) -> str:
        """Where it was said, as the page names it: "seed 001", or the issue thread."""
        return f"seed {self.seed}" if self.family in (SEEDS, QUESTIONS) else self.seed

    def rule(self) -> str:
        """How the verdict is decided, in words (shown in the report and in claims.csv)."""
        def one(expect: str) -> str:
            if expect == QUESTION:
                return (f"a question: each line says {self.a} or {self.b} is faster where its 95% CI of time A/B "
                        "excludes 1, otherwise no clear difference")
            if expect == NOT_A:
                return (f"holds when {self.a} is shown not to be faster by more than {self.margin:.0%} (95% CI of "
                        f"time A/B above {1 / (1 + self.margin):.3f}); reversed when it is shown faster by more (CI "
                        "below); otherwise no clear difference: not shown either way")
            side, other = (self.a, self.b) if expect == "a" else (self.b, self.a)
            return (f"holds when {side} is clearly faster (95% CI of time A/B {'below' if expect == 'a' else 'above'} "
                    f"1); reversed when {other} is")
        text = one(self.expect)
        if self.expect_gpu and self.expect_gpu != self.expect:
            text = f"CPU: {text}; GPU: {one(self.expect_gpu)}"
        return text
