"""The folders of tfmatrix/ are the stages of the data flow, and imports only run down it.

matrix -> provision -> runners -> execution -> results -> analysis -> report,
with history/ (bisect, timeline) above execution and analysis, and commands/
(one module per verb) above everything but ``cli.py``. ``LAYERS`` says which
folders each folder may import; a new import up the flow (analysis reaching
for a view, execution for a command) fails here with the module that made it.
Read from the source like ``test_imports`` (every import, lazy ones too).
"""
from __future__ import annotations

import ast

from test_imports import ROOT, imports

BASE = {"errors", "paths", "versions", "progress", "__init__"}      # the top-level modules every stage may use
LAYERS: dict[str, set[str]] = {
    "progress": set(),      # what a run says as it goes: the console, a cluster's board (a BASE module too)
    "matrix": set(),
    "results": set(),
    "provision": {"matrix"},
    "runners": {"matrix", "provision", "results"},
    "execution": {"matrix", "provision", "runners", "results", "analysis"},   # a sequential run's looks
    "analysis": {"matrix", "results"},         # matrix.records: the claim families' names, the rounds' cap
    "report": {"results", "analysis"},
    "history": {"matrix", "runners", "execution", "results", "analysis"},
    "commands": {"matrix", "provision", "runners", "execution", "results", "analysis", "report", "history"},
}


def stage(module: str) -> str:
    """``tfmatrix.analysis.statistics.stats`` -> ``analysis``; a top-level module -> its own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_folder_has_a_layer() -> None:
    folders = {p.name for p in (ROOT / "tfmatrix").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS)


def test_imports_run_down_the_flow() -> None:
    wrong = []
    for module, targets in sorted(imports("tfmatrix").items()):
        here = stage(module)
        if here not in LAYERS:            # cli.py, __main__ and the base modules
            if here in BASE:
                wrong += [f"{module} -> {t}" for t in sorted(targets) if stage(t) not in BASE]
            continue
        allowed = LAYERS[here] | BASE | {here}
        wrong += [f"{module} -> {t}" for t in sorted(targets) if stage(t) not in allowed]
    assert wrong == [], "imports up the flow (see LAYERS): " + "; ".join(wrong)


def test_the_checks_see_a_wrong_import() -> None:
    assert stage("tfmatrix.analysis.statistics.stats") == "analysis" and stage("tfmatrix.cli") == "cli"
    assert "report" not in LAYERS["analysis"] and "commands" not in LAYERS["execution"] | LAYERS["history"]
    assert "execution" not in LAYERS["analysis"] and "runners" not in LAYERS["analysis"]


# What of analysis/ each of its subfolders may import beside itself (a top-level module or another subfolder).
SUBFOLDERS: dict[str, set[str]] = {
    "statistics": set(),        # the verdict statistics: numbers in, verdicts out
    "explain": set(),           # explain's profiles
    "runs": {"cells", "frame", "statistics"},       # the noise between runs, the runs kept before
    "claims": {"cells", "devices", "frame", "hardware", "runs", "statistics"},   # the questions and their answers
    "compare": {"cells", "claims", "frame", "runs", "statistics"},     # two result sets side by side
    # every kept run over time: cells' means, claim lines; a sequential run's series lines are its looks' (stopping)
    "series": {"cells", "claims", "runs", "statistics", "stopping"},
}


def test_the_analysis_subfolders_stand_on_their_own() -> None:
    """analysis/statistics/ (numbers in, verdicts out) and analysis/explain/ (profiles) import nothing else of
    analysis/; runs/ reads the cells and their frame, compare/ those and the runs' noise, never the other way round:
    the questions asked of cells come down to them, and nothing of statistics/ or runs/ reaches up for a comparison."""
    wrong = []
    for module, targets in sorted(imports("tfmatrix").items()):
        for sub, allowed in SUBFOLDERS.items():
            if module.startswith(f"tfmatrix.analysis.{sub}."):
                wrong += [f"{module} -> {t}" for t in sorted(targets) if t.startswith("tfmatrix.analysis.")
                          and t.split(".")[2] not in allowed | {sub}]
    assert wrong == [], "; ".join(wrong)


def test_every_analysis_subfolder_is_in_the_table() -> None:
    folders = {p.name for p in (ROOT / "tfmatrix" / "analysis").iterdir() if (p / "__init__.py").exists()}
    assert folders == set(SUBFOLDERS)


def test_only_the_commands_parse_arguments() -> None:
    """argparse belongs to cli.py and commands/: below them, steps take typed arguments, not a Namespace."""
    found = []
    for path in sorted((ROOT / "tfmatrix").rglob("*.py")):
        rel = path.relative_to(ROOT / "tfmatrix")
        if rel.parts[0] in ("commands", "cli.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if "argparse" in names:
                found.append(f"tfmatrix/{rel}:{node.lineno}")
    assert found == [], "argparse below commands/: " + ", ".join(found)


def test_the_top_of_the_package_stays_small() -> None:
    top = sorted(p.name for p in (ROOT / "tfmatrix").glob("*.py"))
    assert len(top) <= 8, top


SITTING = 400       # lines: what one reads in a sitting
ONE_PIECE = "# one piece:"    # a module past SITTING says, in a comment beginning so, why it is not split


def test_no_module_is_longer_than_one_sitting() -> None:
    """A module past 400 lines (of tfmatrix/, suite/ or scripts/) is split at a seam, or says in a
    ``# one piece: ...`` comment why it is one."""
    long = {}
    for package in ("tfmatrix", "suite", "scripts"):
        for p in (ROOT / package).rglob("*.py"):
            text = p.read_text(encoding="utf-8")
            if len(text.splitlines()) > SITTING and ONE_PIECE not in text:
                long[str(p.relative_to(ROOT))] = len(text.splitlines())
    assert long == {}

