"""What tfmatrix keeps on this disk, who uses it, and what nothing uses: the ``disk`` command's knowledge.

A default run keeps a dozen images, a timeline ~36 GB of them, and nothing
removed them: ``docker system prune`` would, with every other program's
images. Here only what tfmatrix made is listed and pruned, found by its own
marks: images by their labels (``org.tfmatrix.cell``, base images
``org.tfmatrix.base``; ``provision.render``, ``provision.base_images``),
virtualenvs by their place (``<venv root>/cell-<name>``), wheels by the
wheelhouse's manifests.

Who uses what: the matrix's cells (``matrix.toml``, or ``--matrix``), and
every cell file kept under the reports directories (the last run's
``cells/``, bisect and timeline probes in ``releases/cells/``):
the image each file names, its cell's virtualenv and its requirements'
wheels. What no user names is prunable; an image a container still uses is
kept (Docker refuses, and the line says so).

``plan`` is pure (what is stored, what is used -> entries); the edges read
Docker, the virtualenv root and the wheelhouse, and remove.
"""
from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..matrix.releases import load_table
from .wheelhouse import cached, requirements_key

CELL_LABEL = "org.tfmatrix.cell"
BASE_LABEL = "org.tfmatrix.base"
IMAGE, BASE, VENV, WHEEL = "image", "base image", "virtualenv", "wheels"


@dataclass(frozen=True)
class Stored:
    """One thing tfmatrix keeps: an image, a base image, a virtualenv, or a wheel set's file."""

    kind: str
    name: str                       # what a person reads: the image's tag, the directory, the file name
    ref: str                        # what removal takes: the image id, the path
    size: int                       # bytes only it holds (an image: its layers no other image shares)
    keys: tuple[str, ...] = ()      # the names a user may give it: tags; the directory's name; the file's name


@dataclass
class Uses:
    """Everything a user needs, by key, with who needs it ("matrix.toml: tf2.15-cpu")."""

    by_key: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, key: str, who: str) -> None:
        if key and who not in self.by_key[key]:
            self.by_key[key].append(who)

    def of(self, item: Stored) -> list[str]:
        out: list[str] = []
        for key in item.keys:
            out += [w for w in self.by_key.get(key, []) if w not in out]
        return out


@dataclass(frozen=True)
class Entry:
    item: Stored
    users: tuple[str, ...]

    @property
    def prunable(self) -> bool:
        return not self.users


def plan(stored: Iterable[Stored], uses: Uses) -> list[Entry]:
    """Each stored thing with its users, by kind then name (the unused ones are what ``prune`` removes)."""
    order = {IMAGE: 0, BASE: 1, VENV: 2, WHEEL: 3}
    return sorted((Entry(s, tuple(uses.of(s))) for s in stored), key=lambda e: (order.get(e.item.kind, 9),
                                                                                 e.item.name))


def gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.0f} MB"


def table(entries: Sequence[Entry]) -> list[str]:
    """One line per image, base image and virtualenv; the wheels summed (used and unused)."""
    lines = []
    for e in entries:
        if e.item.kind == WHEEL:
            continue
        who = ", ".join(e.users[:3]) + (f" and {len(e.users) - 3} more" if len(e.users) > 3 else "")
        size = gb(e.item.size) if e.item.size or e.item.kind == VENV else "shared"    # every layer is another's too
        lines.append(f"{e.item.kind:<11} {e.item.name:<58} {size:>8}  {who or 'unused'}")
    wheels = [e for e in entries if e.item.kind == WHEEL]
    if wheels:
        used = [e for e in wheels if not e.prunable]
        held, free = sum(e.item.size for e in wheels), sum(e.item.size for e in wheels if e.prunable)
        what = f"{len(used)} used, {len(wheels) - len(used)} unused"
        lines.append(f"{WHEEL:<11} {what:<58} {gb(held):>8}  {gb(free)} of it unused")
    return lines


def totals(entries: Sequence[Entry]) -> tuple[int, int]:
    """(bytes held, bytes that nothing uses)."""
    return sum(e.item.size for e in entries), sum(e.item.size for e in entries if e.prunable)


# -- what a build will take -------------------------------------------------------------------

# an image's size from its wheels' (compressed) size, fitted to the default matrix's images here (2026-11-29, the
# wheels no longer a layer of the image: TF 1.x-2.21 images, less the base, 2.9-4.3x their wheels, Keras 3 on JAX
# 4.0x, PyTorch's CUDA build 2.0x): the smaller of 4x and 2x + 0.6 GB, plus the base's layers: within 17% of each
INSTALLED_PER_WHEEL_BYTE, LARGE_PER_WHEEL_BYTE, LARGE_EXTRA = 4.0, 2.0, 600 * 10**6
BASE_BYTES = 250 * 10**6            # a python base image's layers, or a virtualenv's own files
UNKNOWN_BYTES = 2_100 * 10**6       # wheels not downloaded yet: a TF 2 cell's download and image (0.35 + 1.77 GB)
TORCH_BYTES = 9_500 * 10**6         # the same for PyTorch's CUDA wheels (the only torch PyPI has): 3.06 + 6.43 GB


def build_estimate(requirements: Sequence[str], wheel_bytes: int | None) -> int:
    """Bytes an environment of these requirements will take: from its wheels' size when they are downloaded, else
    a default (with the download) that knows PyTorch's size."""
    if wheel_bytes is not None:
        return int(min(INSTALLED_PER_WHEEL_BYTE * wheel_bytes, LARGE_PER_WHEEL_BYTE * wheel_bytes + LARGE_EXTRA)) \
            + BASE_BYTES
    torch = any(re.split(r"[=<>!~\[ ]", r, maxsplit=1)[0].strip().lower() == "torch" for r in requirements)
    return TORCH_BYTES if torch else UNKNOWN_BYTES


