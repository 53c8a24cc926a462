"""Helpers for the end-to-end tests: run the real CLI, skip (or fail in CI) when a prerequisite is missing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
MATRICES = ROOT / "tests" / "matrices"
# CI sets this: a missing Docker engine, interpreter or browser must fail, not skip,
# or a green run would hide a missing install step.
REQUIRED = os.environ.get("TFMATRIX_REQUIRE_E2E", "").strip() in ("1", "true", "yes")


def require(condition: Any, reason: str) -> None:
    if condition:
        return
    if REQUIRED:
        pytest.fail("TFMATRIX_REQUIRE_E2E is set but: " + reason)
    pytest.skip(reason)


def tfmatrix(*args: str, timeout: float = 5400) -> subprocess.CompletedProcess[str]:
    """``python -m tfmatrix ARGS`` as a user runs it; output is echoed for the test log."""
    proc = subprocess.run([sys.executable, "-m", "tfmatrix", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    sys.stderr.write(proc.stderr[-20000:])
    return proc


def cell_docs(reports: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((reports / "cells").glob("*.json"))}


def records(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (doc.get("results") or {}).get("records", [])}
