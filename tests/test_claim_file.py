"""Claims as data: the built-in families and a user's own claims read from TOML, checked, refused in one line.

The seeds' thirteen are records of ``tfmatrix/data/claims/seeds.toml`` (the
golden report, byte for byte, shows they are the claims they were); today's
questions are ``today.toml``. A user writes the same tables in the matrix
file or in a claims file it names; a bad one is refused in one line with exit
code 2 before anything is built (``validate`` and ``matrix`` alike), and a
good one reaches the grid, the Claims section, ``claims.csv``, ``explain
--claim`` and ``bisect --claim`` exactly as a seed's does.
"""
from __future__ import annotations

import csv
import dataclasses
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

from tfmatrix.analysis.claims.files import (
    BUILTIN,
    builtin,
    every_builtin,
    family_labels,
    parse_document,
    questions,
)
from tfmatrix.analysis.claims.records import NOT_A, SEEDS, CellMatch, web_link
from tfmatrix.analysis.claims.sources import cell_view, own_claims
from tfmatrix.commands.claims import claims_of
from tfmatrix.errors import UserError
from tfmatrix.matrix import load
from tfmatrix.report.build import build

ROOT = Path(__file__).resolve().parent.parent
GENERATED = "2026-01-02T03:04:05+00:00"
CELLS = '''
[[cell]]
tf = "2.15"

[[cell]]
tf = "2.21"

[[cell]]
backend = "jax"
'''
OWN = '''
[[claim]]
key = "predict_overhead_mine"
source = "my-team/notes#12"
claim = "predict() costs more per call than model(x) on our tiny model."
a = "predict()"
b = "model(x)"
faster = "b"
overhead = true
figure = "2 ms vs 0.2 ms a call"

[[claim.compare]]
benchmarks = ["inference.tiny"]
a = { path = "predict", stage = "compiled", api = "tf.keras", mode = "eager" }
b = { path = "call", stage = "compiled", api = "tf.keras", mode = "eager" }
'''


def test_the_built_in_families_load_with_unique_keys_the_seeds_first() -> None:
    seeds, today = builtin([SEEDS]), builtin(["today"])
    assert len(seeds) == 13 and {c.family for c in seeds} == {SEEDS}
    assert {c.seed for c in seeds} == {"000", "001", "002", "003", "004"}
    assert len(today) >= 5 and {c.family for c in today} == {"today"}
    keys = [c.key for c in every_builtin()]
    assert len(keys) == len(set(keys)) and keys[:13] == [c.key for c in seeds]
    assert list(family_labels(every_builtin())) == list(BUILTIN)
    # every question of today's family states its source, its link and what the source said
    assert all(c.seed and c.source_url.startswith("https://github.com/") and c.seed_figure for c in today)
    assert all(web_link(c.source_url) for c in every_builtin() if c.source_url)
    # ... and is about Keras 3 cells only: the default's TF 1.x and Keras 2 cells are never asked it
    keras2 = cell_view(load(ROOT / "matrix.toml").cell("tf2.15-cpu"))
    assert not any(c.concerns(keras2) for c in today)
    assert any(c.expect == NOT_A for c in seeds) and builtin(["seeds", "today"]) == seeds + today


def test_a_built_in_family_is_found_by_its_file_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A family is a ``<name>.toml`` in ``tfmatrix/data/claims/``: nothing else lists it. The seeds' come first (the
    default), the others by name; the matrix's checks and ``--claims`` take the same tuple."""
    import tfmatrix.paths as paths
    from tfmatrix.matrix.records import CLAIM_FAMILIES

    assert CLAIM_FAMILIES == paths.claim_families() == ("seeds", "today") == BUILTIN
    for name in ("today", "nightly", "seeds", "another"):
        (tmp_path / f"{name}.toml").write_text("")
    (tmp_path / "notes.txt").write_text("")
    monkeypatch.setattr(paths, "CLAIMS_DIR", tmp_path)
    assert paths.claim_families() == ("seeds", "another", "nightly", "today")


def test_a_seed_claim_read_from_toml_is_the_record_the_report_uses() -> None:
    claim = next(c for c in builtin() if c.key == "tf1_faster_train_on_batch")
    assert claim.seed_cell == CellMatch("2.0", "2.3.1") and claim.ref_cell == CellMatch("1.14", "2.2.5")
    assert claim.cells == CellMatch(tf_major=2) and claim.origin == "seed 000"
    jax = next(c for c in builtin() if c.key == "tf_matmul_faster_than_np_dot").setups[1]
    assert jax.compare.backends == ("jax",) and dict(jax.compare.a) == {"api": "backend", "impl": "matmul",
                                                                      "mode": "eager"}
    assert jax.standin == "answered with jax.numpy.matmul on this JAX cell (no TensorFlow)"


