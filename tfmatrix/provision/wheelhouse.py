"""The shared wheel cache: every wheel a cell needs, downloaded once per machine.

Builds install only from here (``pip install --no-index``), which makes them
repeatable, fast on re-runs, and possible where the build host or the
containers reach no package index. For an air-gapped cluster, fill the cache
on a connected machine (``python -m tfmatrix wheels``), copy the directory,
and set ``TFMATRIX_WHEELHOUSE`` / ``TFMATRIX_OFFLINE=1`` there.

Resolution uses the cell's own Python when the host has it (so sdist-only
pins such as ``gast==0.2.2`` for TF 1.14/1.15 are built into wheels for that
Python); otherwise pip's cross-platform download (``--python-version``,
``--platform``, wheels only). The result of each resolution is kept as a
manifest keyed by the requirements, so a warm run asks no index at all.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..paths import cache_dir
from . import interpreters

WHEELHOUSE_ENV = "TFMATRIX_WHEELHOUSE"
OFFLINE_ENV = "TFMATRIX_OFFLINE"
PLATFORM_TAGS = ("manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64") + tuple(
    "manylinux_2_%d_x86_64" % n for n in range(17, 28))
SAVED = re.compile(r"^\s*(?:Saved|File was already downloaded)\s+(\S.*?)\s*$")
Log = Callable[[str], None]


class WheelhouseError(Exception):
    """Resolution or download failed; the message says what to do."""


@dataclass(frozen=True)
class WheelSet:
    """The exact wheel files one requirements set resolved to."""

    key: str
    python: str
    files: tuple[Path, ...]
    downloaded: int        # files fetched from an index by this call (0 when warm)
    how: str               # "manifest" | "interpreter <path>" | "platform tags"
    seconds: float
    refetched: tuple[str, ...] = ()     # cached files found damaged and fetched again by this call


def wheelhouse_dir() -> Path:
    env = os.environ.get(WHEELHOUSE_ENV)
    return Path(env) if env else cache_dir() / "wheels"


def offline_default() -> bool:
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in ("1", "true", "yes")


def requirements_key(requirements: Sequence[str], python: str) -> str:
    text = "python=%s\nplatform=linux_x86_64\n%s\n" % (python, "\n".join(requirements))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _manifest_path(root: Path, key: str) -> Path:
    return root / "manifests" / ("%s.json" % key)


def _read_manifest(root: Path, key: str, verify: bool = False) -> tuple[list[Path] | None, list[str]]:
    """(the manifest's files, or None when it is missing or a file is; the files found damaged).

    A file whose size differs from the manifest's is damaged (a copy cut short);
    with ``verify``, so is one whose SHA-256 differs (read whole: only before a
    build). Manifests written before sizes and hashes were kept are trusted.
    """
    path = _manifest_path(root, key)
    try:
        doc = json.loads(path.read_text())
        names = doc["files"]
    except (OSError, ValueError, KeyError):
        return None, []
    files = [root / n for n in names]
    if not all(f.is_file() for f in files):
        return None, []
    sizes, hashes = doc.get("sizes") or {}, doc.get("sha256") or {}
    bad = [f.name for f in files if f.name in sizes and f.stat().st_size != sizes[f.name]]
    if verify:
        bad += [f.name for f in files if f.name in hashes and f.name not in bad and _sha256(f) != hashes[f.name]]
    return (None, bad) if bad else (files, [])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_manifest(root: Path, key: str, python: str, requirements: Sequence[str], files: Sequence[Path]) -> None:
    path = _manifest_path(root, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"python": python, "requirements": list(requirements), "files": sorted(f.name for f in files),
           "sizes": {f.name: f.stat().st_size for f in files}, "sha256": {f.name: _sha256(f) for f in files}}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)


def _pip(cmd: list[str], log: Log) -> tuple[int, list[Path], str]:
    """Run a pip download; return (rc, the files it reported, its output)."""
    log("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    out = proc.stdout + proc.stderr
    for line in out.splitlines():
        log("  " + line)
    files = []
    for line in out.splitlines():
        m = SAVED.match(line)
        if m:
            files.append(Path(m.group(1)).resolve())
    return proc.returncode, files, out


def _build_sdists(python: Path, files: list[Path], root: Path, offline: bool, log: Log) -> list[Path]:
    """Replace each sdist among ``files`` by a wheel built with the cell's Python.

    PEP 517 isolation takes setuptools/wheel from the wheelhouse first, so an
    offline host can rebuild too.
    """
    out = []
    for f in files:
        if f.name.endswith(".whl"):
            out.append(f)
            continue
        with tempfile.TemporaryDirectory(prefix="tfmatrix-wheel-") as tmp:
            cmd = [str(python), "-m", "pip", "wheel", "--no-deps", "--use-pep517", "--wheel-dir", tmp,
                   "--find-links", str(root), str(f)] + (["--no-index"] if offline else [])
            log("$ " + " ".join(cmd))
            proc = subprocess.run(cmd, capture_output=True, text=True)
            for line in (proc.stdout + proc.stderr).splitlines():
                log("  " + line)
            built = list(Path(tmp).glob("*.whl"))
            if proc.returncode != 0 or len(built) != 1:
                raise WheelhouseError("could not build a wheel from %s with %s" % (f.name, python))
            target = root / built[0].name
            shutil.move(str(built[0]), target)
            out.append(target)
    return out


def _abi(python: str) -> str:
    major, minor = python.split(".")
    return "cp%s%s%s" % (major, minor, "m" if (int(major), int(minor)) < (3, 8) else "")


def ensure(requirements: Sequence[str], python: str, *, offline: bool | None = None, log: Log = print,
           root: Path | None = None, verify: bool = False) -> WheelSet:
    """Make sure the wheels for ``requirements`` on CPython ``python`` are in the cache.

    A cached file that is damaged (its size, or with ``verify`` its SHA-256,
    differs from when it was fetched) is removed and fetched again; offline,
    that is one line naming it.
    """
    t0 = time.monotonic()
    root = (root or wheelhouse_dir()).resolve()
    offline = offline_default() if offline is None else offline
    key = requirements_key(requirements, python)
    with _locked(root):
        files_now, damaged = _read_manifest(root, key, verify)
        if files_now is not None:
            return WheelSet(key, python, tuple(files_now), 0, "manifest", time.monotonic() - t0)
        for name in damaged:
            log("wheel %s in the wheelhouse is damaged (not the file that was fetched): fetching it again" % name)
            (root / name).unlink(missing_ok=True)
        if damaged and offline:
            raise WheelhouseError("wheel %s in the offline wheelhouse %s is damaged (not the file that was fetched): "
                                  "copy it again from a connected machine's wheelhouse (`python -m tfmatrix wheels` "
                                  "there)" % (", ".join(damaged), root))
        before = {p.name for p in root.iterdir()}
        with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="tfmatrix-req-", delete=False) as req:
            req.write("\n".join(requirements) + "\n")
        try:
            files, how = _resolve(Path(req.name), python, root, offline, log)
        finally:
            os.unlink(req.name)
        downloaded = len({f.name for f in files} - before)
        _write_manifest(root, key, python, requirements, files)
        return WheelSet(key, python, tuple(files), downloaded, how, time.monotonic() - t0, tuple(damaged))


def _manifest_set(root: Path, key: str, python: str, t0: float) -> WheelSet | None:
    """The set an earlier resolution stored under ``key`` (manifest and every file present and whole), or None."""
    files, _ = _read_manifest(root, key)
    return None if files is None else WheelSet(key, python, tuple(files), 0, "manifest", time.monotonic() - t0)


def cached(requirements: Sequence[str], python: str, root: Path | None = None) -> WheelSet | None:
    """The wheel set a resolution already stored here (its manifest and every file), or None; asks no index."""
    t0 = time.monotonic()
    root = (root or wheelhouse_dir()).resolve()
    with _locked(root):
        return _manifest_set(root, requirements_key(requirements, python), python, t0)


def store(requirements: Sequence[str], python: str, files: Iterable[tuple[str, bytes]],
          root: Path | None = None) -> WheelSet:
    """Put a set resolved elsewhere (a cluster's head) into this wheelhouse, files first, then its manifest.

    ``files`` may be a generator: each file is written as it comes, so a large
    set (PyTorch's CUDA wheels) is never all in memory; if it raises, no
    manifest is written and the set stays missing.
    """
    t0 = time.monotonic()
    root = (root or wheelhouse_dir()).resolve()
    key = requirements_key(requirements, python)
    paths = []
    with _locked(root):
        for name, data in files:
            if "/" in name or name.startswith("."):
                raise WheelhouseError("refusing a wheel named %r" % name)
            path = root / name
            if not (path.is_file() and path.stat().st_size == len(data)):
                tmp = root / (".incoming-%d-%s" % (os.getpid(), name))
                tmp.write_bytes(data)
                os.replace(tmp, path)
            paths.append(path)
        _write_manifest(root, key, python, requirements, paths)
    return WheelSet(key, python, tuple(paths), len(paths), "from the head", time.monotonic() - t0)


def _download(cmd: list[str], python: str, offline: bool, log: Log, failure: str) -> list[Path]:
    """Run ``pip download`` offline first (whatever is cached is never fetched again), then online."""
    rc, files, out = _pip(cmd + ["--no-index"], log)
    if rc == 0:
        return files
    if offline:
        raise WheelhouseError(_offline_hint(python, out))
    rc, files, out = _pip(cmd, log)
    if rc != 0:
        raise WheelhouseError(failure % _last_error(out))
    return files


def _resolve(req: Path, python: str, root: Path, offline: bool, log: Log) -> tuple[list[Path], str]:
    common = ["-m", "pip", "download", "--dest", str(root), "--find-links", str(root), "-r", str(req)]
    interp = interpreters.find(python)
    if interp is not None:
        files = _download([str(interp.executable), *common], python, offline, log,
                          "pip could not resolve the requirements for Python %s: %%s" % python)
        return _build_sdists(interp.executable, files, root, offline, log), "interpreter %s" % interp.executable
    cross = ["--only-binary=:all:", "--python-version", python, "--implementation", "cp", "--abi", _abi(python),
             "--abi", "abi3", "--abi", "none"]
    for tag in PLATFORM_TAGS:
        cross += ["--platform", tag]
    files = _download([sys.executable, *common, *cross], python, offline, log,
                      "no Python %s on this host and pip found no wheels-only resolution (%%s); install CPython %s "
                      "(e.g. pyenv install %s) so sdists can be built" % (python, python, python))
    bad = [f.name for f in files if not f.name.endswith(".whl")]
    if bad:
        raise WheelhouseError("sdists need CPython %s on the host to build: %s" % (python, ", ".join(bad)))
    return files, "platform tags"


def _last_error(out: str) -> str:
    errors = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("ERROR")]
    return errors[-1] if errors else (out.strip().splitlines() or ["no output"])[-1]


def _offline_hint(python: str, out: str) -> str:
    return ("wheels missing from the offline wheelhouse %s for Python %s (%s); on a connected machine run "
            "`python -m tfmatrix wheels` and copy its wheelhouse here" % (wheelhouse_dir(), python, _last_error(out)))
