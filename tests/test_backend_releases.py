"""Keras 3's backends' releases as cells: ``jax = "0.6"`` / ``torch = "2.6"``, their table, their impossible pairs.

The table's rows (``[[backend.jax.release]]``, ``[[backend.torch.release]]``
in releases.toml) are checked as data here, and once against PyPI itself
(``test_every_row_resolves_from_pypi_for_a_cpu_cell``: pip resolves each row's
newest patch and its dependencies for Python 3.11, metadata only).
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tfmatrix.matrix import Matrix
from tfmatrix.matrix.releases import BackendRelease, load_table
from tfmatrix.provision.render import render_cell
from tfmatrix.versions import minor_series, version_key

Snippet = Callable[..., Matrix]
ErrorOf = Callable[..., str]
M = "matrix.toml"
K3 = load_table().keras3
assert K3 is not None
ROWS = [(name, row) for name, backend in K3.pinned.items() for row in backend.releases]


def _id(pair: tuple[str, BackendRelease]) -> str:
    return f"{pair[0]}{pair[1].minor}"


# --------------------------------------------------------------------------- cells


def test_a_minor_means_its_newest_patch_and_the_name_says_the_release_as_written(load_snippet: Snippet) -> None:
    m = load_snippet('[[cell]]\nbackend = "jax"\njax = "0.6"\n'
                     '[[cell]]\nbackend = "jax"\nkeras = "3.10.0"\njax = "0.4.38"\n'
                     '[[cell]]\nbackend = "torch"\ntorch = "2.6"\ntarget = "gpu"\n'
                     '[[cell]]\nbackend = "jax"\n')
    by = {c.name: c for c in m.cells}
    assert list(by) == ["keras3-jax0.6-cpu", "keras3.10.0-jax0.4.38-cpu", "keras3-torch2.6-gpu", "keras3-jax-cpu"]
    assert by["keras3-jax0.6-cpu"].requirements == (f"keras=={K3.newest}", "jax[cpu]==0.6.2")
    assert by["keras3-jax0.6-cpu"].backend_version == "0.6.2"
    assert by["keras3-jax0.6-cpu"].to_dict()["backend_version"] == "0.6.2"
    assert by["keras3.10.0-jax0.4.38-cpu"].requirements == ("keras==3.10.0", "jax[cpu]==0.4.38")
    torch = by["keras3-torch2.6-gpu"]
    assert torch.requirements[-1] == "torch==2.6.0" and (torch.cuda, torch.cudnn) == ("12.4", "9.1")
    default = by["keras3-jax-cpu"]        # no key: the table's default, and the name as before
    assert default.backend_version == K3.pinned["jax"].version
    files = render_cell(by["keras3-jax0.6-cpu"]).files
    assert "jax[cpu]==0.6.2" in files["requirements.txt"] and "jax 0.6.2 for CPU" in files["requirements.txt"]
    assert 'org.tfmatrix.backend="jax 0.6.2"' in files["Dockerfile"]


def test_a_backend_release_is_a_product_axis(load_snippet: Snippet) -> None:
    m = load_snippet('[[product]]\nbackend = "jax"\nkeras = "3.10.0"\njax = ["0.4", "0.6", "0.10"]\n'
                     '[[product]]\nbackend = "torch"\nkeras = "3.10.0"\ntorch = ["2.4", "2.14"]\n'
                     'name = "t{backend_release}"\n')
    assert [(c.name, c.backend_version) for c in m.cells] == [
        ("keras3.10.0-jax0.4-cpu", "0.4.38"), ("keras3.10.0-jax0.6-cpu", "0.6.2"),
        ("keras3.10.0-jax0.10-cpu", "0.10.2"), ("t2.4.1", "2.4.1"), ("t2.14.1", "2.14.1")]
    # a release under Keras's own CI floor is an untested pairing: allowed only when asked, and said
    allowed = load_snippet('[[cell]]\nbackend = "torch"\ntorch = "2.4"\nallow_untested = true\n').cells[0]
    assert allowed.untested and "Keras 3.15.1's CI tests torch >= 2.6.0, not 2.4.1" in allowed.untested[0]


@pytest.mark.parametrize(("body", "message"), [
    ('[[cell]]\ntf = "2.21"\njax = "0.6"\n',
     f"{M}: cell[0]: key 'jax': jax names a release of Keras 3's jax backend; this cell runs TensorFlow; remove jax, "
     'or set backend = "jax" (and no tf)'),
    ('[[cell]]\nbackend = "jax"\ntorch = "2.6"\n',
     f"{M}: cell[0]: key 'torch': torch names a release of Keras 3's torch backend; this cell runs jax; remove torch, "
     'or set backend = "torch" (and no tf)'),
    ('[[cell]]\nbackend = "jax"\njax = "0.3"\n',
     f"{M}: cell[0]: key 'jax': jax 0.3 is not in the compatibility table (known: 0.4 (0.4.20-0.4.38), 0.5 "
     "(0.5.0-0.5.3), 0.6 (0.6.0-0.6.2), 0.7 (0.7.0-0.7.2), 0.8 (0.8.0-0.8.3), 0.9 (0.9.0-0.9.2), 0.10 "
     '(0.10.0-0.10.2)); use jax = "0.10" or another known release, or add a [[backend.jax.release]] row to '
     "tfmatrix/data/releases.toml"),
    ('[[cell]]\nbackend = "jax"\njax = "0.6.7"\n',
     f"{M}: cell[0]: key 'jax': jax 0.6.7 is not in the compatibility table (known: 0.4 (0.4.20-0.4.38), 0.5 "
     "(0.5.0-0.5.3), 0.6 (0.6.0-0.6.2), 0.7 (0.7.0-0.7.2), 0.8 (0.8.0-0.8.3), 0.9 (0.9.0-0.9.2), 0.10 "
     '(0.10.0-0.10.2)); use jax = "0.10" or another known release, or add a [[backend.jax.release]] row to '
     "tfmatrix/data/releases.toml"),
    ('[[cell]]\nbackend = "torch"\nkeras = "3.10.0"\ntorch = "2.1"\npython = "3.12"\n',
     f"{M}: cell[0]: key 'python': torch 2.1.2 has no wheels for Python 3.12 (its newest: 3.11); use python = "
     '"3.11" or an older one, or a newer torch'),
    ('[[cell]]\nbackend = "jax"\njax = "0.7"\npython = "3.10"\nkeras = "3.10.0"\n',
     f"{M}: cell[0]: key 'python': jax 0.7.2 needs Python >= 3.11, not 3.10; use python = \"3.11\" or newer"),
    ('[[cell]]\nbackend = "jax"\njax = "0.5"\n',
     f"{M}: cell[0]: key 'jax': Keras 3.15.1's CI tests jax >= 0.6.0, not 0.5.3; use jax = \"0.6\" or newer, or set "
     "allow_untested = true to run it untested"),
    ('[[cell]]\nbackend = "jax"\njax = 0.6\n',
     f"{M}: cell[0]: key 'jax': expected a string, got a float (0.6); quote it: jax = \"0.6\" (unquoted, TOML reads "
     "a version as a number: 3.10 is 3.1)"),
    ('[[cell]]\npython = "/usr/bin/python3"\njax = "0.6"\ntorch = "2.6"\n',
     f"{M}: cell[0]: key 'torch': an existing environment holds one Keras 3 backend: name the release of one, jax "
     "or torch; remove torch or jax"),
])  # fmt: skip
def test_impossible_backend_releases_are_one_line_errors(error_of: ErrorOf, body: str, message: str) -> None:
    assert error_of(body) == message


# --------------------------------------------------------------------------- the table, as data


@pytest.mark.parametrize("pair", ROWS, ids=_id)
def test_each_row_is_well_formed(pair: tuple[str, BackendRelease]) -> None:
    name, row = pair
    assert row.patches == tuple(sorted(row.patches, key=version_key)) and len(set(row.patches)) == len(row.patches)
    assert all(minor_series(p) == row.minor for p in row.patches)
    assert version_key(row.python[0]) <= version_key("3.11") <= version_key(row.python[1])   # the cells' Python
    for target in ("cpu", "gpu"):
        lines = row.lines(target, row.newest)
        assert lines and all(row.newest in line and "{" not in line for line in lines)
    assert row.source and row.cuda and row.cudnn


def test_the_default_releases_are_rows_and_the_rows_are_in_order() -> None:
    for name, backend in K3.pinned.items():
        assert backend.release(backend.version) is not None, name
        minors = [r.minor for r in backend.releases]
        assert minors == sorted(minors, key=version_key), name
    jax, torch = K3.pinned["jax"], K3.pinned["torch"]
    assert len(jax.releases) >= 5 and len(torch.releases) >= 4
    assert torch.release("2.13") is not None and torch.release("2.13").lines("gpu", "2.13.0") == ("torch===2.13.0",)  # type: ignore[union-attr]
    assert jax.exact("0.9") == "0.9.2" and jax.release("0.9.0.1") is not None and jax.release("0.4.32") is None


@pytest.mark.slow
def test_every_row_resolves_from_pypi_for_a_cpu_cell(tmp_path: Path) -> None:
    """pip resolves each row's newest patch, with its dependencies, for a Python 3.11 CPU cell (metadata only; needs
    PyPI). A torch row resolves its CUDA wheels too: PyPI's Linux torch is the CUDA build."""
    def resolve(pair: tuple[str, BackendRelease]) -> str | None:
        name, row = pair
        report = tmp_path / f"{name}{row.minor}.json"
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                               "--python-version", "3.11", "--only-binary=:all:", "--target", str(tmp_path / name),
                               "--report", str(report), *row.lines("cpu", row.newest)],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return f"{name} {row.newest}: {proc.stderr.strip().splitlines()[-1:]}"
        installs = json.loads(report.read_text())["install"]
        got = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in installs}
        return None if got.get(name, "").startswith(row.newest) else f"{name} {row.newest}: resolved {got.get(name)}"

    with ThreadPoolExecutor(8) as pool:        # pip waits on PyPI: eight at once
        failed = [f for f in pool.map(resolve, ROWS) if f]
    assert not failed, failed