def test_a_question_is_a_claim_with_no_side_expected() -> None:
    """``faster = "either"``; across cells a side may be ``{}`` (every configuration the cells share); ``across``
    pairs backends. The seeds' fourteen are such claims, in a file of their own (not a family a run asks)."""
    text = OWN.replace('faster = "b"', 'faster = "either"').replace("overhead = true", 'across = "backend"')
    text = text.replace('a = { path = "predict", stage = "compiled", api = "tf.keras", mode = "eager" }', "a = {}")
    _, (claim,) = parse_document(tomllib.loads(text), "mine.toml")
    assert claim.is_question and claim.across == "backend" and dict(claim.setups[0].compare.a) == {}
    assert claim.rule().startswith("a question: each line says predict() or model(x) is faster")
    asked = questions()
    assert len(asked) == 14 and all(q.is_question and q.family == "questions" for q in asked)
    assert {q.key for q in asked if q.ref_cell is not None} == {"tf2_vs_tf1", "tf2_eager_vs_tf1_graph"}
    assert [q.key for q in asked if q.across] == ["keras3_backends"] and asked[0].origin == "seed 000"
    assert "questions" not in BUILTIN and not {q.key for q in asked} & {c.key for c in every_builtin()}


def _matrix(tmp: Path, extra: str = "", claims_file: str | None = None) -> Path:
    text = extra + CELLS
    if claims_file is not None:
        (tmp / "claims.toml").write_text(claims_file)
        text = '[suite]\nclaims = ["claims.toml"]\n' + text
    (tmp / "matrix.toml").write_text(text)
    return tmp / "matrix.toml"


def test_a_users_claim_in_the_matrix_file_or_a_claims_file_is_the_same_record(tmp_path: Path) -> None:
    inline = own_claims(load(_matrix(tmp_path, OWN)))
    (tmp_path / "b").mkdir()
    filed = own_claims(load(_matrix(tmp_path / "b", claims_file="schema_version = 1\n" + OWN)))
    assert inline == filed and len(inline) == 1
    claim = inline[0]
    assert claim.family == "own" and claim.origin == "my-team/notes#12" and claim.overhead and claim.expect == "b"
    assert claims_of(load(tmp_path / "matrix.toml"), ["seeds"]) == builtin() + inline


BAD = [
    ("an unknown key", OWN.replace("overhead", "overhed"),
     "key 'overhed': unknown claim key; did you mean 'overhead'?"),
    ("no side said to be faster", OWN.replace('faster = "b"\n', ""), "key 'faster': missing"),
    ("a side that is not a or b", OWN.replace('faster = "b"', 'faster = "c"'), "'c' is not a side"),
    ("two claims, one key", OWN + OWN, "key 'key': is defined twice"),
    ("a built-in claim's key", OWN.replace("predict_overhead_mine", "predict_slower_after_compile"),
     "is defined twice"),
    ("a seed question's key", OWN.replace("predict_overhead_mine", "graph_vs_eager"), "is defined twice"),
    ("an unknown benchmark", OWN.replace('["inference.tiny"]', '["inference.tinny"]'),
     "no benchmark is named inference.tinny; did you mean inference.tiny?"),
    ("an unknown parameter", OWN.replace('a = { path = "predict"', 'a = { pth = "predict"'),
     "side a: inference.tiny has no parameter 'pth'"),
    ("a value no variant has", OWN.replace('a = { path = "predict"', 'a = { path = "predicts"'),
     "no variant of inference.tiny has path=predicts"),
    ("a side no cell can run", OWN.replace('api = "tf.keras", mode = "eager" }\nb', 'api = "tf.keras", mode = "eager" }'
                                            '\nbackends = ["jax"]\nb'),
     "no cell of the matrix can run both sides of any configuration (keras3-jax-cpu: side a: tf.keras needs "
     "TensorFlow"),
    ("cells no cell of the matrix is", OWN.replace('overhead = true', 'overhead = true\ncells = { tf = "1.15" }'),
     "no cell of the matrix is one it is about (TF 1.15)"),
    ("a margin without 'not a'", OWN.replace("overhead = true", "overhead = true\nmargin = 0.2"),
     'a margin belongs to faster = "not a"'),
    ("no configuration", OWN.split("[[claim.compare]]")[0], "key 'compare': missing"),
    ("an across that is not a backend", OWN.replace("overhead = true", 'overhead = true\nacross = "tf"'),
     "key 'across': 'tf' is not something cells differ in here; write across = \"backend\""),
    ("across beside against", OWN.replace("overhead = true", 'overhead = true\nacross = "backend"\n'
                                          'against = { backend = ["jax"] }'),
     "key 'across': across and against both name side b's cells"),
    ("an empty side within one cell", OWN.replace('b = { path = "call", stage = "compiled", api = "tf.keras", '
                                                  'mode = "eager" }', "b = {}"),
     "key 'b': expected a table of parameter values"),
    ("claim not a table array", 'claim = "fast"\n', "'claim' must be an array of tables"),
    # a claim's url is a link on the report and the published site: http(s) with a host, nothing else
    ("a javascript: url", OWN.replace("overhead = true", 'overhead = true\nurl = "javascript:alert(1)"'),
     "claim 'predict_overhead_mine': key 'url': 'javascript:alert(1)' is not an http(s) link; write url = "
     '"https://..."'),
    ("a data: url", OWN.replace("overhead = true", 'overhead = true\nurl = "data:text/html,<b>x</b>"'),
     "key 'url': 'data:text/html,<b>x</b>' is not an http(s) link"),
    ("a file: url", OWN.replace("overhead = true", 'overhead = true\nurl = "file:///etc/passwd"'),
     "key 'url': 'file:///etc/passwd' is not an http(s) link"),
    ("a url without a scheme", OWN.replace("overhead = true", 'overhead = true\nurl = "github.com/keras-team/k/1"'),
     "key 'url': 'github.com/keras-team/k/1' is not an http(s) link"),
]


