"""A user's own benchmark files (``[suite] paths``, ``--bench-path``): checks, content hash, where cells see them.

The files are never baked into an image: the Docker runner mounts each path
read-only under ``/opt/tfmatrix/bench/<i>/`` (next to the suite), the venv
runner passes the host paths, and both name them in ``$TFMATRIX_SUITE_PLUGINS``
for ``suite.plugins`` to load. Their content hash is part of the run request
(``RunRequest.bench``), so an edited file re-runs its cells and an unchanged
one keeps their results.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from suite.schema import side_entry

from ..errors import UserError

BENCH_MOUNT = "/opt/tfmatrix/bench"
# A path's last component becomes part of a mount target and a module name.
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_SKIP_DIRS = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"}


def check_path(value: object, base: Path, where: str, base_text: str) -> Path:
    """``value`` (relative to ``base``, which messages call ``base_text``) as an existing benchmark directory or
    ``.py`` file; ``where`` starts each error."""
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{where}: {value!r} is not a path; write a directory or .py file as a string, "
                        'like "benchmarks/"')
    path = (base / value).resolve()
    if not path.exists():
        raise UserError(f"{where}: {value} does not exist (looked at {path}); write paths relative to "
                        + base_text)
    if path.is_file() and path.suffix != ".py":
        raise UserError(f"{where}: {value} is not a .py file; name a directory of benchmark files or one .py file")
    if not _NAME.fullmatch(path.name):
        raise UserError(f"{where}: {value}: the name {path.name!r} has characters a mount cannot carry; "
                        "use letters, digits, '_', '-' and '.'")
    return path


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*")
                  if p.is_file() and p.suffix != ".pyc" and not _SKIP_DIRS & set(p.relative_to(path).parts))


def files_hash(paths: Sequence[Path]) -> str:
    """Hash of every file under ``paths`` (names and bytes, in order): changes when any file does."""
    if not paths:
        return ""
    h = hashlib.sha256()
    for i, root in enumerate(paths):
        for f in _files(Path(root)):
            name = f"{i}/{f.relative_to(root) if f != root else f.name}"
            data = f.read_bytes()
            h.update(f"{name}\0{len(data)}\0".encode())
            h.update(data)
    return h.hexdigest()[:16]


def container_paths(paths: Sequence[Path]) -> list[tuple[Path, str]]:
    """(host path, path inside the container) for each path: ``/opt/tfmatrix/bench/<i>[/<file>.py]``."""
    out = []
    for i, p in enumerate(paths):
        target = f"{BENCH_MOUNT}/{i}"
        out.append((Path(p), f"{target}/{Path(p).name}" if Path(p).is_file() else target))
    return out



def plugins_value(where: Sequence[str], sides: Sequence[str] = ()) -> str:
    """``$TFMATRIX_SUITE_PLUGINS`` for the paths as the cell sees them; ``sides``: each one's side (``ab``)."""
    if sides:
        return ":".join(side_entry(side, path) for side, path in zip(sides, where, strict=True))
    return ":".join(where)