# --------------------------------------------------------------------------- timeline and bisect axes


def test_a_backend_axis_walks_the_releases_one_keras_is_tested_on() -> None:
    from tfmatrix.history.axis import minor_steps, release_axis
    from tfmatrix.history.timeline import minor_releases

    jax = release_axis("jax", None, "")          # from the table's oldest: the newest Keras whose CI tests it
    assert jax.keras == "3.10.0" and jax.what == "JAX (under Keras 3.10.0)"
    assert minor_releases(jax) == ["0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.10"]
    newer = release_axis("jax", None, "0.6")
    assert newer.keras == K3.newest and minor_releases(newer)[0] == "0.6"
    assert minor_steps(newer, newer.exact("0.6", "--from"), newer.exact("0.10", "--to")) == [
        "0.6.2", "0.7.2", "0.8.3", "0.9.2", "0.10.2"]
    assert newer.spec("0.7.2") == {"backend": "jax", "keras": K3.newest, "jax": "0.7.2", "target": "cpu"}
    torch = release_axis("torch", None, "", "3.15.1")
    assert minor_releases(torch)[0] == "2.6" and len(minor_releases(torch)) >= 4


@pytest.mark.parametrize(("args", "message"), [
    (("tf", None, "", "3.15.1"), "--keras: only with --axis jax or torch (the Keras 3 release the backend releases "
                                 "run under)"),
    (("jax", "2.16", "", None), "--tf: a jax cell installs no TensorFlow; use --keras for the Keras it runs under"),
    (("jax", None, "", "3.99.0"), "--keras 3.99.0: not a Keras 3 release in tfmatrix/data/releases.toml; use an "
                                  f"exact one like {K3.newest}"),
])  # fmt: skip
def test_a_backend_axis_is_refused_in_one_line(args: tuple[str, str | None, str, str | None], message: str) -> None:
    from tfmatrix.errors import UserError
    from tfmatrix.history.axis import release_axis

    with pytest.raises(UserError) as e:
        release_axis(*args)
    assert str(e.value) == message


