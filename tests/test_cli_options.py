"""The measuring commands' options are declared once and merged with matrix.toml's once (``commands.options``,
``commands.settings``), and nothing is stored on ``args`` after parsing.

The source checks read the AST like ``test_layers``; the request checks run each measuring command through
``cli.main`` up to the point where it hands its ``RunRequest`` down, and compare it with the request each command
made by hand before the merge moved into ``RunSettings.from_args``.
"""
from __future__ import annotations

import ast
import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tfmatrix import cli, paths
from tfmatrix.execution.request import RunRequest
from tfmatrix.matrix.records import AUTO_ROUNDS_CAP
from tfmatrix.runners.job import SEQUENTIAL_SHARE

ROOT = Path(__file__).resolve().parent.parent
SHARED = ("--matrix", "--reports", "--runner", "--rounds", "--preset", "--repeats", "--processes", "--variants",
          "--schedule", "--seed", "--address", "--bench-path", "--rows", "--fail-on", "--redo", "--bench", "--csv")
# The same flag with another meaning, not a copy: explain's --variants A B names two variant ids, bisect's --bench ID
# the one variant it bisects.
OTHER_MEANING = {("explain.py", "--variants"), ("bisect.py", "--bench")}


def _declared() -> Counter[str]:
    """Every ``add_argument("--flag", ...)`` in cli.py and commands/, counted per flag."""
    found: Counter[str] = Counter()
    for path in [ROOT / "tfmatrix" / "cli.py", *sorted((ROOT / "tfmatrix" / "commands").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                found.update(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                             and a.value.startswith("--") and (path.name, a.value) not in OTHER_MEANING)
    return found


def test_each_shared_option_is_declared_once() -> None:
    declared = _declared()
    assert {flag: declared[flag] for flag in SHARED} == dict.fromkeys(SHARED, 1)


def test_nothing_is_set_on_args_after_parsing() -> None:
    found = []
    for path in sorted((ROOT / "tfmatrix").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
            setattr_call = (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                            and node.func.id == "setattr" and isinstance(node.args[0], ast.Name)
                            and node.args[0].id == "args")
            if setattr_call or any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                   and t.value.id == "args" for t in targets):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_the_checks_see_a_second_declaration_and_an_assignment() -> None:
    tree = ast.parse('p.add_argument("--reports")\nargs.loaded_matrix = 1\n')
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assignments = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)]
    assert calls[0].args[0].value == "--reports"                                    # type: ignore[attr-defined]
    assert assignments[0].targets[0].value.id == "args"                             # type: ignore[attr-defined]


def test_report_takes_reports_and_keeps_out_as_its_old_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = cli.build_parser()
    assert parser.parse_args(["report", "--reports", "r"]).reports == "r"
    assert parser.parse_args(["report", "--out", "o"]).out == "o"
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for flag in ("--reports", "--out"):
        assert cli.main(["report", flag, str(a_file), "--matrix", str(tmp_path / "none.toml")]) == 2
        assert capsys.readouterr().err == f"tfmatrix: error: {flag} {a_file}: is a file, not a directory; pass a " \
                                          "directory path\n"


# --------------------------------------------------------------------------- the request each command makes

MATRIX = """\
[matrix]
preset = "quick"
rounds = "auto"
schedule = "sequential"
variants = "claims"

[suite]
paths = ["benchmarks/"]

[[cell]]
tf = "2.15"

[[cell]]
tf = "1.15"
"""


class Captured(Exception):
    """Raised where a command hands its request down: the test reads it, nothing runs."""

    def __init__(self, request: RunRequest) -> None:
        super().__init__()
        self.request = request


def _capture(*_: Any, **kw: Any) -> None:
    request = kw.get("request") or next(a for a in _ if isinstance(a, RunRequest))
    raise Captured(request)


