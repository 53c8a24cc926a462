"""Where things live: the repository root, templates, suite, outputs, caches."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
IMAGES_DIR = REPO_ROOT / "images"
SUITE_DIR = REPO_ROOT / "suite"
DEFAULT_MATRIX = REPO_ROOT / "matrix.toml"
BUILD_DIR = REPO_ROOT / "build"
RENDER_DIR = BUILD_DIR / "images"        # build/images/<cell>/: written by tfmatrix.provision.render only
REPORTS_DIR = REPO_ROOT / "reports"
CLAIMS_DIR = Path(__file__).resolve().parent / "data" / "claims"     # the built-in claim families: package data
QUESTIONS_FILE = CLAIMS_DIR.parent / "questions.toml"                 # the seeds' questions (not a family a run asks)
DEFAULT_FAMILY = "seeds"


def claim_families() -> tuple[str, ...]:
    """The built-in claim families, found rather than listed: one ``<name>.toml`` each in ``CLAIMS_DIR``, the seeds'
    first (the default), then the others by name: the order the report shows them in. A new family is a new file."""
    names = sorted(p.stem for p in CLAIMS_DIR.glob("*.toml"))
    return tuple(sorted(names, key=lambda n: n != DEFAULT_FAMILY))


def cache_dir() -> Path:
    """tfmatrix's machine-wide cache ($TFMATRIX_CACHE, else $XDG_CACHE_HOME/tfmatrix)."""
    env = os.environ.get("TFMATRIX_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tfmatrix"
