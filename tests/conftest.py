"""Shared fixtures: matrix snippets written to tmp_path and loaded like the CLI does."""
from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tfmatrix.errors import UserError
from tfmatrix.matrix import REGISTRY_ENV, Matrix, load


@pytest.fixture(autouse=True)
def _no_registry_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's TFMATRIX_BASE_REGISTRY must not change what tests expect."""
    monkeypatch.delenv(REGISTRY_ENV, raising=False)


@pytest.fixture
def matrix_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    """Write a (dedented) snippet to tmp_path/matrix.toml; messages then name it "matrix.toml"."""
    monkeypatch.chdir(tmp_path)

    def write(text: str, name: str = "matrix.toml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture
def load_snippet(matrix_file: Callable[[str], Path]) -> Callable[..., Matrix]:
    """Write and load a snippet; ``environ`` defaults to empty (no registry redirect)."""

    def run(text: str, environ: dict[str, str] | None = None) -> Matrix:
        return load(matrix_file(text), environ={} if environ is None else environ)

    return run


@pytest.fixture
def error_of(load_snippet: Callable[..., Matrix]) -> Callable[..., str]:
    """The one-line UserError message a snippet produces."""

    def run(text: str, environ: dict[str, str] | None = None) -> str:
        with pytest.raises(UserError) as info:
            load_snippet(text, environ)
        message = str(info.value)
        assert "\n" not in message
        return message

    return run


# --------------------------------------------------------------------------- real cells

VENV_TEST_CELLS = ("tf1.15-cpu", "tf2.0-keras2.3.1-cpu", "tf2.15-cpu", "tf2.21-keras3-cpu")


@pytest.fixture(scope="session")
def venv_cell(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict]:
    """Run a default-matrix cell through the venv runner (quick preset), once per session.

    Returns a function: cell name -> its ``reports/cells/<cell>.json`` document. The
    cells share one reports directory (``venv_cell.reports``), so later tests can
    build a report from all of them. The virtualenvs live in .nox/cell-<name> and
    are reused across sessions while the cell's inputs are unchanged.
    """
    from e2e import cell_docs, require, tfmatrix

    from tfmatrix.provision import interpreters

    reports = tmp_path_factory.mktemp("venv-reports")
    cache: dict[str, dict] = {}
    matrix = load(Path(__file__).resolve().parent.parent / "matrix.toml")

    def get(name: str) -> dict:
        if name not in cache:
            cell = matrix.cell(name)
            require(interpreters.find(cell.python), f"no CPython {cell.python} on this host for {name}")
            proc = tfmatrix("cell", name, "--runner", "venv", "--preset", "quick", "--rounds", "2", "--variants",
                            "all", "--reports", str(reports))
            doc = cell_docs(reports).get(name)
            assert doc is not None, proc.stderr[-3000:]
            assert doc["status"] == "ok", (doc["reason"], doc["log_tail"][-3000:])
            cache[name] = doc
        return cache[name]

    get.reports = reports  # type: ignore[attr-defined]
    return get
