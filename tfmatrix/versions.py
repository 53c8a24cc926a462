"""Version ordering, one key for the whole host: "1.14" < "1.15" < "2.0" < "2.2" < "2.10" < "2.16.0rc1" < "2.16".

The release table, the matrix's checks (Python floor, Keras 3 minimum, the
oldest cell as baseline), pyenv's interpreters and the report's cell order all
sort with ``version_key``, so "2.10" comes after "2.9" everywhere the same way.

PEP 440-like without depending on ``packaging``: numeric release parts compare
as numbers, missing trailing parts count as zero, and pre-releases
(``a``/``b``/``rc``, ``.dev``) sort before their release. Text that is not a
version at all (a nightly tag, "?") sorts after every real version, by text.
"""
from __future__ import annotations

import re

_VERSION = re.compile(
    r"^\s*v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>a|alpha|b|beta|c|rc|pre|preview)[-_.]?(?P<pre_n>\d*))?"
    r"(?:[-_.]?post[-_.]?(?P<post>\d*))?"
    r"(?:[-_.]?dev[-_.]?(?P<dev>\d*))?"
    r"(?:[+-].*)?\s*$",
    re.IGNORECASE,
)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}

VersionKey = tuple[int, tuple[int, ...], tuple[int, int], int, tuple[int, int], str]


def version_key(text: str | None) -> VersionKey:
    """A sort key for a version string; unparsable text sorts last."""
    m = _VERSION.match(text or "")
    if not m:
        return (1, (), (0, 0), 0, (0, 0), text or "")
    release = [int(p) for p in m.group("release").split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()                      # 2.0 == 2.0.0
    pre = m.group("pre")
    dev = m.group("dev")
    if pre:
        pre_key = (_PRE_RANK[pre.lower()], int(m.group("pre_n") or 0))
    elif dev is not None and m.group("post") is None:
        pre_key = (-1, 0)                  # 2.16.dev0 sorts before 2.16a1
    else:
        pre_key = (3, 0)                   # a final release
    post = int(m.group("post") or 0) if m.group("post") is not None else -1
    dev_key = (0, int(dev or 0)) if dev is not None else (1, 0)
    return (0, tuple(release), pre_key, post, dev_key, "")


def major(text: str | None) -> int | None:
    """The major version (1 for "1.15.0"), or None when the text is not a version."""
    m = _VERSION.match(text or "")
    return int(m.group("release").split(".")[0]) if m else None


def minor_series(text: str | None) -> str:
    """"2.15.1" -> "2.15"; text that is not a version is returned as it is."""
    m = _VERSION.match(text or "")
    if not m:
        return text or "?"
    parts = m.group("release").split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else parts[0]
