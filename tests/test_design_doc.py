"""docs/design.md's module table lists exactly the modules in the tree, so it cannot go stale silently."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_module_table_lists_every_module_and_nothing_else() -> None:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([^`]+\.py)`", text, re.M))
    tree = {str(p.relative_to(ROOT)) for package in ("tfmatrix", "suite") for p in (ROOT / package).rglob("*.py")
            if "__pycache__" not in p.parts} | {"noxfile.py"}
    assert sorted(tree - listed) == [], "modules missing from docs/design.md's table"
    assert sorted(listed - tree) == [], "docs/design.md's table names modules that are gone"
