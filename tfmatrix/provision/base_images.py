"""Base images for hosts that reach no container registry (air-gapped clusters).

The templates expect official bases (``python:3.7-slim-bookworm``). Where none
can be pulled, this module builds stand-ins from what the host has:

1. a Debian rootfs made with ``debootstrap`` (from a Debian mirror, which can
   be a local one: ``TFMATRIX_DEBIAN_MIRROR``), cached as a tarball, imported as
   ``tfmatrix.local/library/debian:bookworm-slim``;
2. for each Python a cell needs, a self-contained CPython found on the host
   (pyenv, /usr/local or /opt builds) copied on top of it, tagged
   ``tfmatrix.local/library/python:X.Y-slim-bookworm``.

Cells then render with ``base_registry = "tfmatrix.local"`` (or
``TFMATRIX_BASE_REGISTRY=tfmatrix.local``), which the docker runner also picks
by itself when a pull fails. All Python bases share the Debian layer.
GPU bases (CUDA) cannot be made this way: mirror them.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import jinja2

from ..paths import IMAGES_DIR, cache_dir
from . import interpreters

LOCAL_REGISTRY = "tfmatrix.local"
SUITE = "bookworm"
DEBIAN_REF = "%s/library/debian:%s-slim" % (LOCAL_REGISTRY, SUITE)
MIRROR_ENV = "TFMATRIX_DEBIAN_MIRROR"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
# What a CPython built on Debian links at run time (ssl, sqlite3, ctypes, bz2,
# lzma, readline, curses, nis, uuid, expat); minbase lacks most of them.
RUNTIME_PACKAGES = ("libssl3", "libsqlite3-0", "libffi8", "libbz2-1.0", "liblzma5", "zlib1g", "libreadline8",
                    "libncursesw6", "libtinfo6", "libnsl2", "libtirpc3", "libuuid1", "libexpat1", "ca-certificates")
PYTHON_BASE = re.compile(r"^(?:docker\.io/)?(?:library/)?python:(?P<minor>3\.\d+)-slim-" + SUITE + "$")
Log = Callable[[str], None]


class BaseImageError(Exception):
    """A base image could not be built; the message says why and what to do."""


def python_ref(minor: str) -> str:
    return "%s/library/python:%s-slim-%s" % (LOCAL_REGISTRY, minor, SUITE)


def buildable_python(upstream: str) -> str | None:
    """The Python version when ``upstream`` is an official slim image this module can stand in for."""
    m = PYTHON_BASE.match(upstream)
    return m.group("minor") if m else None


def image_exists(client: Any, ref: str) -> bool:
    import docker.errors

    try:
        client.images.get(ref)
        return True
    except docker.errors.ImageNotFound:
        return False


def rootfs_tarball(log: Log) -> Path:
    """A cached minbase Debian rootfs tarball (made once per machine)."""
    target = cache_dir() / "bases" / ("debian-%s-rootfs.tar" % SUITE)
    if target.is_file():
        return target
    if os.geteuid() != 0:
        raise BaseImageError("debootstrap needs root to build %s; run `sudo nox -s base-images`" % DEBIAN_REF)
    exe = shutil.which("debootstrap")
    if exe is None:
        raise BaseImageError("debootstrap is not installed; `apt-get install debootstrap` (Debian/Ubuntu)")
    mirror = os.environ.get(MIRROR_ENV, DEFAULT_MIRROR)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tfmatrix-rootfs-", dir=target.parent) as tmp:
        root = Path(tmp) / "rootfs"
        cmd = [exe, "--variant=minbase", "--include=" + ",".join(RUNTIME_PACKAGES), SUITE, str(root), mirror]
        log("$ " + " ".join(cmd))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
            raise BaseImageError("debootstrap failed (mirror %s; set %s for a local one): %s" % (mirror, MIRROR_ENV,
                                                                                                  tail))
        # Trim what an image never needs: apt lists and caches, docs.
        for sub in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man"):
            shutil.rmtree(root / sub, ignore_errors=True)
        partial = target.with_suffix(".partial")
        with tarfile.open(partial, "w") as tar:
            tar.add(str(root), arcname=".")
        os.replace(partial, target)
    return target


def _build(client: Any, context: Path, tag: str, log: Log) -> None:
    import docker.errors

    log("building %s" % tag)
    try:
        for chunk in client.api.build(path=str(context), tag=tag, rm=True, forcerm=True, pull=False, decode=True,
                                      labels={"org.tfmatrix.base": "local"}):
            if "stream" in chunk:
                text = chunk["stream"].rstrip()
                if text:
                    log(text)
            if "error" in chunk:
                raise BaseImageError("building %s failed: %s" % (tag, chunk["error"].strip()))
    except docker.errors.APIError as e:
        raise BaseImageError("building %s failed: %s" % (tag, e))


def ensure_debian(client: Any, log: Log) -> str:
    if image_exists(client, DEBIAN_REF):
        return DEBIAN_REF
    tarball = rootfs_tarball(log)
    with tempfile.TemporaryDirectory(prefix="tfmatrix-base-") as tmp:
        ctx = Path(tmp)
        shutil.copy(IMAGES_DIR / "bases" / "debian.Dockerfile", ctx / "Dockerfile")
        os.link(tarball, ctx / "rootfs.tar") if _same_fs(tarball, ctx) else shutil.copy(tarball, ctx / "rootfs.tar")
        _build(client, ctx, DEBIAN_REF, log)
    return DEBIAN_REF


def _same_fs(a: Path, b: Path) -> bool:
    return os.stat(a).st_dev == os.stat(b).st_dev


def _copy_interpreter(interp: interpreters.Interpreter, dest: Path) -> None:
    """Copy a self-contained CPython without its site-packages, tests or console scripts."""
    minor = interp.minor
    skip_dirs = {interp.prefix / "lib" / ("python" + minor) / d for d in ("site-packages", "test", "idlelib")}

    def ignore(directory: str, names: list[str]) -> Iterable[str]:
        here = Path(directory)
        out = [n for n in names if here / n in skip_dirs or n == "__pycache__"]
        if here == interp.prefix / "bin":
            out += [n for n in names if not n.startswith("python")]
        return out

    shutil.copytree(interp.prefix, dest, symlinks=True, ignore=ignore)
    (dest / "lib" / ("python" + minor) / "site-packages").mkdir(exist_ok=True)


def ensure_python(client: Any, minor: str, log: Log) -> str:
    """``tfmatrix.local/library/python:<minor>-slim-bookworm``, built if missing."""
    ref = python_ref(minor)
    if image_exists(client, ref):
        return ref
    interp = interpreters.find(minor)
    if interp is None:
        raise BaseImageError("no CPython %s on this host to build %s from; install one (e.g. `pyenv install %s`)"
                             % (minor, ref, minor))
    if not interp.self_contained:
        raise BaseImageError("CPython %s at %s is not self-contained (it lives in %s); build one with pyenv or into "
                             "/opt so it can be copied into an image" % (minor, interp.executable, interp.prefix))
    debian = ensure_debian(client, log)
    template = jinja2.Environment(loader=jinja2.FileSystemLoader(str(IMAGES_DIR / "bases")),
                                  undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    dockerfile = template.get_template("python.Dockerfile.j2").render(
        version="%d.%d.%d" % interp.version, minor=minor, suite=SUITE, debian=debian, source=str(interp.prefix))
    with tempfile.TemporaryDirectory(prefix="tfmatrix-base-") as tmp:
        ctx = Path(tmp)
        (ctx / "Dockerfile").write_text(dockerfile)
        _copy_interpreter(interp, ctx / "python")
        _build(client, ctx, ref, log)
    return ref


def ensure_for(client: Any, upstream_refs: Iterable[str], log: Log) -> dict[str, str]:
    """Local stand-ins for every buildable upstream base; {upstream: local ref}."""
    out: dict[str, str] = {}
    for upstream in sorted(set(upstream_refs)):
        minor = buildable_python(upstream)
        if minor is None:
            raise BaseImageError("%s cannot be built locally (only python:3.X-slim-%s can); mirror it and set "
                                 "TFMATRIX_BASE_REGISTRY" % (upstream, SUITE))
        out[upstream] = ensure_python(client, minor, log)
    return out


def describe(client: Any) -> list[tuple[str, str]]:
    """(ref, short id) of every locally built base, for listings."""
    rows = []
    for image in client.images.list(filters={"label": "org.tfmatrix.base=local"}):
        for tag in image.tags:
            rows.append((tag, image.short_id))
    return sorted(rows)


