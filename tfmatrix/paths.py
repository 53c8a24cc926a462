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


def cache_dir() -> Path:
    """tfmatrix's machine-wide cache ($TFMATRIX_CACHE, else $XDG_CACHE_HOME/tfmatrix)."""
    env = os.environ.get("TFMATRIX_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tfmatrix"
