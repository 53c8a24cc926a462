"""scripts/: the measurements behind the docs' figures, run by hand, on tfmatrix's public face.

A script is not run by the tests (most take Docker, a GPU or an hour), so what it leans on is checked here: every
script with a command line answers ``--help`` (and runs nothing), and none reaches a private name of tfmatrix or
swaps a piece of it for its own (a monkeypatch), read from the source like ``test_layers``. Their 400-line cap is
``test_layers``'; the scripts' own reads are tested beside them (``test_bench_stability``, ``test_cost``).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENTRY = sorted(p.name for p in (ROOT / "scripts").glob("*.py") if '__name__ == "__main__"' in p.read_text())


@pytest.mark.parametrize("script", ENTRY)
@pytest.mark.slow
def test_every_script_answers_help_and_runs_nothing(script: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("usage: ") and not done.stderr, done.stderr[-2000:]


@pytest.mark.slow
def test_bench_verdicts_takes_every_row_by_name_and_refuses_another_in_one_line() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_verdicts.py"), "G4"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1].endswith("no row G4; choose from A1, A2, A3, P1, P2, P3, G1, G2, G3, R1, R2")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def outside_uses(source: str) -> list[str]:
    """What a script does to tfmatrix beyond its public face: a private name imported or reached (a module, a
    function or a constant whose name begins with ``_``), or something of tfmatrix assigned, deleted or set
    (a monkeypatch), with its line."""
    tree = ast.parse(source)
    bound: set[str] = set()             # the names the script's imports of tfmatrix bind (lazy imports too)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tfmatrix" and not node.level:
            for alias in node.names:
                bound.add(alias.asname or alias.name)
                if any(_private(part) for part in [*(node.module or "").split("."), alias.name]):
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "tfmatrix":
                    bound.add(alias.asname or "tfmatrix")
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(f"{node.lineno}: import {alias.name}")

    def root(expr: ast.expr) -> str:
        while isinstance(expr, ast.Attribute | ast.Subscript):
            expr = expr.value
        return expr.id if isinstance(expr, ast.Name) else ""

    for node in ast.walk(tree):
        targets = (node.targets if isinstance(node, ast.Assign | ast.Delete)
                   else [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
        for t in targets:
            if isinstance(t, ast.Attribute | ast.Subscript) and root(t) in bound:
                found.append(f"{node.lineno}: {ast.unparse(t)} {'deleted' if isinstance(node, ast.Delete) else 'set'}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr")
                and node.args and root(node.args[0]) in bound):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Attribute) and _private(node.attr) and root(node) in bound:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(set(found), key=lambda f: int(f.split(":")[0]))


def test_scripts_use_only_what_tfmatrix_offers_publicly() -> None:
    """scripts/ measure tfmatrix as it is: no private name of it (renamed freely, so a script would break
    silently), and nothing of it swapped for a script's own version (then the script measures something else).
    What a script needs to vary, the product takes as an argument (``compare_cells(..., paired=False)``)."""
    found = {}
    for path in sorted((ROOT / "scripts").glob("*.py")):
        uses = outside_uses(path.read_text(encoding="utf-8"))
        if uses:
            found[path.name] = uses
    assert found == {}


def test_the_script_check_sees_a_private_import_and_a_monkeypatch() -> None:
    source = """
from tfmatrix.analysis.claims.pairing import _sides, comparison_cis
from tfmatrix.analysis.claims import pairing
import tfmatrix.analysis.statistics.moderation as moderation
from tfmatrix.analysis._hidden import thing

def f(cells):
    from tfmatrix.analysis.compare import sets
    pairing.comparison_cis = len
    moderation.fit_prior = len
    setattr(sets, "compare_cells", len)
    pairing._window_mates(1, 2)
    for c in cells:
        c.results = None
    comparison_cis([])
"""
    assert outside_uses(source) == [
        "2: from tfmatrix.analysis.claims.pairing import _sides", "5: from tfmatrix.analysis._hidden import thing",
        "9: pairing.comparison_cis set", "10: moderation.fit_prior set",
        "11: setattr(sets, 'compare_cells', len)", "12: pairing._window_mates"]
