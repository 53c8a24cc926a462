"""A TF cell's base image and its Python, which constrain each other; the registry redirect.

``base = "python"`` (the slim Python image, the default CPU base), ``"tensorflow"`` and
``"nvidia-cuda"`` (the release's own images from the table) or any image reference; the
cell's Python must be one the image offers, TF has wheels for and the suite runs on.
Whether CUDA comes with the image or as the release's pip wheels is decided here too
(``BaseChoice``), for ``resolve`` to check the cell's CUDA/cuDNN against. Pure.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..versions import version_key
from .cell_table import CellTable
from .checks import Where, checked
from .records import BaseImage
from .releases import Release, Table

_DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")


def redirect(ref: str, registry: str | None) -> str:
    """Point a Docker Hub reference at ``registry`` (a mirror, or tfmatrix.local).

    ``python:3.7-slim-bookworm`` -> ``<registry>/library/python:3.7-slim-bookworm``;
    ``nvidia/cuda:11.8.0-...`` -> ``<registry>/nvidia/cuda:11.8.0-...``. A reference
    that names another registry (``nvcr.io/nvidia/...``) stays as it is: only Docker
    Hub is mirrored. Pure; ``registry`` None or "" means no redirect.
    """
    if not registry:
        return ref
    name, at, digest = ref.partition("@")
    first, slash, rest = name.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        if first not in _DOCKER_HUB:
            return ref
        name = rest
    if "/" not in name:
        name = f"library/{name}"
    return f"{registry}/{name}" + (f"@{digest}" if at else "")


def _image_kind(ref: str) -> str:
    """Kind of an explicit base reference, from its repository name."""
    name = ref.split("@")[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    parts = repo.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    repo = "/".join(parts)
    return {"python": "python", "library/python": "python", "tensorflow/tensorflow": "tensorflow",
            "nvidia/cuda": "nvidia-cuda"}.get(repo, "custom")  # fmt: skip


def _check_python(where: Where, python: str, rel: Release, table: Table) -> None:
    if version_key(python) < version_key(table.suite_min_python):
        raise where.error("python", f"the suite needs Python >= {table.suite_min_python}, not {python}",
                          f"use Python {table.suite_min_python} or newer")
    if python not in rel.python:  # no wheel: pip cannot install it, allow_untested or not
        raise where.error("python", f"TF {rel.tf} has wheels for Python {', '.join(rel.python)} only, not {python}"
                                    f"{where.cannot_install()}", "use one of those")


@dataclass(frozen=True)
class BaseChoice:
    """The base image chosen for a cell, its Python, and where its CUDA comes from."""

    base: BaseImage
    python: str
    carries_cuda: bool  # the image itself provides CUDA/cuDNN (tensorflow/nvidia-cuda from the table)
    pip_cuda: bool  # CUDA/cuDNN come from the release's nvidia-* wheels
    bootstrap: tuple[str, ...]


def resolve_base(t: CellTable, rel: Release, table: Table, registry: str | None) -> BaseChoice:
    """Base image and the cell's Python (they constrain each other)."""
    where, target, given, python_given, digest = t.where, t.target, t.base, t.python, t.base_digest
    if python_given is not None:
        checked(where, "python", python_given, "python", 'a Python version like "3.7"', 'write python = "3.X"')
    if digest is not None:
        checked(where, "base_digest", digest, "digest", "a sha256 digest",
                'write base_digest = "sha256:<64 hex digits>"')
    gpu = target == "gpu"
    keyword = given if given is not None else ("python" if not gpu else rel.gpu_base)

    if keyword == "python":
        if gpu and not rel.pip_cuda:
            raise where.error("base", f"TF {rel.tf} has no pip CUDA wheels (they start with TF 2.14), so a GPU "
                                      f"cell needs a base that carries CUDA {rel.cuda}",
                              "drop base to use the release's GPU image, or name an image that carries CUDA")
        python = python_given or rel.default_python
        _check_python(where, python, rel, table)
        upstream, kind, base_python, os_python = f"python:{python}-slim-bookworm", "python", python, False
        carries, pip_cuda = False, gpu
    elif keyword in ("tensorflow", "nvidia-cuda"):
        if keyword == "tensorflow":
            upstream = rel.tf_image.gpu if gpu else rel.tf_image.cpu
            os_name, base_python = rel.tf_image.os, rel.tf_image.python
        else:
            if rel.gpu_image is None or rel.gpu_image_os is None or not gpu:
                raise where.error("base", f"the table has no nvidia/cuda image for TF {rel.tf} {target}",
                                  'use base = "python", "tensorflow" or an image reference')
            upstream, os_name, base_python = rel.gpu_image, rel.gpu_image_os, None
        osp = table.os[os_name]
        if python_given is not None:
            if python_given not in osp.pythons:
                raise where.error("python", f"base {upstream} is {os_name}, which provides Python "
                                            f"{', '.join(osp.pythons)}, not {python_given}",
                                  "use one of those, or name a base image that has this Python")
            _check_python(where, python_given, rel, table)
            python = python_given
        else:
            floor = version_key(table.suite_min_python)
            candidates = [p for p in osp.pythons if p in rel.python and version_key(p) >= floor]
            if not candidates:
                raise where.error("python", f"base {upstream} ({os_name}) offers no Python that TF {rel.tf} "
                                            "and the suite both support", "name a base image with a suitable Python")
            python = next((p for p in (base_python, osp.default) if p in candidates), candidates[-1])
        kind, os_python = keyword, True
        carries, pip_cuda = gpu and not rel.pip_cuda, gpu and rel.pip_cuda
    else:
        checked(where, "base", keyword, "image", "an image reference",
                'use "python", "tensorflow" or a reference like "nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu22.04"')
        if "@" in keyword:
            raise where.error("base", "digests go in base_digest", 'write base_digest = "sha256:..." next to base')
        kind = _image_kind(keyword)
        if gpu and kind == "python" and not rel.pip_cuda:
            raise where.error("base", f"{keyword} carries no CUDA and TF {rel.tf} has no pip CUDA wheels (they start "
                                      "with TF 2.14)", "drop base, or name an image that carries CUDA")
        python = python_given or rel.default_python
        _check_python(where, python, rel, table)
        upstream, base_python, os_python = keyword, None, True
        # Official Python/TensorFlow images get the release's CUDA wheels; any other image
        # (nvidia/cuda, custom) is trusted to carry the CUDA the cell names.
        carries, pip_cuda = False, gpu and rel.pip_cuda and kind in ("python", "tensorflow")

    ref = redirect(upstream, registry) + (f"@{digest}" if digest else "")
    base = BaseImage(kind=kind, ref=ref, upstream=upstream, python=base_python, digest=digest)
    # Only the official Python image of exactly this Python brings a modern pip into its venvs.
    bootstrap = () if kind == "python" and base_python == python else (table.os_python_pip,)
    assert bootstrap or not os_python
    return BaseChoice(base, python, carries, pip_cuda, bootstrap)