def test_a_probe_reuses_only_a_cell_file_of_the_same_backend_release(tmp_path: Path) -> None:
    """Two probes under one Keras differ only in their backend release: an earlier file is reused for the one it
    measured (its fingerprint's jax version), never for the other."""
    from report_docs import results_doc

    from tfmatrix.analysis.cells import load_file
    from tfmatrix.history.axis import release_axis
    from tfmatrix.history.probes import probe_cell, same_stack
    from tfmatrix.matrix import Settings
    from tfmatrix.results.documents import SuiteResults
    from tfmatrix.results.store import CellOutcome, cell_document

    axis = release_axis("jax", None, "0.6")
    c06, c07 = (probe_cell(axis, v, Settings()) for v in ("0.6.2", "0.7.2"))
    assert not isinstance(c06, str) and not isinstance(c07, str)
    results = results_doc([])
    results["environment"]["tf"]["packages"] = {"jax": "0.6.2", "keras": K3.newest}
    path = tmp_path / f"{c06.name}.json"
    outcome = CellOutcome(c06.name, "ok", None, {"name": "venv"}, {}, SuiteResults.from_json(results, path))
    doc = cell_document(c06.to_dict(), outcome, {"preset": "quick", "only": [], "repeats": None, "suite": "x"})
    path.write_text(json.dumps(doc.to_json()))
    earlier = load_file(path)
    assert earlier.backend == "jax" and earlier.backend_version == "0.6.2"
    assert same_stack(earlier, c06) and not same_stack(earlier, c07)
    results["environment"]["tf"]["packages"]["jax"] = "0.6.2+cpu"       # a local label: the same release
    path.write_text(json.dumps(cell_document(c06.to_dict(), CellOutcome(
        c06.name, "ok", None, {"name": "venv"}, {}, SuiteResults.from_json(results, path)),
        {"preset": "quick", "only": [], "repeats": None, "suite": "x"}).to_json()))
    assert same_stack(load_file(path), c06)
