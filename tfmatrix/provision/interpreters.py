"""Find CPython interpreters on the host (PATH, pyenv, common prefixes).

Used three ways: the venv runner runs cells with them, the wheelhouse
resolves a cell's requirements with the cell's own Python (so sdist-only
dependencies such as ``gast==0.2.2`` become wheels built for it), and the
air-gapped base builder copies a self-contained one into a Debian image.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..versions import version_key

PROBE = "import sys, sysconfig; print(sys.version_info[0], sys.version_info[1], sys.version_info[2], sys.prefix, " \
        "sys.base_prefix, sysconfig.get_config_var('LDLIBRARY') or '')"


@dataclass(frozen=True)
class Interpreter:
    """A working CPython X.Y found on this host."""

    executable: Path
    version: tuple[int, int, int]
    prefix: Path            # sys.base_prefix: where its stdlib lives

    @property
    def minor(self) -> str:
        return "%d.%d" % self.version[:2]

    @property
    def self_contained(self) -> bool:
        """True when the whole interpreter lives under its prefix (pyenv, /opt, /usr/local builds).

        Only such a tree can be copied into an image; a distribution's
        /usr/bin/python3 spreads over /usr/lib and needs the distribution.
        """
        return self.prefix not in (Path("/usr"), Path("/")) and (
            self.prefix / "lib" / ("python%s" % self.minor)).is_dir()


def _pyenv_roots() -> list[Path]:
    roots = []
    if os.environ.get("PYENV_ROOT"):
        roots.append(Path(os.environ["PYENV_ROOT"]))
    roots.append(Path.home() / ".pyenv")
    return roots


def candidates(minor: str) -> list[Path]:
    """Paths that may be CPython ``minor`` ("3.7"), best first."""
    out: list[Path] = []
    for root in _pyenv_roots():
        versions = root / "versions"
        if versions.is_dir():
            found = [d for d in versions.iterdir() if re.fullmatch(re.escape(minor) + r"\.\d+", d.name)]
            for d in sorted(found, key=lambda d: version_key(d.name), reverse=True):
                out.append(d / "bin" / ("python" + minor))
    for name in ("python" + minor,):
        which = shutil.which(name)
        if which:
            out.append(Path(which))
    for prefix in ("/usr/local/bin", "/usr/bin", "/opt/python/bin"):
        out.append(Path(prefix) / ("python" + minor))
    if "%d.%d" % sys.version_info[:2] == minor:
        out.append(Path(sys.executable))
    seen: set[Path] = set()
    unique = []
    for p in out:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


def probe(path: Path) -> Interpreter | None:
    """Ask ``path`` what it is; None if it does not run (e.g. an inactive pyenv shim)."""
    if not path.exists():
        return None
    try:
        proc = subprocess.run([str(path), "-c", PROBE], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    parts = proc.stdout.split()
    if len(parts) < 5:
        return None
    major, minor, micro = (int(x) for x in parts[:3])
    return Interpreter(executable=path, version=(major, minor, micro), prefix=Path(parts[4]))


@functools.cache
def find(minor: str) -> Interpreter | None:
    """The best working CPython ``minor`` on this host, or None."""
    for path in candidates(minor):
        interp = probe(path)
        if interp is not None and interp.minor == minor:
            return interp
    return None
