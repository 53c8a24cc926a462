"""Reading files someone else wrote: another machine's run archive, a container's results, a profiles file.

tfmatrix reads files it did not write: a reports folder copied from another
machine and handed to ``publish``, the results a container's code writes into
a folder the host then reads, a profiles file whose header that code chose.
Such a file may be a symbolic link to one of the host's files, a FIFO that
blocks its reader forever, a sparse file of a terabyte, or a gzip bomb; an
index may name a path outside its folder. So every reader of them goes
through here, and here alone:

* a name from a document is checked before it touches a path (``child``):
  relative, made of plain parts, never ``.``, ``..`` or empty;
* a file is opened without following a link (``O_NOFOLLOW``), every folder on
  the way too (``read_under``: walked from the folder with ``dir_fd``), and
  without blocking (``O_NONBLOCK``: a FIFO opens at once, then is refused);
* it must be a regular file no larger than a cap, and is read with that cap:
  nothing here waits on a writer or reads past what it can hold;
* gzip is inflated with a cap on what comes out (``gunzip``).

A file refused is ``Refused`` (a ``ValueError``), its message the reason in a
few words; the caller says which file and what it does instead (skips an
archive entry, fails a cell with that reason).
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

MB = 10**6
RESULTS_CAP = 256 * MB       # a suite results or profiles file (the default's largest is a few MB)
CELL_FILE_CAP = 256 * MB     # a kept cell file, inflated
INDEX_CAP = 64 * MB          # a run archive's index (ten default runs: about 100 kB)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Refused(ValueError):
    """A file tfmatrix will not read (a link, not a regular file, too large, a name that leaves its folder)."""


def child(name: str) -> tuple[str, ...]:
    """The parts of ``name``, a path relative to some folder that must stay inside it (``Refused`` otherwise)."""
    if not name or "\0" in name or "\\" in name:
        raise Refused(f"the name {name!r} is not a plain relative path")
    path = PurePosixPath(name)
    parts = name.split("/")
    if path.is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise Refused(f"the name {name!r} leaves its folder (absolute, or a '.', '..' or empty part)")
    return tuple(parts)


def read_file(path: Path, cap: int, follow: bool = False) -> bytes:
    """The bytes of ``path``: a regular file, not a link (``follow``: a link the user named is followed), at most
    ``cap`` bytes (``Refused`` otherwise; ``FileNotFoundError`` when there is none)."""
    try:
        fd = os.open(path, _FILE_FLAGS & ~os.O_NOFOLLOW if follow else _FILE_FLAGS)
    except OSError as e:
        raise _refusal(e) from None
    return _read_fd(fd, cap)


def read_under(root: Path, name: str, cap: int) -> bytes:
    """The bytes of ``root/name``, ``name`` from a document: checked (``child``), and no folder on the way (``root``
    included) nor the file itself a link; the file regular and at most ``cap`` bytes."""
    *folders, last = child(name)
    with _walk(root, folders) as where:
        try:
            fd = os.open(last, _FILE_FLAGS, dir_fd=where)
        except OSError as e:
            raise _refusal(e) from None
        return _read_fd(fd, cap)


def unlink_under(root: Path, name: str) -> None:
    """Remove ``root/name`` (``name`` checked as in ``read_under``; nothing happens where it is not there): never a
    file outside ``root``, whatever links lie in it."""
    *folders, last = child(name)
    try:
        with _walk(root, folders) as where:
            os.unlink(last, dir_fd=where)
    except FileNotFoundError:
        pass


def gunzip(data: bytes, cap: int) -> bytes:
    """``data`` inflated, at most ``cap`` bytes of it (a gzip bomb stops at the cap: ``Refused``)."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflate.decompress(data, cap + 1)
    except zlib.error as e:
        raise Refused(f"not gzip ({e})") from None
    if len(out) > cap:
        raise Refused(f"inflates past {cap // MB} MB")
    if not inflate.eof:
        raise Refused("a truncated gzip file")
    return out


@contextlib.contextmanager
def _walk(root: Path, folders: list[str]) -> Iterator[int]:
    """A descriptor of ``root/folders...``, each opened without following a link."""
    fds: list[int] = []
    try:
        try:
            fds.append(os.open(root, _DIR_FLAGS))
            for part in folders:
                fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
        except OSError as e:
            raise _refusal(e) from None
        yield fds[-1]
    finally:
        for fd in fds:
            os.close(fd)


def _read_fd(fd: int, cap: int) -> bytes:
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not a regular file")
        if info.st_size > cap:
            raise Refused(f"{info.st_size / MB:.0f} MB, over the {cap // MB} MB a file may hold")
        chunks, total = [], 0
        while total <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:
            raise Refused(f"grew past the {cap // MB} MB a file may hold while read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _refusal(e: OSError) -> OSError | Refused:
    """An ``open`` error as this module says it: a link met on the way is refused; a missing file stays
    ``FileNotFoundError`` (callers say "none written"); others say what they are."""
    if e.errno == errno.ELOOP:
        return Refused("a symbolic link (not followed)")
    if e.errno == errno.ENOTDIR:
        return Refused("a folder on its path is a symbolic link or not a folder")
    if isinstance(e, FileNotFoundError):
        return e
    return Refused(e.strerror or str(e))
