"""Imports run one way: no module of tfmatrix/ or suite/ reaches itself again through its imports.

Read from the source (every ``import``, at the top or inside a function), so a
circle hidden behind a lazy import counts too.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imports(package: str) -> dict[str, set[str]]:
    """module -> the modules of ``package`` it imports."""
    def module_of(path: Path) -> str:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    files = {module_of(p): p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in files}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:      # `from . import schema`: a submodule; else the module itself
                    sub = f"{base}.{alias.name}"
                    edges.add(sub if sub in files else base)
        # Importing ``a.b.c`` runs ``a/b/__init__`` first: an edge to every package above the target that is
        # not already above this module (those are initialised before it).
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        for e in list(edges):
            parts = e.split(".")
            edges |= {p for p in (".".join(parts[:i]) for i in range(2, len(parts))) if p not in own}
        graph[name] = {e for e in edges if e in files and e not in (package, name)}
    if package == "suite":      # registry imports every suite.benchmarks.* module by name (importlib)
        graph["suite.registry"] |= {n for n in files if n.startswith("suite.benchmarks.")}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return []


def test_the_check_sees_a_circle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", ["tfmatrix", "suite"])
def test_no_import_circles(package: str) -> None:
    graph = imports(package)
    assert len(graph) > 10
    found = cycle(graph)
    assert found == [], f"import circle in {package}/: " + " -> ".join(found)


@pytest.mark.parametrize(("layer", "above"), [
    ("tfmatrix.analysis", ("tfmatrix.report", "tfmatrix.history", "tfmatrix.commands", "tfmatrix.cli")),
    ("tfmatrix.history", ("tfmatrix.report",)),
])
def test_a_layer_never_imports_the_layers_that_present_it(layer: str, above: tuple[str, ...]) -> None:
    """analysis/ computes and report/ shows: the pure functions reach no view, not even lazily."""
    def within(module: str, package: str) -> bool:
        return module == package or module.startswith(package + ".")

    found = sorted(f"{name} -> {target}" for name, targets in imports("tfmatrix").items() if within(name, layer)
                   for target in targets if any(within(target, a) for a in above))
    assert found == [], f"{layer} imports what presents it: " + ", ".join(found)
