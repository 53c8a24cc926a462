"""A module of ``scripts/`` loaded as the script itself loads it (``scripts/`` on the path while it imports), for
the tests of scripts: they are not a package, and each test file used to carry its own copy of this."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as the module ``name`` (registered in ``sys.modules``, as its own imports expect)."""
    saved = list(sys.path)
    try:
        sys.path.insert(0, str(ROOT / "scripts"))
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path[:] = saved
