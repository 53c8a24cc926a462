"""The texts both halves share come from suite/schema.py, and the report's tables name what the suite lists.

A renamed benchmark or parameter in the catalogue would otherwise empty a finding,
chart or claim silently (it would say "cannot be answered yet" forever); these tests
list the catalogue the way a user does (``python -m suite list --json``, no TensorFlow)
and check every name and value the tables use against it.
"""
from __future__ import annotations

import fnmatch
import io
import json
import subprocess
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from suite import schema
from suite.definitions import PRESETS
from suite.run import Progress
from tfmatrix.analysis.chart_data import CHARTS
from tfmatrix.analysis.claims.files import every_builtin, questions
from tfmatrix.errors import UserError
from tfmatrix.matrix import KNOWN_PRESETS
from tfmatrix.progress import parse_suite_line

ROOT = Path(__file__).resolve().parent.parent


@cache
def catalogue() -> tuple[dict[str, Any], ...]:
    """Every variant of every preset, as ``python -m suite list --json`` prints them."""
    out: dict[str, dict[str, Any]] = {}
    for preset in schema.PRESET_NAMES:
        text = subprocess.run([sys.executable, "-m", "suite", "list", "--json", "--preset", preset], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout
        for v in json.loads(text):
            out[v["id"]] = v
    return tuple(out.values())


def _in(globs: tuple[str, ...] | str) -> list[dict[str, Any]]:
    globs = (globs,) if isinstance(globs, str) else globs
    return [v for v in catalogue() if any(fnmatch.fnmatchcase(v["benchmark"], g) for g in globs)]


def _problems(where: str, globs: tuple[str, ...] | str, spec: Mapping[str, Any]) -> list[str]:
    """Why ``spec`` can match no variant of ``globs``: a glob that lists nothing, a name or value the suite lacks."""
    variants = _in(globs)
    if not variants:
        return [f"{where}: no benchmark matches {globs}"]
    for g in (globs,) if isinstance(globs, str) else globs:
        if not _in(g):
            return [f"{where}: no benchmark matches {g!r}"]
    problems = []
    for name, want in spec.items():
        have = {schema.param_text(v["params"][name]) for v in variants if name in v["params"]}
        if not have:
            problems.append(f"{where}: no variant of {globs} has a parameter {name!r}")
            continue
        for value in want if isinstance(want, tuple) else (want,):
            if value not in have:
                problems.append(f"{where}: {name}={value!r} is not a value of {globs} (listed: {sorted(have)})")
    if not problems and not any(_matches(v["params"], spec) for v in variants):
        problems.append(f"{where}: no single variant of {globs} has all of {dict(spec)}")
    return problems


def _matches(params: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    return all(name in params and schema.param_text(params[name]) in (want if isinstance(want, tuple) else (want,))
               for name, want in spec.items())


def test_every_benchmark_and_parameter_a_question_compares_is_in_the_suite_list():
    problems = []
    for q in questions():
        for i, setup in enumerate(q.setups):
            cmp = setup.compare
            problems += _problems(f"questions.toml {q.key} compare[{i}] side a", cmp.benchmarks, cmp.a)
            problems += _problems(f"questions.toml {q.key} compare[{i}] side b", cmp.benchmarks, cmp.b)
    assert not problems, "\n".join(problems)


def test_every_chart_benchmark_and_fixed_parameter_is_in_the_suite_list():
    problems = []
    for c in CHARTS:
        problems += _problems(f"CHARTS {c.key}", c.benchmark, c.fixed)
    assert not problems, "\n".join(problems)


def test_every_claim_setup_and_size_parameter_is_in_the_suite_list():
    """Every built-in family's claims (the seeds', today's) against ``python -m suite list --json``."""
    problems = []
    for claim in every_builtin():
        for i, setup in enumerate(claim.setups):
            cmp = setup.compare
            problems += _problems(f"{claim.family} {claim.key} setup[{i}] side a", cmp.benchmarks, cmp.a)
            problems += _problems(f"{claim.family} {claim.key} setup[{i}] side b", cmp.benchmarks, cmp.b)
            names = {n for v in _in(cmp.benchmarks) for n in v["params"]}
            problems += [f"{claim.family} {claim.key}: size parameter {n!r} is not a parameter of {cmp.benchmarks}"
                         for n in claim.size if n not in names]
    assert not problems, "\n".join(problems)


def test_the_claims_checker_reads_the_suite_list_as_the_contract_test_does():
    """``checks.check_names`` (what refuses a user's claim) passes every built-in claim against the real
    catalogue and refuses a misspelt one, as the test above would."""
    import dataclasses

    from tfmatrix.analysis.claims.checks import Entry, check_names
    from tfmatrix.analysis.claims.specs import param_spec
    from tfmatrix.errors import UserError

    entries = [Entry(v["benchmark"], v["id"], v["params"]) for v in catalogue()]
    for claim in every_builtin():
        check_names(claim, entries, "built-in")
    claim = every_builtin()[0]
    cmp = claim.setups[0].compare
    typo = dataclasses.replace(claim, setups=(dataclasses.replace(
        claim.setups[0], compare=dataclasses.replace(cmp, a=param_spec(**{**cmp.a, "loop": "train_on_bach"}))),))
    with pytest.raises(UserError, match="no variant of training.question has loop=train_on_bach"):
        check_names(typo, entries, "claims.toml")


def test_a_renamed_parameter_is_caught():
    assert _problems("test", ("training.*",), {"mode": "graph"}) == []
    assert _problems("test", ("training.*",), {"modus": "graph"})
    assert _problems("test", ("training.*",), {"mode": "grpah"})
    assert _problems("test", ("trainnig.*",), {})


def test_the_preset_names_are_one_list_for_the_suite_the_matrix_and_the_cli():
    from tfmatrix.cli import build_parser

    assert tuple(PRESETS) == schema.PRESET_NAMES
    assert KNOWN_PRESETS == schema.PRESET_NAMES
    for name in schema.PRESET_NAMES:
        assert build_parser().parse_args(["matrix", "--preset", name]).preset == name
    with pytest.raises(UserError, match="invalid choice: 'nosuchpreset'"):
        build_parser().parse_args(["matrix", "--preset", "nosuchpreset"])


def test_the_host_parses_the_progress_line_the_suite_writes():
    out = io.StringIO()
    progress = Progress(3, out)
    progress({"status": "n/a", "id": "graphs.power[call=eager,api=tf,mode=eager]", "reason": "no Session in TF2"})
    progress({"status": "ok", "id": "inference.tiny[path=predict]", "samples": [0.002, 0.003]})
    first, second = out.getvalue().splitlines()
    assert parse_suite_line(first) == (1, 3, "n/a", "graphs.power[call=eager,api=tf,mode=eager]")
    assert parse_suite_line(second) == (2, 3, "ok", "inference.tiny[path=predict]")


@pytest.mark.parametrize("value, text", [(True, "true"), (False, "false"), ([8, 40, 16], "8x40x16"),
                                         ((1, 2), "1x2"), ("small", "small"), (0.5, "0.5"), (None, "None")])
def test_variant_ids_and_the_report_write_a_parameter_value_the_same_way(value, text):
    from tfmatrix.report.tables import param_text  # the report writes parameter values with the suite's function

    assert schema.param_text(value) == param_text(value) == text


def _worker_result(variant_id: str, samples: list[float]) -> dict[str, Any]:
    """One process's raw result for a variant, with every field ``suite.worker.run_window`` sends for an ok run."""
    return {"id": variant_id, "status": "ok", "reason": None, "info": {"params": 10}, "extra": {}, "build_s": 0.5,
            "first_call_s": 0.1, "unit": "s", "work_flops": 2e9, "window": "1:0", "samples": samples, "number": 20,
            "inner": 1, "repeats": len(samples), "warmup_calls": 2, "stopped": "repeats", "rounds": len(samples),
            "peak_rss_mb": 210.0, "wall_s": 3.0}


def test_a_record_the_suite_writes_has_the_keys_the_schema_declares_and_the_host_checks():
    from suite.definitions import Benchmark, Variant
    from suite.isolation import failure_record
    from suite.run import combine
    from tfmatrix.results.shapes import RECORD, problem

    bench = Benchmark()
    bench.name, bench.seed, bench.title = "contract.dense", "000", "a contract"
    variant = Variant(bench.name, bench.seed, (("batch", 8), ("mode", "eager")))
    measured = dict(_worker_result(variant.id, [0.002, 0.0021, 0.0019]), figures={"drift_pct_per_100_steps":
                                                                                   [0.4, "%/100 steps"]})
    ok = combine(variant, bench, [measured] * 2, PRESETS["quick"])
    assert ok["figures"] == {"drift_pct_per_100_steps": {"unit": "%/100 steps", "values": [0.4, 0.4]}}
    crashed = failure_record(variant.id, "error", "the worker died (signal 9)", "Traceback ...\nMemoryError")
    failed = combine(variant, bench, [_worker_result(variant.id, [0.002, 0.0021]), crashed], PRESETS["quick"])

    required, optional = set(schema.RECORD_KEYS), set(schema.RECORD_OPTIONAL_KEYS)
    for rec in (ok, failed):
        assert required <= set(rec) <= required | optional, sorted(set(rec) ^ required)
        assert set(rec["iterations"]) == set(schema.ITERATIONS_KEYS)
        assert set(schema.SCHEDULE_KEYS) <= set(rec["schedule"]) <= {*schema.SCHEDULE_KEYS,
                                                                     *schema.SCHEDULE_OPTIONAL_KEYS}
        assert schema.validate_record(rec) == []
        assert problem(rec, RECORD, "record") is None
    assert set(ok) | set(failed) == required | optional        # no key declared that the suite never writes
    assert "traceback" in failed and "traceback" not in ok and "figures" not in failed
    # the host's shape check declares exactly the suite's keys, at the top and inside schedule and iterations
    assert set(RECORD.keys) == set(schema.ALL_RECORD_KEYS)
    assert set(RECORD.keys["schedule"].keys) == {*schema.SCHEDULE_KEYS, *schema.SCHEDULE_OPTIONAL_KEYS}
    assert set(RECORD.keys["iterations"].keys) == set(schema.ITERATIONS_KEYS)
    # optional keys are still type-checked, by both halves
    assert schema.validate_record(dict(failed, traceback=5)) == ["record.traceback has type int"]
    assert problem(dict(ok, iterations={"inner": "x"}), RECORD, "r") == "field 'r.iterations.inner' is a string " \
                                                                         "('x'), expected a number"
    assert schema.validate_record(dict(ok, schedule={**ok["schedule"], "passes": [1, 2]})) == []


# --------------------------------------------------------------------------- the frameworks, named once
def _framework_copies(source: str) -> list[str]:
    """Where ``source`` spells the frameworks vocabulary (``schema.FRAMEWORKS``) again, instead of importing it.

    A copy is a tuple, list or set literal holding two or more backend names (``("jax", "torch")``,
    ``["tensorflow", "jax", "torch"]``) or a dict literal that gives a backend its display name
    (``{"jax": "JAX"}``).
    """
    import ast

    names, shown = set(schema.FRAMEWORKS), set(schema.FRAMEWORKS.values())

    def text(node: ast.AST | None) -> Any:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            spelt = {text(e) for e in node.elts} & names
            if len(spelt) >= 2:
                found.append(f"line {node.lineno}: the backends {sorted(spelt)} spelt out")
        elif isinstance(node, ast.Dict):
            pairs = {(text(k), text(v)) for k, v in zip(node.keys, node.values, strict=True)}
            named = any(k in names and schema.FRAMEWORKS[k] == v for k, v in pairs)
            if named or len({v for _, v in pairs} & shown) > 1:
                found.append(f"line {node.lineno}: the frameworks' display names spelt out")
    return found


def test_the_frameworks_are_named_once_in_the_schema():
    """No module of the suite or the host spells the backends or their display names but ``suite/schema.py``."""
    problems = []
    for path in sorted([*(ROOT / "suite").rglob("*.py"), *(ROOT / "tfmatrix").rglob("*.py")]):
        if path != ROOT / "suite" / "schema.py":
            problems += [f"{path.relative_to(ROOT)} {where}" for where in _framework_copies(path.read_text())]
    assert not problems, "import FRAMEWORKS / NO_TF_BACKENDS from suite.schema instead:\n" + "\n".join(problems)


@pytest.mark.parametrize("copy", ['BACKENDS = ("jax", "torch")', 'ok = backend in ["torch", "jax"]',
                                  'ORDER = ("tensorflow", "jax", "torch")', 'NAMES = {"jax": "JAX"}',
                                  'shown = dict(a="x", **{"x": "PyTorch", "y": "TensorFlow"})'])
def test_a_copied_framework_vocabulary_is_caught(copy):
    assert _framework_copies(copy)


def test_what_is_not_a_copy_of_the_vocabulary_passes():
    assert _framework_copies('ops = {"jax": jax_ops, "torch": torch_ops}\nif backend == "jax": pass\n'
                             'CALLS = {"jax": "jax.jit", "torch": "torch.compile"}\nx = ("tensorflow", "keras")') == []


def test_the_suite_and_the_host_read_the_schemas_frameworks():
    from suite.frameworks import framework
    from tfmatrix.matrix.releases import load_table

    assert schema.NO_TF_BACKENDS == ("jax", "torch")
    assert [framework(b) for b in schema.FRAMEWORKS] == ["TensorFlow", "JAX", "PyTorch"]
    # the compatibility table's Keras 3 backends are the suite's frameworks, in the same order
    assert load_table().keras3.backends == tuple(schema.FRAMEWORKS)


def test_the_sweeps_sizes_are_settings_the_suite_reads_and_devices_reads_back() -> None:
    """``tfmatrix sweep`` writes ``--set`` names the suite parses (``suite.schema.setting_target``), one per size axis
    the Devices section reads (``devices.SIZE_AXES``: the same parameter and element)."""
    from suite.schema import setting_target
    from tfmatrix.analysis.devices import SIZE_AXES
    from tfmatrix.analysis.sweep import WORK

    axes = {(a.param, a.index) for a in SIZE_AXES}
    for work in WORK.values():
        targets = [setting_target(name) for name in work.sets]
        assert targets and all(t is not None for t in targets), work.sets
        assert targets[0] in axes, (work.name, targets[0])
