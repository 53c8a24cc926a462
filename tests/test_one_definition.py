"""What is defined once stays defined once: the progress console, the run lock's file, the schedules.

Each had copies that could drift apart (a console that highlights numbers in
one command, a lock file under another name in another); these read the
source so a copy cannot come back unnoticed.
"""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _files_with(text: str) -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tfmatrix").rglob("*.py")
                  if text in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("text", "owner"), [
    ("Console(stderr=True", "tfmatrix/progress/__init__.py"),                 # progress.stderr_console
    ("sys.stdout.isatty()", "tfmatrix/progress/__init__.py"),                 # progress.table_console
    ('"run.lock"', "tfmatrix/execution/lock.py"),                       # execution.lock.checkout_lock
    ("SCHEDULES = ", "tfmatrix/matrix/records.py"),
    ('("interleaved", "sequential")', "tfmatrix/matrix/records.py"),
])
def test_defined_in_one_place(text: str, owner: str) -> None:
    assert _files_with(text) == [owner]
