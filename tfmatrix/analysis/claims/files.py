"""Claims as data: the TOML a claim is written in (the built-in families and a user's own), read into ``Claim``s.

One schema for every claim, so a user's claim takes the path a seed's takes
(the grid, the Claims section, ``claims.csv``, a sequential run's looks,
``explain --claim``, ``bisect --claim``, ``timeline``). The built-in
families are files in ``tfmatrix/data/claims/`` (``seeds.toml``: the seeds'
thirteen; ``today.toml``: the questions users ask in 2025-26); a user writes
``[[claim]]`` tables in the matrix file or in a claims file it names
(``[suite] claims``). ``docs/claims.md`` is the reader's account; a claim::

    [[claim]]
    key = "predict_overhead"                  # unique: explain/bisect --claim name it
    claim = "predict() costs more per call than model(x)."
    source = "my-team/notes#12"               # where it was said
    a = "predict()"                           # side labels: the ratio is time A / time B
    b = "model(x)"
    faster = "b"                              # "a", "b", or "not a": A does not help (within margin)
    figure = "2 ms vs 0.2 ms"                 # what the source measured
    cells = { keras = "3" }                   # the cells it is about (tf, keras, backend, name, tf_major)

    [[claim.compare]]                         # one configuration: benchmark globs and each side's values
    benchmarks = ["inference.tiny"]
    a = { path = "predict", stage = "compiled", api = "tf.keras" }
    b = { path = "call", stage = "compiled", api = "tf.keras" }

A file's problems are one line each (``UserError``: exit code 2), found
before anything is built: here a key the schema does not have, a wrong type,
a duplicate key; in ``checks.py``, against the suite's catalogue and
the matrix's cells.
"""
from __future__ import annotations

import difflib
import functools
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suite.schema import FRAMEWORKS, NO_TF_BACKENDS, param_text

from ...errors import UserError
from ...matrix.records import CLAIM_FAMILIES
from ...paths import CLAIMS_DIR, QUESTIONS_FILE
from .records import ACROSS, MARGIN, NOT_A, QUESTION, QUESTIONS, SEEDS, CellMatch, Claim, Setup, answered_with, web_link
from .specs import Compare, ParamSpec, param_spec

SCHEMA, SCHEMA_VERSION = "tfmatrix.claims", 1
BUILTIN_DIR = CLAIMS_DIR
BUILTIN = CLAIM_FAMILIES            # the built-in families, in the order the report shows them
OWN, OWN_LABEL = "own", "Your claims"
FILE_KEYS = ("schema", "schema_version", "family", "label", "claim")
CLAIM_KEYS = ("key", "source", "url", "claim", "a", "b", "faster", "faster_on_gpu", "margin", "overhead", "figure",
              "setup", "size", "size_params", "device", "question", "cell", "against", "cells", "across",
              "compare")
REQUIRED = ("key", "claim", "a", "b", "faster", "compare")
COMPARE_KEYS = ("benchmarks", "a", "b", "backends", "standin", "answer")
MATCH_KEYS = ("tf", "keras", "backend", "name", "tf_major")
FASTER = {"a": "a", "b": "b", "not a": NOT_A, "either": QUESTION}
DEVICES = ("cpu", "gpu", "cpu+gpu", "unstated")
KEY_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True)
class Family:
    """A group of claims shown together (the grid's rows, the Claims section): its name and heading."""

    name: str
    label: str


@dataclass(frozen=True)
class Where:
    """Where a table came from, for one-line messages."""

    file: str
    what: str                       # "claim 'key'", "claim[3]"

    def error(self, key: str | None, problem: str, fix: str) -> UserError:
        keypart = f"key '{key}': " if key else ""
        return UserError(f"{self.file}: {self.what}: {keypart}{problem}; {fix}")


def suggest(word: str, known: Iterable[str]) -> str:
    known = list(known)
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else "known keys: " + ", ".join(known)


def _keys(where: Where, table: Mapping[str, Any], known: Sequence[str], what: str) -> None:
    for key in table:
        if key not in known:
            raise where.error(key, f"unknown {what} key", suggest(key, known))


def _text(where: Where, table: Mapping[str, Any], key: str, default: str = "") -> str:
    value = table.get(key, default)
    if not isinstance(value, str):
        raise where.error(key, f"expected a string, got {type(value).__name__}", f'write {key} = "..."')
    return value