def environment_estimate(requirements: Sequence[str], python: str) -> int:
    """``build_estimate`` of an environment of ``requirements``, from its wheel set's size when the wheelhouse has
    it (what a Docker image and a virtualenv are both estimated from)."""
    have = cached(requirements, python)
    return build_estimate(requirements, sum(f.stat().st_size for f in have.files) if have is not None else None)


def room_line(need: int, free: int, where: str, what: str) -> str:
    """The one line a run stops with when the disk cannot hold what it must build."""
    return (f"{what} need ~{gb(need)}, {gb(free)} free in {where}: remove what nothing uses with "
            "`python -m tfmatrix disk --prune` (nox -s prune), or select fewer cells (--only)")


# -- users ------------------------------------------------------------------------------------

def add_cell_doc(uses: Uses, doc: dict[str, Any], who: str, wheel_files: dict[str, list[str]]) -> None:
    """A kept cell file's image, virtualenv and wheels, each used by ``who``."""
    runner = doc.get("runner") or {}
    cell = doc.get("cell") or {}
    for key in (runner.get("image"), runner.get("inputs"), runner.get("base")):
        if isinstance(key, str):
            uses.add(key, who)
    if cell.get("name"):
        uses.add("cell-" + str(cell["name"]), who)
    for key in _wheel_keys(cell):
        for name in wheel_files.get(key, []):
            uses.add(name, who)


def _wheel_keys(cell: dict[str, Any]) -> list[str]:
    """The wheel sets a kept cell's environment may have been made from: its requirements alone (a virtualenv), and
    its image build's (``render.build_requirements``: uv's wheel or the pip bootstrap first). The cell file does not
    say which installer built it, so each candidate counts; a key the wheelhouse lacks finds nothing."""
    reqs, python = cell.get("requirements"), cell.get("python")
    if not isinstance(reqs, list) or not python:
        return []
    boot = [str(b) for b in cell.get("bootstrap") or []]
    sets = [list(reqs), [*boot, *reqs], [load_table().uv, *boot, *reqs]]
    return list(dict.fromkeys(requirements_key(s, str(python)) for s in sets))


def kept_cell_files(reports: Path) -> list[tuple[Path, str]]:
    """Every cell file under a reports directory, with who it is ("reports/cells", a bisect or timeline probe)."""
    out = []
    for sub, who in (("cells", "last run"), ("releases/cells", "bisect/timeline probe")):
        for path in sorted((reports / sub).glob("*.json")):
            out.append((path, f"{reports.name}/{sub} ({who})"))
    return out


def read_doc(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


# -- what is stored ---------------------------------------------------------------------------

def docker_stored(client: Any) -> list[Stored]:
    """tfmatrix's images in this engine (by label), each with the bytes only it holds."""
    out = []
    for img in (client.df() or {}).get("Images") or []:
        labels = img.get("Labels") or {}
        kind = IMAGE if CELL_LABEL in labels else BASE if BASE_LABEL in labels else None
        if kind is None:
            continue
        tags = tuple(t for t in img.get("RepoTags") or () if t and t != "<none>:<none>")
        size, shared = int(img.get("Size") or 0), int(img.get("SharedSize") or 0)
        own = size - shared if shared >= 0 else size
        out.append(Stored(kind, tags[0] if tags else str(img.get("Id", ""))[:19], str(img.get("Id")), own,
                          tags + (str(img.get("Id")),)))
    return out


def disk_usage(path: Path) -> int:
    """Bytes on disk under ``path`` (blocks, links not followed)."""
    total = 0
    for root, dirs, files in os.walk(path):
        for name in files + dirs:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


def venv_stored(root: Path) -> list[Stored]:
    return [Stored(VENV, str(d), str(d), disk_usage(d), (d.name,)) for d in sorted(root.glob("cell-*")) if d.is_dir()]


def wheel_manifests(root: Path) -> dict[str, list[str]]:
    """Each manifest's key and the files it lists."""
    out = {}
    for path in sorted((root / "manifests").glob("*.json")):
        doc = read_doc(path)
        if doc and isinstance(doc.get("files"), list):
            out[path.stem] = [str(f) for f in doc["files"]]
    return out


def wheel_stored(root: Path) -> list[Stored]:
    return [Stored(WHEEL, f.name, str(f), f.stat().st_blocks * 512, (f.name,))
            for f in sorted(root.iterdir()) if f.is_file() and f.suffix in (".whl", ".gz", ".zip")] \
        if root.is_dir() else []


# -- removal ----------------------------------------------------------------------------------

def remove(entries: Sequence[Entry], remove_kept: Callable[[Stored], None],
           wheel_root: Path) -> tuple[list[Entry], list[str]]:
    """Remove every prunable entry (a wheel here, anything else by ``remove_kept``: the runner that keeps it):
    (what went, a line for each that could not go)."""
    gone, kept = [], []
    for e in entries:
        if not e.prunable:
            continue
        try:
            if e.item.kind == WHEEL:
                Path(e.item.ref).unlink()
            else:
                remove_kept(e.item)
            gone.append(e)
        except Exception as exc:       # a container still uses it, a permission: kept, and said
            kept.append(f"{e.item.kind} {e.item.name}: kept ({type(exc).__name__}: {str(exc).splitlines()[0][:160]})")
    names = {Path(e.item.ref).name for e in gone if e.item.kind == WHEEL}
    for key, files in wheel_manifests(wheel_root).items():     # a manifest whose files went is stale: remove it
        if names & set(files):
            (wheel_root / "manifests" / f"{key}.json").unlink(missing_ok=True)
    return gone, kept