@pytest.fixture
def asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run ``argv`` against MATRIX (auto rounds, sequential schedule, quick, claims, [suite] paths) and return the
    request it made."""
    from tfmatrix.execution import dispatch, duet
    from tfmatrix.history import bisect, timeline
    from tfmatrix.runners import choose

    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "b.py").write_text("BENCHMARKS = []\n")
    (tmp_path / "matrix.toml").write_text(MATRIX)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path / "build")
    monkeypatch.setattr(choose, "make_runner", lambda *a, **kw: object())
    for module, name in ((dispatch, "execute"), (duet, "run"), (timeline, "measure")):
        monkeypatch.setattr(module, name, _capture)
    monkeypatch.setattr(bisect, "Prober", lambda axis, target, settings, runner, request, *a: _capture(request))
    monkeypatch.setattr(timeline, "reuse", lambda *a, **kw: ({}, [("2.15", None)]))

    def run(*argv: str) -> RunRequest:
        """The request, its stamps checked and then left out (so that it compares with a plain ``RunRequest``)."""
        from tfmatrix.matrix.user_benchmarks import files_hash
        from tfmatrix.results.store import suite_fingerprint

        with pytest.raises(Captured) as got:
            cli.main([*argv, "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports")])
        request = got.value.request
        assert request.suite == suite_fingerprint() and request.bench == files_hash(request.bench_paths)
        return dataclasses.replace(request, suite="", bench="")

    return run


def test_matrix_takes_every_left_out_option_from_matrix_toml(asked: Any, tmp_path: Path) -> None:
    bench = ((tmp_path / "benchmarks").resolve(),)
    assert asked("matrix") == RunRequest(rounds=AUTO_ROUNDS_CAP, sequential=True, schedule="sequential",
                                         bench_paths=bench)
    assert asked("matrix", "--rounds", "2", "--schedule", "interleaved", "--preset", "seed", "--seed", "7",
                 "--repeats", "3", "--processes", "2", "--bench", "x*") == RunRequest(
        preset="seed", only=("x*",), repeats=3, rounds=2, schedule="interleaved", seed=7, bench_paths=bench,
        processes=2)


def test_cell_and_its_claims_focus(asked: Any, tmp_path: Path) -> None:
    request = asked("cell", "tf2.15-cpu", "--rounds", "3", "--bench-path", "benchmarks/b.py")
    assert request.rounds == 3 and not request.sequential and request.bench_paths == (
        (tmp_path / "benchmarks" / "b.py").resolve(),)
    assert request.only == () and not request.claims_only          # the user's files: the whole preset
    (tmp_path / "matrix.toml").write_text(MATRIX.replace('[suite]\npaths = ["benchmarks/"]\n', ""))
    focused = asked("cell", "tf2.15-cpu")
    assert focused.only and focused.claims_only and focused.bench_paths == ()


def test_the_runs_of_their_own_take_matrix_tomls_rounds_as_a_fixed_count(asked: Any, tmp_path: Path) -> None:
    from tfmatrix.history.targets import claim_target
    from tfmatrix.history.timeline import selection

    bench = ((tmp_path / "benchmarks").resolve(),)         # matrix.toml's [suite] paths: mounted as a run does
    duet = asked("duet", "tf2.15-cpu", "tf1.15-cpu", "--seed", "3")
    assert duet == RunRequest(rounds=AUTO_ROUNDS_CAP, schedule="duet", seed=3, bench_paths=bench)   # stamps: asked
    assert asked("bisect", "--claim", "predict_slower_after_compile", "--good", "2.1", "--bad", "2.0") == RunRequest(
        preset="quick", only=claim_target("predict_slower_after_compile", "quick").variant_ids, rounds=AUTO_ROUNDS_CAP,
        bench_paths=bench)
    assert asked("timeline", "--rounds", "2", "--preset", "seed") == RunRequest(preset="seed", only=selection("seed"),
                                                                             rounds=2, bench_paths=bench)


def test_ab_rounds_are_its_own(asked: Any, tmp_path: Path) -> None:
    for name in ("base.py", "head.py"):
        (tmp_path / name).write_text("BENCHMARKS = []\n")
    request = asked("ab", "base.py", "head.py", "--cell", "tf2.15-cpu")
    assert request == RunRequest(only=("*side=*",), repeats=20 * SEQUENTIAL_SHARE, rounds=10, schedule="interleaved",
                                 bench_paths=((tmp_path / "base.py").resolve(), (tmp_path / "head.py").resolve()),
                                 sides=("base", "head"), sequential=True, judge="ab")
    assert asked("ab", "base.py", "head.py", "--cell", "tf2.15-cpu", "--rounds", "4", "--preset", "seed").rounds == 4