def _url(where: Where, table: Mapping[str, Any]) -> str:
    """``url``: a link to the claim's source, http(s) with a host or nothing (the report makes it clickable)."""
    url = _text(where, table, "url")
    if url and not web_link(url):
        shown = url if len(url) <= 60 else url[:57] + "..."
        raise where.error("url", f"{shown!r} is not an http(s) link",
                          'write url = "https://..." (the page where the claim was made), or leave url out')
    return url


def _strings(where: Where, table: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.error(key, "expected a string or an array of strings", f'write {key} = ["..."]')
    return tuple(value)


def _spec(where: Where, value: Any, key: str, empty: bool = False) -> ParamSpec:
    """A side's parameter values: ``{name = value}`` (value as the variant id writes it; an array: any of them;
    ``empty``: ``{}`` allowed, where the sides are in different cells and every configuration answers)."""
    if not isinstance(value, dict) or (not value and not empty):
        raise where.error(key, "expected a table of parameter values", f'write {key} = {{ path = "predict" }}')
    out: dict[str, str | tuple[str, ...]] = {}
    for name, v in value.items():
        if isinstance(v, list) and v and all(isinstance(x, (str, int, float, bool)) for x in v):
            out[name] = tuple(param_text(x) for x in v)
        elif isinstance(v, (str, int, float, bool)):
            out[name] = param_text(v)
        else:
            raise where.error(key, f"parameter {name!r}: expected a value or an array of values",
                              f'write {name} = "value" as the variant id shows it (batch_shape = "32x4")')
    return param_spec(**out)


def _match(where: Where, value: Any, key: str) -> CellMatch:
    """``cell``, ``against`` and ``cells``: which cells, by TF series, Keras prefix, backend, name glob, TF major."""
    if not isinstance(value, dict):
        raise where.error(key, "expected a table", f'write {key} = {{ tf = "2.0" }} (keys: {", ".join(MATCH_KEYS)})')
    _keys(where, value, MATCH_KEYS, f"{key}")
    backend = _strings(where, value, "backend")
    for b in backend:
        if b not in FRAMEWORKS:
            raise where.error(key, f"backend {b!r} is not a Keras 3 backend", "write tensorflow, jax or torch")
    major = value.get("tf_major")
    if major is not None and (not isinstance(major, int) or isinstance(major, bool) or major not in (1, 2)):
        raise where.error(key, f"tf_major must be 1 or 2, got {major!r}", "write tf_major = 2")
    return CellMatch(_text(where, value, "tf"), _text(where, value, "keras"), backend,
                     _strings(where, value, "name"), major)


def _setups(where: Where, value: Any, across_cells: bool = False) -> tuple[Setup, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(t, dict) for t in value):
        raise where.error("compare", "expected one or more [[claim.compare]] tables",
                          'add [[claim.compare]] with benchmarks = ["..."], a = {...}, b = {...}')
    out: list[Setup] = []
    for i, table in enumerate(value):
        here = Where(where.file, f"{where.what} compare[{i}]")
        _keys(here, table, COMPARE_KEYS, "compare")
        for need in ("benchmarks", "a", "b"):
            if need not in table:
                raise here.error(need, "missing", f"write {need} = ... (benchmarks = [\"inference.tiny\"], "
                                                  "a = {...}, b = {...})")
        globs = _strings(here, table, "benchmarks")
        if not globs:
            raise here.error("benchmarks", "empty", 'name at least one benchmark: benchmarks = ["inference.tiny"]')
        a, b = _spec(here, table["a"], "a", across_cells), _spec(here, table["b"], "b", across_cells)
        backends = _strings(here, table, "backends")
        for name in backends:
            if name not in FRAMEWORKS:
                raise here.error("backends", f"{name!r} is not a framework", "write tensorflow, jax or torch")
        standin = _text(here, table, "standin")
        answer = table.get("answer")
        if answer is None:
            out.append(Setup(Compare(globs, a, b, backends), standin))
            continue
        if backends or standin:
            raise here.error("answer", "answer says each backend's label itself",
                             "leave out backends and standin beside answer")
        if not isinstance(answer, dict) or not answer or not all(isinstance(v, str) for v in answer.values()):
            raise here.error("answer", "expected a table of backend = label",
                             'write answer = { jax = "jax.jit", torch = "torch.compile" }')
        for backend, label in answer.items():
            if backend not in NO_TF_BACKENDS:
                raise here.error("answer", f"{backend!r} has TensorFlow's answer already",
                                 "name jax or torch (a TensorFlow cell answers with backends = [\"tensorflow\"])")
            out.append(Setup(Compare(globs, a, b, (backend,)), answered_with(label, backend)))
    return tuple(out)


def parse_claim(table: Mapping[str, Any], where: Where, family: str) -> Claim:
    """One ``[[claim]]`` table as a ``Claim`` (``UserError`` naming ``where`` and the key)."""
    _keys(where, table, CLAIM_KEYS, "claim")
    key = table.get("key")
    if isinstance(key, str):
        where = Where(where.file, f"claim {key!r}")
    for need in REQUIRED:
        if need not in table:
            raise where.error(need, "missing", f"every claim has {', '.join(REQUIRED)}")
    if not isinstance(key, str) or not key or set(key) - KEY_CHARS or len(key) > 64:
        raise where.error("key", f"{key!r} is not a claim key", "use lower-case letters, digits and '_' (at most 64)")
    faster = _text(where, table, "faster")
    if faster not in FASTER:
        raise where.error("faster", f"{faster!r} is not a side",
                          'write faster = "a", "b", "not a" (A does not help) or "either" (a question)')
    gpu = _text(where, table, "faster_on_gpu") or None
    if gpu is not None and gpu not in FASTER:
        raise where.error("faster_on_gpu", f"{gpu!r} is not a side", 'write "a", "b" or "not a"')
    margin = table.get("margin", MARGIN)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin < 1:
        raise where.error("margin", f"{margin!r} is not a fraction", "write margin = 0.10 (A not faster by over 10%)")
    if "margin" in table and NOT_A not in (FASTER[faster], FASTER.get(gpu or "")):
        raise where.error("margin", 'a margin belongs to faster = "not a"', "leave it out, or say A does not help")
    overhead = table.get("overhead", False)
    if not isinstance(overhead, bool):
        raise where.error("overhead", "expected true or false", "write overhead = true")
    device = _text(where, table, "device", "unstated")
    if device not in DEVICES:
        raise where.error("device", f"{device!r} is not a device", "write " + ", ".join(DEVICES))
    for text in ("claim", "a", "b"):
        if not _text(where, table, text).strip():
            raise where.error(text, "empty", f"say it in words: {text} = \"...\"")
    against = _match(where, table["against"], "against") if "against" in table else None
    across = _text(where, table, "across")
    if across and across not in ACROSS:
        raise where.error("across", f"{across!r} is not something cells differ in here", 'write across = "backend"')
    if across and against is not None:
        raise where.error("across", "across and against both name side b's cells", "keep one of them")
    return Claim(
        key=key, seed=_text(where, table, "source"), claim=_text(where, table, "claim"), a=_text(where, table, "a"),
        b=_text(where, table, "b"), setups=_setups(where, table["compare"], bool(across) or against is not None),
        expect=FASTER[faster],
        seed_figure=_text(where, table, "figure"), seed_setup=_text(where, table, "setup"),
        seed_size=_text(where, table, "size"), size=_strings(where, table, "size_params"), seed_device=device,
        seed_cell=_match(where, table["cell"], "cell") if "cell" in table else None, ref_cell=against,
        expect_gpu=FASTER[gpu] if gpu is not None else None, family=family, across=across,
        question=_text(where, table, "question"),
        cells=_match(where, table["cells"], "cells") if "cells" in table else None, margin=float(margin),
        overhead=overhead, source_url=_url(where, table))


def parse_document(doc: Mapping[str, Any], file: str, family: str | None = None,
                   taken: Iterable[str] = ()) -> tuple[Family, tuple[Claim, ...]]:
    """A claims file's family and claims. ``family``: the one it must be (a built-in file); a user file names its
    own (default ``own``), never a built-in one. ``taken``: claim keys already defined elsewhere."""
    top = Where(file, "top level")
    _keys(top, doc, FILE_KEYS, "claims file")
    schema = doc.get("schema", SCHEMA)
    version = doc.get("schema_version", SCHEMA_VERSION)
    if schema != SCHEMA:
        raise top.error("schema", f"{schema!r} is not a claims file", f'write schema = "{SCHEMA}" or leave it out')
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise top.error("schema_version", f"{version!r} is not a version", f"write schema_version = {SCHEMA_VERSION}")
    if version > SCHEMA_VERSION:
        raise top.error("schema_version", f"{version} is newer than this tfmatrix reads ({SCHEMA_VERSION})",
                        "update tfmatrix")
    named = _text(top, doc, "family", family or OWN)
    if family is not None and named != family:
        raise top.error("family", f"{named!r}: this file holds the {family!r} family", f'write family = "{family}"')
    if family is None and named in (*BUILTIN, QUESTIONS):
        raise top.error("family", f"{named!r} is a built-in family", "name your own (the default is 'own')")
    if not named or set(named) - KEY_CHARS:
        raise top.error("family", f"{named!r} is not a family name", "use lower-case letters, digits and '_'")
    label = _text(top, doc, "label", OWN_LABEL if named == OWN else named)
    return Family(named, label), parse_tables(doc.get("claim", []), file, named, taken)


def parse_tables(tables: Any, file: str, family: str, taken: Iterable[str] = ()) -> tuple[Claim, ...]:
    """``[[claim]]`` tables (a claims file's, or a matrix file's) as claims of ``family``; keys unique with
    ``taken``."""
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise UserError(f"{file}: 'claim' must be an array of tables; write [[claim]] headers")
    seen = set(taken)
    out = []
    for i, table in enumerate(tables):
        claim = parse_claim(table, Where(file, f"claim[{i}]"), family)
        if claim.key in seen:
            raise Where(file, f"claim {claim.key!r}").error(
                "key", "is defined twice (a claim's key names it in explain, bisect and claims.csv)",
                "give each claim its own key")
        seen.add(claim.key)
        out.append(claim)
    return tuple(out)


def read_toml(path: Path, file: str) -> dict[str, Any]:
    """A TOML file's document, or one line naming the file (and the position of a syntax error)."""
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise UserError(f"{file}: no such claims file; fix the path") from None
    except (UnicodeDecodeError, IsADirectoryError) as exc:
        raise UserError(f"{file}: not a TOML text file ({exc.__class__.__name__}); name a .toml claims file") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{file}: TOML syntax error: {' '.join(str(exc).split())}; fix the file at that position") \
            from None


# -- the built-in families ------------------------------------------------------------------------------------

@functools.cache
def builtin_family(name: str) -> tuple[Family, tuple[Claim, ...]]:
    """A built-in family from ``tfmatrix/data/claims/<name>.toml``, read once."""
    path = BUILTIN_DIR / f"{name}.toml"
    return parse_document(read_toml(path, str(path)), str(path), family=name)


def builtin(families: Iterable[str] = (SEEDS,)) -> tuple[Claim, ...]:
    """The claims of the built-in ``families``, in the report's order (the seeds' first)."""
    wanted = set(families)
    return tuple(c for name in BUILTIN if name in wanted for c in builtin_family(name)[1])


def every_builtin() -> tuple[Claim, ...]:
    """Every built-in claim: what ``explain``, ``bisect`` and ``timeline`` can name by key."""
    return builtin(BUILTIN)


@functools.cache
def question_family() -> tuple[Family, tuple[Claim, ...]]:
    """The seeds' questions (``tfmatrix/data/questions.toml``), read once."""
    return parse_document(read_toml(QUESTIONS_FILE, str(QUESTIONS_FILE)), str(QUESTIONS_FILE), family=QUESTIONS)


def questions() -> tuple[Claim, ...]:
    """The seeds' questions: every report answers them on what ran; they never choose a run's variants or rounds."""
    return question_family()[1]


def family_labels(claims: Iterable[Claim]) -> dict[str, str]:
    """Each family the claims come from, with its heading, in the order they come."""
    labels = {name: builtin_family(name)[0].label for name in BUILTIN} | {QUESTIONS: question_family()[0].label}
    return {c.family: labels.get(c.family, OWN_LABEL if c.family == OWN else c.family) for c in claims}


def find(claims: Sequence[Claim], key: str, flag: str) -> Claim:
    """The claim ``key`` names, or one line with the closest key (``--claim`` of explain, bisect)."""
    found = next((c for c in claims if c.key == key), None)
    if found is None:
        close = difflib.get_close_matches(key, [c.key for c in claims], n=1)
        fix = f"did you mean {close[0]}?" if close else "claims are: " + ", ".join(c.key for c in claims)
        raise UserError(f"{flag} {key}: no such claim; {fix}")
    return found
