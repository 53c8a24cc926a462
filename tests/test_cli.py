"""``python -m tfmatrix``: exit codes, one-line errors, list/validate/render output."""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tfmatrix import cli, paths
from tfmatrix.matrix import REGISTRY_ENV

MatrixFile = Callable[..., Path]


def run_cli(*args: str, cwd: Path | None = None, env_registry: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real entry point in a subprocess (what users and nox run)."""
    import os

    env = {k: v for k, v in os.environ.items() if k != REGISTRY_ENV}
    env["PYTHONPATH"] = str(paths.REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if env_registry is not None:
        env[REGISTRY_ENV] = env_registry
    return subprocess.run([sys.executable, "-m", "tfmatrix", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd or paths.REPO_ROOT, env=env)


@pytest.mark.slow
def test_validate_default_matrix() -> None:
    proc = run_cli("validate")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ("25 cells OK, 1 of them opt-in (0 warnings), 13 claims (seeds); a first `matrix` run of the "
                           "others: "
                           "roughly 1:17:12\n")
    assert proc.stderr == ""


@pytest.mark.parametrize(("body", "start"), [
    ('[[cell]]\ntf = "1.15\n', "tfmatrix: error: matrix.toml:2:11: TOML syntax error: "),
    ('[[cell]]\ntf = "1.15"\npyton = "3.7"\n', "tfmatrix: error: matrix.toml: cell[0]: key 'pyton': unknown cell key; "
                                              "did you mean 'python'?"),
    ('[[cell]]\ntf = "1.15;rm -rf /"\n', "tfmatrix: error: matrix.toml: cell[0]: key 'tf': '1.15;rm -rf /' is not a"),
    ('[[cell]]\ntf = "1.15"\n[[cell]]\ntf = "1.15"\n', "tfmatrix: error: matrix.toml: cell[1]: cell 'tf1.15-cpu' has"),
    ("", "tfmatrix: error: matrix.toml: the matrix has no cells"),
])  # fmt: skip
@pytest.mark.parametrize("command", ["validate", "list", "render"])
@pytest.mark.slow
def test_bad_input_exits_2_with_one_stderr_line(matrix_file: MatrixFile, tmp_path: Path, body: str, start: str,
                                                command: str) -> None:
    matrix_file(body)
    proc = run_cli(command, "--matrix", "matrix.toml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(start)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("args", [
    ("validate", "--matrix", "does-not-exist.toml"),
    ("validate", "--bogus"),
    ("frobnicate",),
    ("render", "--only", "no-such-cell*"),
])  # fmt: skip
@pytest.mark.slow
def test_usage_errors_exit_2_with_one_line(args: tuple[str, ...]) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("tfmatrix: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_command_prints_help_and_exits_2() -> None:
    proc = run_cli()
    assert proc.returncode == 2 and "validate" in proc.stderr and "render" in proc.stderr


@pytest.mark.slow
def test_untested_warnings_are_printed_once(matrix_file: MatrixFile, tmp_path: Path) -> None:
    matrix_file('[[cell]]\ntf = "1.15"\nkeras = "2.4.3"\nallow_untested = true\n')
    proc = run_cli("validate", "--matrix", "matrix.toml", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.startswith("1 cell OK (1 warning), 13 claims (seeds); a first `matrix` run of all of them: "
                                  "roughly ")
    assert proc.stderr == ("tfmatrix: warning: matrix.toml: cell[0]: key 'keras': standalone Keras 2.4.3 is not known "
                           "to pair with TF 1.15 (known: 2.2.5, 2.3.1) (allowed by allow_untested = true)\n")


def test_list_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["list", "--json", "--only", "tf1.1*"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["tf1.15-cpu", "tf1.15-gpu", "tf1.14-keras2.2.5-cpu", "tf1.14-keras2.2.5-gpu"]
    assert all(r["tag"].startswith(f"tfmatrix/{r['name']}:") for r in rows)
    assert rows[1]["base"]["ref"] == "tensorflow/tensorflow:1.15.0-gpu-py3" and rows[1]["cuda"] == "10.0"
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for text in ("name", "TF", "Keras", "Python", "target", "CUDA/cuDNN", "base image", "tag", "tf2.16-tf_keras-gpu",
                 "tensorflow/tensorflow:2.9.0-gpu", "12.5/9.3", "baseline tf1.14-keras2.2.5-cpu"):
        assert text in out, text


def test_list_shows_the_redirected_base(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(REGISTRY_ENV, "tfmatrix.local")
    assert cli.main(["list", "--json", "--only", "tf1.15-cpu"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["base"]["ref"] == "tfmatrix.local/library/python:3.7-slim-bookworm"


def test_render_writes_and_is_repeatable(tmp_path: Path) -> None:
    out = tmp_path / "images"
    proc = run_cli("render", "--out", str(out), "--only", "tf1.15-*", "--only", "tf2.21-*")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["tf1.15-cpu", "tf1.15-gpu", "tf2.21-keras3-cpu",
                                                      "tf2.21-keras3-gpu"]
    first = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert len(first) == 12
    assert run_cli("render", "--out", str(out), "--only", "tf1.15-*", "--only", "tf2.21-*").returncode == 0
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == first
    assert proc.stdout.splitlines()[-1] == f"rendered 4 cells into {out}"


def test_every_subcommand_takes_matrix() -> None:
    parser = cli.build_parser()
    for sc in cli.SUBCOMMANDS:
        positional = {"cell": ["some-cell"], "compare": ["run-a", "run-b"], "duet": ["a", "b"],
                      "sweep": ["a", "b", "--bench", "x"],
                      "ab": ["base.py", "head.py"],
                      "bisect": ["--claim", "c", "--good", "2.1", "--bad", "2.0"],
                      "publish": ["reports", "--out", "site"]}.get(sc.name, [])
        args = parser.parse_args([sc.name, *positional, "--matrix", "x.toml"])
        assert args.matrix == "x.toml" and args.run is sc.run
    assert [sc.name for sc in cli.SUBCOMMANDS] == [
        "validate", "list", "render", "wheels", "base-images", "matrix", "cell", "report", "compare", "duet", "sweep",
        "ab",
        "explain", "bisect", "timeline", "series", "publish", "disk"]


def test_an_option_is_never_read_as_a_longer_one_it_begins() -> None:
    """``cell X --bench 'selfcheck*'`` once ran with ``--bench-path selfcheck*`` (argparse's prefix matching)."""
    parser = cli.build_parser()
    cell = parser.parse_args(["cell", "tf1.15-cpu", "--bench", "selfcheck*"])
    assert cell.bench == ["selfcheck*"] and cell.bench_path == []
    for argv in (["matrix", "--bench-p", "x"], ["cell", "c", "--proc", "2"], ["list", "--matr", "m.toml"]):
        with pytest.raises(cli.UserError, match="unrecognized arguments"):
            parser.parse_args(argv)
    assert parser.parse_args(["matrix", "--bench", "selfcheck*"]).bench == ["selfcheck*"]


def test_bench_is_the_variant_filter_of_every_command_that_runs_variants_and_only_its_old_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--bench PATTERN`` on matrix, cell, duet, ab and sweep; ``--only PATTERN``, its old name on cell, ab and
    sweep, still works (marked so in their help); on matrix ``--only GLOB`` picks cells."""
    parser = cli.build_parser()
    runs = {"matrix": [], "cell": ["tf1.15-cpu"], "duet": ["a", "b"], "ab": ["base.py", "head.py"]}
    for name, positional in runs.items():
        assert parser.parse_args([name, *positional, "--bench", "x*", "--bench", "y*"]).bench == ["x*", "y*"]
    assert parser.parse_args(["sweep", "a", "b", "--bench", "x*"]).bench == "x*"
    for name in ("cell", "ab"):
        assert parser.parse_args([name, *runs[name], "--only", "x*"]).bench == ["x*"]
        assert parser.parse_args([name, *runs[name], "--only", "x*", "--bench", "y*"]).bench == ["x*", "y*"]
    assert parser.parse_args(["sweep", "a", "b", "--only", "x*"]).bench == "x*"
    matrix = parser.parse_args(["matrix", "--only", "tf1.15-cpu", "--bench", "x*"])
    assert (matrix.only, matrix.bench) == (["tf1.15-cpu"], ["x*"])
    helps = {}
    for name in ("matrix", "cell", "duet", "ab", "sweep"):
        with pytest.raises(SystemExit):
            parser.parse_args([name, "--help"])
        helps[name] = " ".join(capsys.readouterr().out.split())
    assert all("--bench PATTERN" in text for text in helps.values())
    for name in ("cell", "ab", "sweep"):
        assert "--only PATTERN deprecated: the old name of --bench" in helps[name]
    assert "--only" not in helps["duet"] and "old name of --bench" not in helps["matrix"]


def test_the_command_line_starts_without_the_analysis_stack() -> None:
    """Building the parser (``ab``'s defaults come from ``analysis.compare.ab``) imports neither pandas, numpy nor
    scipy: ``--help`` and a typo answer at once; the command that runs imports what it needs."""
    probe = ("import sys; from tfmatrix import cli; cli.build_parser(); "
             "print(sorted({'pandas', 'numpy', 'scipy'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          cwd=paths.REPO_ROOT)
    assert done.returncode == 0 and done.stdout == "[]\n", done.stderr[-2000:]


def test_sweep_without_its_variant_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sweep", "a", "b"]) == 2
    err = capsys.readouterr().err
    assert err == "tfmatrix: error: sweep: name the one variant to sweep with --bench PATTERN (glob on variant id)\n"


# --------------------------------------------------------------------------- every --help

def _parsers() -> dict[str, argparse.ArgumentParser]:
    """The top-level parser ("") and each subcommand's, as ``main`` builds them."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"": parser, **sub.choices}


def _help_texts() -> list[tuple[str, str]]:
    """(where, text) for every help line and description a user can print."""
    out = [(f"Subcommand {sc.name}", sc.help) for sc in cli.SUBCOMMANDS]
    for name, parser in _parsers().items():
        out += [(f"{name or 'top'} {a.option_strings or a.dest}", a.help) for a in parser._actions if a.help]
        out += [(f"{name or 'top'} description", parser.description or "")]
    return out


def test_every_help_renders_exit_0_without_argparse_internals(capsys: pytest.CaptureFixture[str]) -> None:
    """``--help`` of the top level and every subcommand: exit 0, no dict repr (an unescaped ``%`` in a help line
    makes argparse print its action's internals: the series line's "20% slower" did), no traceback."""
    names = list(_parsers())
    assert names[1:] == [sc.name for sc in cli.SUBCOMMANDS]
    for name in names:
        with pytest.raises(SystemExit) as done:
            cli.build_parser().parse_args([name, "--help"] if name else ["--help"])
        out, err = capsys.readouterr()
        assert done.value.code == 0 and out.startswith("usage: python -m tfmatrix"), (name, err)
        assert "{'" not in out and "Traceback" not in out + err and "%%" not in out, (name, out)
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--help"])
    top = " ".join(capsys.readouterr().out.split())
    assert 'the steps found ("X 20% slower since run R, confirmed by 3 runs")' in top


def test_every_percent_sign_in_a_help_line_is_escaped() -> None:
    """What argparse %-formats (each option's help; a subcommand's line in the top-level list) has no lone ``%``:
    ``%%`` or ``%(name)s`` only, so the next "20% slower" cannot garble a help page."""
    for name, parser in _parsers().items():
        sub = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        helps = [a.help for a in parser._actions if a.help] + [c.help for s in sub for c in s._choices_actions]
        for text in helps:
            assert "%" not in re.sub(r"%%|%\(\w+\)[sd]", "", str(text)), (name, text)


def _module_names() -> set[str]:
    """Every dotted module path of tfmatrix and suite, with each of its dotted tails and heads (``series.answers``,
    ``analysis.series``)."""
    import pkgutil

    import suite
    import tfmatrix

    names: set[str] = set()
    for package in (tfmatrix, suite):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            parts = info.name.split(".")
            names |= {".".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 2, len(parts) + 1)}
    return names


def test_no_help_text_names_a_module_path() -> None:
    """Help names what a user can act on (a value, a flag, a doc page), never where the code keeps it."""
    modules = _module_names()
    assert {"analysis.series.answers", "suite.api", "tfmatrix.cli"} <= modules
    dotted = re.compile(r"(?<![\w/.-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
    for where, text in _help_texts():
        for token in dotted.findall(text):
            parts = token.split(".")
            named = [".".join(parts[:j]) for j in range(2, len(parts) + 1) if ".".join(parts[:j]) in modules]
            assert not named, f"{where}: {token!r} in {text!r}"
