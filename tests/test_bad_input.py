"""Bad input to every command: one line naming what is wrong and the fix, exit 2, never a traceback.

Also the matrix-side promises of issue 12: pip-impossible pairings are errors
even with allow_untested, a product's size is checked before it is expanded,
messages point the right way, short cell names resolve, one run at a time.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from report_docs import cell_doc, noisy, record, results_doc, training_params, write

from tfmatrix import cli, paths
from tfmatrix.errors import UserError
from tfmatrix.execution.lock import run_lock
from tfmatrix.matrix import Matrix
from tfmatrix.matrix.names import resolve
from tfmatrix.runners.base import Runner

ROOT = Path(__file__).resolve().parent.parent
M = "matrix.toml"
ErrorOf = Callable[..., str]
DEFAULT_NAMES = [
    "tf1.14-keras2.2.5-cpu", "tf1.14-keras2.2.5-gpu", "tf1.15-cpu", "tf1.15-gpu", "tf2.0-keras2.3.1-cpu",
    "tf2.0-keras2.3.1-gpu", "tf2.1-cpu", "tf2.1-gpu", "tf2.16-keras3-cpu", "tf2.16-keras3-gpu",
    "tf2.16-tf_keras-cpu", "tf2.16-tf_keras-gpu",
]


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tfmatrix", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(cwd),
                                            "DOCKER_HOST": "unix:///nonexistent.sock"})


# -- every command, broken inputs ----------------------------------------------------------------

@pytest.mark.slow
def test_every_command_survives_broken_inputs_without_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Each command x each broken input: exit 0, 1 or 2 and no exception escaping ``main`` (which is what
    prints a traceback); a sample of them also through ``python -m tfmatrix`` itself."""
    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path / "build")
    good = tmp_path / "good.toml"
    good.write_text('[[cell]]\ntf = "1.15"\n')
    inputs = {
        "missing.toml": None,
        "dir.toml": "DIR",
        "syntax.toml": '[[cell]]\ntf = "1.15\n',
        "binary.toml": b"\xff\xfe\x00[[cell]]",
        "types.toml": "cell = 5\nproduct = 'x'\n",
        "huge.toml": '[[product]]\n' + "\n".join(f'{k} = [{", ".join(str(i) for i in range(20))}]'
                                                  for k in ("tf", "keras", "python", "cuda", "cudnn", "repeats")),
        "empty-product.toml": '[[product]]\ntf = ["1.15"]\nexclude = [{ tf = "1.15" }]\n',
        "impossible.toml": '[[cell]]\ntf = "2.16"\nkeras = "2.3.1"\nallow_untested = true\n',
    }
    for name, content in inputs.items():
        path = tmp_path / name
        if content == "DIR":
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content)
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    cells = tmp_path / "cells"
    cells.mkdir()
    (cells / "broken.json").write_text('{"schema": "tfmatrix.cell", "schema_version": 1, "cell": "oops"')
    runs: list[tuple[str, ...]] = []
    for command in ("validate", "list", "render", "wheels", "base-images", "matrix", "cell", "report"):
        extra: tuple[str, ...] = ("tf1.15-cpu",) if command == "cell" else ()
        if command in ("matrix", "cell"):
            extra += ("--reports", str(tmp_path / "reports"))
        if command == "report":
            extra += ("--out", str(tmp_path / "reports"))
        for name in inputs:
            runs.append((command, *extra, "--matrix", str(tmp_path / name)))
    runs += [
        ("render", "--matrix", str(good), "--out", str(a_file)),
        ("render", "--matrix", str(good), "--out", str(a_file / "sub")),
        ("report", "--out", str(a_file)),
        ("report", "--cells", str(a_file), "--out", str(tmp_path / "out")),
        ("report", "--cells", str(cells), "--out", str(tmp_path / "out")),
        ("report", "--cells", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")),
        ("report", "--cells", str(cells), "--out", str(tmp_path / "out"), "--baseline", "nope"),
        ("matrix", "--matrix", str(good), "--reports", str(a_file)),
        ("cell", "tf9.9-gpu", "--matrix", str(good)),
        ("cell", "--matrix", str(good)),
        ("list", "--matrix", str(good), "--only", "tf9*"),
        ("list", "--matrix", str(good), "--only", "["),
        ("matrix", "--matrix", str(good), "--repeats", "many"),
        ("nonsense",),
    ]
    failures = []
    for args in runs:
        try:
            code = cli.main(list(args))
        except BaseException as e:  # noqa: BLE001 - any escape is the failure this test looks for
            failures.append(f"{' '.join(args)} -> {type(e).__name__}: {e}")
            continue
        err = capsys.readouterr().err
        if code not in (0, 1, 2) or "Traceback" in err:
            failures.append(f"{' '.join(args)} -> exit {code}: {err[-800:]}")
    for args in runs[::9]:                      # the real entry point, for a sample
        proc = run_cli(*args, cwd=tmp_path)
        if "Traceback" in proc.stderr or proc.returncode not in (0, 1, 2):
            failures.append(f"python -m tfmatrix {' '.join(args)} -> exit {proc.returncode}: {proc.stderr[-800:]}")
    assert not failures, "\n".join(failures)


# -- 3: --out that is a file ---------------------------------------------------------------------

@pytest.mark.parametrize("command", [["render"], ["report", "--cells", "CELLS"]])
def test_out_that_is_a_file_is_one_line_not_a_traceback(tmp_path: Path, command: list[str],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.html"
    out.write_text("not a directory")
    cells = tmp_path / "cells"
    write(cells, cell_doc("tf2.0-cpu", "2.0", results=results_doc(
        [record("training.question", training_params(), noisy(0.002))])))
    argv = [str(cells) if a == "CELLS" else a for a in command]
    assert cli.main([*argv, "--out", str(out), "--matrix", str(ROOT / "matrix.toml")]) == 2
    err = capsys.readouterr().err
    assert err == f"tfmatrix: error: --out {out}: is a file, not a directory; pass a directory path\n"


# -- 4: what pip cannot install is never relaxed --------------------------------------------------

@pytest.mark.parametrize(("body", "message"), [
    ('tf = "2.16"\nkeras = "2.3.1"\n', "key 'keras': TF 2.16 requires keras>=3.0.0, so pip cannot install standalone "
                                       "Keras 2.3.1 with it (allow_untested does not change that); use keras = "
                                       "\"tf_keras\" for Keras 2 on this release, or \"keras3\""),
    ('tf = "2.15"\ntarget = "gpu"\ncudnn = "7.6"\n', "key 'cudnn': cuDNN comes from the nvidia-cudnn-cu12 wheel, whose "
                                                     "oldest version is 8.8.0.121, so pip cannot install cuDNN 7.6 "
                                                     "(allow_untested does not change that); use cudnn = \"8.9\" or a "
                                                     "version >= 8.8.0.121"),
    ('tf = "2.5"\npython = "3.12"\n', "key 'python': TF 2.5 has wheels for Python 3.7, 3.8, 3.9 only, not 3.12 "
                                      "(allow_untested does not change that); use one of those"),
])  # fmt: skip
def test_allow_untested_never_relaxes_what_pip_cannot_install(error_of: ErrorOf, body: str, message: str) -> None:
    assert error_of(f"[[cell]]\n{body}allow_untested = true\n") == f"{M}: cell[0]: {message}"
    # a cell that never set it is not told about allow_untested at all
    unset = message.replace(" (allow_untested does not change that)", "")
    assert unset != message and error_of(f"[[cell]]\n{body}") == f"{M}: cell[0]: {unset}"


def test_allow_untested_still_relaxes_an_installable_cudnn(load_snippet: Callable[..., Matrix]) -> None:
    (cell,) = load_snippet('[[cell]]\ntf = "2.15"\ntarget = "gpu"\ncudnn = "9.1"\nallow_untested = true\n').cells
    assert "nvidia-cudnn-cu12==9.1.*" in cell.requirements and len(cell.untested) == 1


# -- 5: size, before expansion ---------------------------------------------------------------------

SIX_AXES = '''
[[product]]
tf = ["2.1", "2.2", "2.3", "2.4", "2.5"]
python = ["3.7", "3.8"]
target = ["gpu"]
repeats = [1, 2, 3, 4, 5]
memory = ["4g", "8g"]
timeout = [600, 1200, 1800, 2400, 3000, 3600, 4200, 4800]
'''


def test_an_800_cell_product_is_refused_with_count_axes_and_fix(error_of: ErrorOf) -> None:
    message = error_of(SIX_AXES)
    assert message == (
        f"{M}: the matrix has 800 cells, more than max_cells = 200 (about 36 h on the quick preset); product[0] "
        "alone is 800 cells (tf (5) x python (2) x target (1) x repeats (5) x memory (2) x timeout (8)); narrow the "
        "axes or add exclude entries, or raise the limit with [matrix] max_cells = 800")


def test_max_cells_raises_the_limit(load_snippet: Callable[..., Matrix], error_of: ErrorOf) -> None:
    body = '[matrix]\nmax_cells = 4\n[[product]]\ntf = ["1.15", "2.1"]\ntarget = ["cpu", "gpu"]\n'
    assert len(load_snippet(body).cells) == 4
    assert "the matrix has 5 cells, more than max_cells = 4" in error_of(body + '[[cell]]\ntf = "2.9"\n')
    assert error_of('[matrix]\nmax_cells = "lots"\n[[cell]]\ntf = "1.15"\n') == (
        f"{M}: [matrix]: key 'max_cells': 'lots' is not a cell count; use an integer from 1 to 100000")


def test_a_product_of_20_values_an_axis_is_refused_before_it_is_expanded(error_of: ErrorOf) -> None:
    body = "[[product]]\n" + "\n".join(f'{k} = [{", ".join(str(i) for i in range(20))}]'
                                       for k in ("tf", "keras", "python", "cuda", "cudnn", "repeats"))
    tracemalloc.start()
    t0 = time.perf_counter()
    message = error_of(body)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert message.startswith(f"{M}: product[0]: 64000000 combinations (tf (20) x keras (20) x python (20) x ")
    assert "far more than max_cells = 200" in message
    assert peak < 20_000_000 and seconds < 5, (peak, seconds)


@pytest.mark.slow
def test_validate_prints_the_estimated_run_time(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text('[[product]]\ntf = ["1.15", "2.1"]\n')
    proc = run_cli("validate", "--matrix", "m.toml", cwd=tmp_path)
    assert proc.stdout == ("2 cells OK (0 warnings), 13 claims (seeds); a first `matrix` run of all of them: "
                           "roughly 12:00\n")


# -- 6: messages that point the right way ------------------------------------------------------------

def test_a_product_excluded_to_nothing_is_named(error_of: ErrorOf, load_snippet: Callable[..., Matrix]) -> None:
    empty = '[[product]]\ntf = ["1.15", "2.1"]\nexclude = [{ tf = "1.15" }, { tf = "2.1" }]\n'
    line = (f"{M}: product[0]: its exclude removes every one of its 2 combinations (tf (2)), so it adds no cells; "
            "remove or narrow an exclude entry, or delete the product")
    assert error_of(empty) == line
    matrix = load_snippet('[[cell]]\ntf = "2.9"\n' + empty)
    assert [c.name for c in matrix.cells] == ["tf2.9-cpu"] and matrix.warnings == (line,)


def test_cells_given_as_a_file_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "tf2.0-cpu.json"
    file.write_text("{}")
    assert cli.main(["report", "--cells", str(file), "--out", str(tmp_path), "--matrix", "none"]) == 2
    assert "is a file, not a directory; pass --cells DIR" in capsys.readouterr().err


# -- 7: short cell names -------------------------------------------------------------------------------

@pytest.mark.parametrize(("typed", "name"), [
    ("tf2.0-gpu", "tf2.0-keras2.3.1-gpu"), ("2.0-gpu", "tf2.0-keras2.3.1-gpu"), ("tf2.1-cpu", "tf2.1-cpu"),
    ("tf2.16-tf_keras-gpu", "tf2.16-tf_keras-gpu"), ("2.16-keras3-cpu", "tf2.16-keras3-cpu"),
    ("TF1.14-GPU", "tf1.14-keras2.2.5-gpu"),
])  # fmt: skip
def test_unambiguous_short_names_resolve(typed: str, name: str) -> None:
    assert resolve(typed, DEFAULT_NAMES).name == name


def test_ambiguous_short_names_list_the_candidates_and_unknown_ones_suggest() -> None:
    assert resolve("tf2.0", DEFAULT_NAMES).problem == (
        "'tf2.0' matches 2 cells: tf2.0-keras2.3.1-cpu, tf2.0-keras2.3.1-gpu; name one of them")
    assert resolve("tf2.16-gpu", DEFAULT_NAMES).problem == (
        "'tf2.16-gpu' matches 2 cells: tf2.16-keras3-gpu, tf2.16-tf_keras-gpu; name one of them")
    assert resolve("tf2.1-cpv", DEFAULT_NAMES).problem == (
        "no cell named 'tf2.1-cpv'; did you mean 'tf2.1-cpu'? (`python -m tfmatrix list` shows them all)")


def test_the_last_parts_of_one_name_resolve_to_it(capsys: pytest.CaptureFixture[str]) -> None:
    backends = ["keras3-jax-cpu", "keras3-jax-gpu", "keras3-torch-cpu", "keras3-torch-gpu"]
    names = DEFAULT_NAMES + backends
    assert resolve("jax-cpu", names).name == "keras3-jax-cpu"
    assert resolve("TORCH-GPU", names).name == "keras3-torch-gpu"
    assert resolve("tf_keras-gpu", names).name == "tf2.16-tf_keras-gpu"
    assert resolve("jax", names).problem == "no cell named 'jax'; cells are: " + ", ".join(names) + (
        " (`python -m tfmatrix list` shows them all)")                      # a middle part alone is not a tail
    assert resolve("cpu", names).problem.startswith("'cpu' matches 8 cells: tf1.14-keras2.2.5-cpu, ")
    assert resolve("tf2.1-cpu", names).name == "tf2.1-cpu"                  # the TF-first reading comes first
    assert cli.main(["list", "--json", "--only", "jax-cpu"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["keras3-jax-cpu"]


def test_cell_command_resolves_the_readme_name(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from tfmatrix.commands import run as run_commands

    chosen = []
    monkeypatch.setattr(run_commands, "_run_cells", lambda args, cells, bench, redo, requested=None: chosen.append(
        (requested, [c.name for c in cells])) or 0)
    assert cli.main(["cell", "tf2.0-gpu"]) == 0
    assert chosen == [("tf2.0-keras2.3.1-gpu", ["tf2.0-keras2.3.1-gpu"])]
    assert cli.main(["cell", "tf2.0"]) == 2
    assert capsys.readouterr().err == (f"tfmatrix: error: {M}: 'tf2.0' matches 2 cells: tf2.0-keras2.3.1-cpu, "
                                       "tf2.0-keras2.3.1-gpu; name one of them\n")
    assert cli.main(["list", "--json", "--only", "tf2.0"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["tf2.0-keras2.3.1-cpu", "tf2.0-keras2.3.1-gpu"]


class _SkippingRunner(Runner):
    """A runner with no GPU: every GPU cell is skipped, as on a host without the NVIDIA toolkit."""

    name = "fake"

    def skip_reason(self, cell: object) -> str | None:
        return "no GPU here"

    def inputs(self, cell: object) -> str:
        return "x"

    def run_cell(self, job, log, progress):  # type: ignore[no-untyped-def]
        cell = job.cell
        from tfmatrix.results.store import CellOutcome

        return CellOutcome(cell.name, "skipped", "no GPU here", {"name": self.name}, {})


def test_a_requested_gpu_cell_that_is_skipped_exits_non_zero_saying_so_last(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tfmatrix.runners import choose as execution

    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path / "build")
    monkeypatch.setattr(execution, "make_runner", lambda kind, registry, console, **kw: _SkippingRunner())
    code = cli.main(["cell", "tf2.0-gpu", "--reports", str(tmp_path / "reports")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip().splitlines()[-1] == ("tfmatrix: error: cell tf2.0-keras2.3.1-gpu was skipped, nothing ran: "
                                            "no GPU here")


# -- 9: one run at a time ------------------------------------------------------------------------------

def test_a_second_run_on_the_same_checkout_is_refused_with_one_line(tmp_path: Path) -> None:
    lock = tmp_path / "build" / "run.lock"
    with run_lock(lock, "python -m tfmatrix matrix"), pytest.raises(UserError) as e:  # noqa: SIM117
        with run_lock(lock, "python -m tfmatrix cell tf2.1-cpu"):
            pass  # pragma: no cover
    message = str(e.value)
    assert message.startswith(f"{lock}: another tfmatrix run on this checkout holds the lock (pid ")
    assert "`python -m tfmatrix matrix`" in message and "\n" not in message
    with run_lock(lock, "again"):          # released when the holder is done
        pass


def test_the_lock_is_held_across_processes_and_freed_when_the_holder_dies(tmp_path: Path) -> None:
    lock = tmp_path / "run.lock"
    code = (f"import sys, time; sys.path.insert(0, {str(ROOT)!r}); from tfmatrix.execution.lock import run_lock\n"
            f"with run_lock(__import__('pathlib').Path({str(lock)!r}), 'holder'):\n"
            "    print('held', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(UserError, match=f"pid {holder.pid}, `holder`"), run_lock(lock, "second"):
            pass  # pragma: no cover
    finally:
        holder.kill()
        holder.wait()
    with run_lock(lock, "after a SIGKILL"):
        pass


def test_matrix_and_cell_take_the_lock_before_touching_docker_or_reports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tfmatrix.runners import choose as execution

    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path / "build")
    made = []
    monkeypatch.setattr(execution, "make_runner", lambda *a, **kw: made.append(a))
    with run_lock(tmp_path / "build" / "run.lock", "python -m tfmatrix matrix"):
        assert cli.main(["cell", "tf2.1-cpu", "--reports", str(tmp_path / "reports")]) == 2
    assert made == [] and not (tmp_path / "reports" / "cells").exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "another tfmatrix run on this checkout holds the lock" in err