@pytest.mark.parametrize("command", ["validate", "matrix"])
@pytest.mark.parametrize("what,text,words", BAD, ids=[b[0] for b in BAD])
@pytest.mark.slow
def test_a_bad_claim_is_one_line_exit_2_and_nothing_runs(tmp_path: Path, command: str, what: str, text: str,
                                                         words: str) -> None:
    _matrix(tmp_path, text)
    reports = tmp_path / "reports"
    argv = [command, "--matrix", "matrix.toml"] + (["--runner", "venv", "--reports", str(reports)]
                                                   if command == "matrix" else [])
    proc = subprocess.run([sys.executable, "-m", "tfmatrix", *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tfmatrix: error: matrix.toml: ") and words in err[0], err
    assert "Traceback" not in proc.stderr and not reports.exists()


BAD_FILES = [
    ("a claims file that is not there", None, '[suite]\nclaims = ["nope.toml"]\n', "nope.toml is not a .toml file"),
    ("a TOML syntax error", "[[claim]\n", '[suite]\nclaims = ["claims.toml"]\n', "claims.toml: TOML syntax error"),
    ("a newer schema", "schema_version = 2\n", '[suite]\nclaims = ["claims.toml"]\n',
     "schema_version': 2 is newer than this tfmatrix reads (1)"),
    ("a built-in family's name", 'family = "seeds"\n', '[suite]\nclaims = ["claims.toml"]\n',
     "'seeds' is a built-in family"),
    ("the questions' family name", 'family = "questions"\n', '[suite]\nclaims = ["claims.toml"]\n',
     "'questions' is a built-in family"),
    ("an unknown family asked", None, '[matrix]\nclaims = ["tody"]\n', "'tody' is not a claims family"),
    ("a javascript: url in a claims file", OWN.replace("overhead = true", 'overhead = true\nurl = "javascript:x()"'),
     '[suite]\nclaims = ["claims.toml"]\n', "claims.toml: claim 'predict_overhead_mine': key 'url': 'javascript:x()' "
     "is not an http(s) link"),
]


@pytest.mark.parametrize("what,claims,matrix,words", BAD_FILES, ids=[b[0] for b in BAD_FILES])
@pytest.mark.slow
def test_a_bad_claims_file_or_family_is_one_line_exit_2(tmp_path: Path, what: str, claims: str | None, matrix: str,
                                                        words: str) -> None:
    if claims is not None:
        (tmp_path / "claims.toml").write_text(claims)
    (tmp_path / "matrix.toml").write_text(matrix + CELLS)
    proc = subprocess.run([sys.executable, "-m", "tfmatrix", "validate", "--matrix", "matrix.toml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "tfmatrix", "matrix", "--claims", "tody", "--runner", "venv"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--claims: value: key 'claims': 'tody' is not a claims family" in proc.stderr


@pytest.mark.parametrize("url", ["https://github.com/keras-team/keras/issues/21851", "http://example.org/notes#12",
                                 "HTTPS://Example.org/a?b=c"])
def test_a_web_link_is_a_claims_url(url: str) -> None:
    assert web_link(url)
    table = {"claim": [{"key": "k", "claim": "c.", "a": "A", "b": "B", "faster": "b", "url": url, "compare": [{
        "benchmarks": ["inference.tiny"], "a": {"path": "predict"}, "b": {"path": "call"}}]}]}
    assert parse_document(table, "mine.toml")[1][0].source_url == url


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JavaScript:alert(1)", "java\tscript:alert(1)",
                                 " https://example.org/", "data:text/html;base64,PHNjcmlwdD4=", "file:///etc/passwd",
                                 "ftp://example.org/x", "github.com/x", "//github.com/x", "https://", "https:///x",
                                 "https://[::1"])
def test_anything_but_an_http_link_is_not_a_claims_url(url: str) -> None:
    assert not web_link(url)
    table = {"claim": [{"key": "k", "claim": "c.", "a": "A", "b": "B", "faster": "b", "url": url, "compare": [{
        "benchmarks": ["inference.tiny"], "a": {"path": "predict"}, "b": {"path": "call"}}]}]}
    with pytest.raises(UserError) as e:
        parse_document(table, "mine.toml")
    message = str(e.value)
    assert message.startswith("mine.toml: claim 'k': key 'url': ") and "is not an http(s) link" in message
    assert len(message.splitlines()) == 1 and message.endswith("or leave url out")


@pytest.mark.slow
def test_validate_counts_a_users_claims_beside_the_families(tmp_path: Path) -> None:
    _matrix(tmp_path, '[matrix]\nclaims = ["seeds", "today"]\n' + OWN)
    proc = subprocess.run([sys.executable, "-m", "tfmatrix", "validate", "--matrix", "matrix.toml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    n = len(every_builtin()) + 1
    assert proc.stdout.startswith(f"3 cells OK (0 warnings), {n} claims (seeds, today and 1 of your own); ")


@pytest.mark.slow
def test_a_users_claim_is_judged_in_the_grid_the_claims_and_claims_csv(tmp_path: Path) -> None:
    """On the golden run's real cells: a user's claim over variants they measured shows as a second family, its
    lines with their per-call cost; one over variants no cell measured says why, per cell."""
    with tarfile.open(ROOT / "tests" / "golden" / "default-matrix.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    mine = own_claims(load(_matrix(tmp_path, OWN)))
    unmeasured = parse_document({"claim": [{"key": "native_mine", "claim": "Keras is slower than native.", "a": "K",
                                            "b": "N", "faster": "b", "compare": [{
                                                "benchmarks": ["native.cnn"], "a": {"impl": "keras"},
                                                "b": {"impl": "native"}}]}]}, "mine.toml")[1]
    # made without the loader, a claim's javascript: url is still never a link; an https one is
    mine = (dataclasses.replace(mine[0], source_url="javascript:alert(1)"),)
    unmeasured = (dataclasses.replace(unmeasured[0], source_url="https://example.org/native#1"),)
    out = tmp_path / "out"
    summary = build(tmp_path / "cells", out, generated=GENERATED, own=mine + unmeasured)
    assert summary.claims_total == 15 and summary.claims_answered == 14
    [why] = summary.unanswered
    assert why.startswith("claim native_mine: no cell of this run answers it: tf1.14-keras2.2.5-cpu: not measured "
                          "in this run:") and "keras3-torch-cpu: not measured in this run" in why
    page = (out / "index.html").read_text()
    assert '<tr class="g-group"><th colspan="13">The seeds&#39; claims (2019-2021)</th></tr>' in page
    assert '<tr class="g-group"><th colspan="13">Your claims</th></tr>' in page
    assert 'id="claim-predict_overhead_mine"' in page and "more per call than model(x)" in page
    assert "javascript:" not in page and '<a href="https://example.org/native#1">' in page
    with open(out / "claims.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["claim"] == "predict_overhead_mine"]
    measured = [r for r in rows if r["ratio"]]
    assert measured and {r["seed"] for r in rows} == {"my-team/notes#12"}
    assert {r["cell"] for r in measured} >= {"tf2.15-cpu", "tf2.21-keras3-cpu"}


def test_explain_and_bisect_take_a_users_claim_by_its_key(tmp_path: Path) -> None:
    from tfmatrix.commands.explain import claim_sides
    from tfmatrix.history.targets import claim_target

    with tarfile.open(ROOT / "tests" / "golden" / "default-matrix.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    matrix = load(_matrix(tmp_path, OWN))
    (cell_a, id_a), (cell_b, id_b) = claim_sides("predict_overhead_mine", "tf2.15-cpu", str(tmp_path), matrix)
    assert cell_a.name == cell_b.name == "tf2.15-cpu" and "path=predict," in id_a and "path=call," in id_b
    target = claim_target("predict_overhead_mine", "seed", every_builtin() + own_claims(matrix))
    assert target.claim is not None and target.claim.family == "own"
    assert [v.split("[")[0] for v in target.variant_ids] == ["inference.tiny", "inference.tiny"]
    with pytest.raises(UserError, match="--claim predict_overhead_mie: no such claim; did you mean "
                                        "predict_overhead_mine"):
        claim_target("predict_overhead_mie", "seed", every_builtin() + own_claims(matrix))
