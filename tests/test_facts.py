"""A cell's facts are read once: ``analysis/facts.py`` types them where the cell is loaded, and nothing else reads
the dictionaries they came from.

The suite's view of TF and the host, the matrix's spec, the runner's notes and
the host summary used to stay open beside their records and were read by hand
in the report, the hardware and device groups and bisect; a second reader
could disagree with the first on a default. The AST check below fails with the
module and line of any new such read; the parsing tests pin each default to
what the page printed before there were records (the golden report holds the
bytes).
"""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

from report_docs import cell_doc, results_doc, write
from test_imports import ROOT

from tfmatrix.analysis.cells import CellResult, load_file
from tfmatrix.analysis.facts import CellFacts, CellSpec, HostFacts, HostSummary, RunnerInfo, TfFacts
from tfmatrix.analysis.hardware import cpu_model, gpu_model
from tfmatrix.history.bisect import package_diff
from tfmatrix.report.environment_view import env_row
from tfmatrix.results.documents import CellDoc

PARSER = "tfmatrix/analysis/facts.py"
RAW = ("tf_facts", "host_facts", "cell_spec", "runner_info")     # the raw dictionaries' accessors
DOC_RAW = ("cell", "runner", "host")                                # a cell document's raw parts: ``c.doc.cell``
# where ``SuiteResults`` keeps the suite's facts: read only by its own accessors (``tf_facts``, ``host_facts``)
ENVIRONMENT = ("environment", "tfmatrix/results/documents.py")


def raw_reads(source: str, where: str) -> list[str]:
    """Every read of the raw facts in ``source``: ``x.tf_facts`` (and the other ``RAW``), ``x.doc.cell`` (and the
    other ``DOC_RAW``), ``x.environment`` outside the document that defines it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        if (node.attr in RAW or (node.attr in DOC_RAW and isinstance(node.value, ast.Attribute)
                                 and node.value.attr == "doc")
                or (node.attr == ENVIRONMENT[0] and where != ENVIRONMENT[1])):
            found.append(f"{where}:{node.lineno} .{node.attr}")
    return found


def test_no_module_but_the_parser_reads_a_cells_raw_facts() -> None:
    found = []
    for path in sorted((ROOT / "tfmatrix").rglob("*.py")):
        where = str(path.relative_to(ROOT))
        if where != PARSER:
            found += raw_reads(path.read_text(encoding="utf-8"), where)
    assert found == [], f"read the records of {PARSER} (CellResult.facts) instead: " + "; ".join(found)


def test_the_check_sees_a_raw_read() -> None:
    assert raw_reads("cpu = c.host_facts.get('cpu')", "x.py") == ["x.py:1 .host_facts"]
    assert raw_reads("pool = c.doc.cell.get('pool')", "x.py") == ["x.py:1 .cell"]
    assert raw_reads("tf = c.results.environment['tf']", "x.py") == ["x.py:1 .environment"]
    assert raw_reads("name = doc_a.cell; pool = c.facts.spec.pool", "x.py") == []


def test_a_cell_result_shows_no_raw_dictionary(tmp_path: Path) -> None:
    names = {f.name for f in dataclasses.fields(CellResult)}
    cell = load_file(write(tmp_path, cell_doc("tf2.0-cpu", "2.0.4", results=results_doc([]))))
    for name in RAW:
        assert name not in names and not hasattr(CellResult, name) and not hasattr(cell, name), name


# --------------------------------------------------------------------------- parsing: each default as printed


def test_absent_facts_are_the_records_defaults() -> None:
    facts = CellFacts.of(CellDoc())
    assert facts == CellFacts()
    assert (TfFacts.of({}), HostFacts.of({}), CellSpec.of({}), RunnerInfo.of({}), HostSummary.of({})) == (
        TfFacts(), HostFacts(), CellSpec(), RunnerInfo(), HostSummary())
    tf, host = facts.tf, facts.host
    assert not tf.reported and tf.numpy is None and tf.onednn is None and dict(tf.packages) == {}
    assert not tf.threads.reported and not tf.build.is_cuda_build and tf.build.cuda_version is None
    assert tf.keras.unavailable is None and tf.keras_seen == tf.tf_keras
    assert not host.reported and not host.cpu.reported and host.nvidia_smi == "" and host.gpu_names == ()
    assert facts.spec.pool == "" and dict(facts.spec.env) == {} and facts.spec.without(()) == {}


def test_a_cell_without_results_prints_nothing_it_did_not_see(tmp_path: Path) -> None:
    cell = load_file(write(tmp_path, cell_doc("tf2.0-cpu", "2.0.4", status="skipped", reason="not today")))
    row = env_row(cell)
    assert {k: row[k] for k in ("cuda_built", "gpus", "nvidia_smi", "cpu", "onednn", "threads", "numpy",
                                "image", "image_id", "base", "platform", "keras_why", "tf_keras")} == dict.fromkeys(
        ("cuda_built", "gpus", "nvidia_smi", "cpu", "onednn", "threads", "numpy", "image", "image_id", "base",
         "platform", "keras_why", "tf_keras"), "")
    assert (row["python"], row["keras"], row["runner"]) == ("3.7", "keras 2.3.1", "venv")
    assert cpu_model(cell) == (cell.facts.host_summary.cpu or "?")      # this host, where the suite saw none


def test_a_cpu_cell_prints_its_facts_as_the_suite_wrote_them(tmp_path: Path) -> None:
    results = results_doc([], tf="2.0.4")
    results["environment"]["tf"]["threads"] = {"intra_op": 4}             # inter_op not reported: printed None
    results["environment"]["tf"]["packages"] = {"numpy": "1.18.5", "tensorflow": "2.0.4"}
    cell = load_file(write(tmp_path, cell_doc("tf2.0-cpu", "2.0.4", results=results)))
    row = env_row(cell)
    assert (row["cuda_built"], row["numpy"], row["onednn"], row["threads"]) == (
        "CPU-only build", "1.18.5", "off", "intra 4 / inter None")
    assert (row["cpu"], row["cpu_flags"], row["python"], row["platform"], row["gpus"]) == (
        "Test CPU (2 logical CPUs)", "avx avx2", "3.7.16", "Linux-x86_64", "none")
    assert (cpu_model(cell), gpu_model(cell)) == ("Test CPU", None)
    other = load_file(write(tmp_path, cell_doc("tf2.1-cpu", "2.1.0", results=results_doc([], tf="2.1.0"))))
    assert package_diff(cell, other) == [("numpy", "1.18.5", "-"), ("tensorflow", "2.0.4", "-")]
    assert package_diff(cell, None) == package_diff(cell, other)


def test_a_gpu_cells_nvidia_smi_is_one_line_and_its_models(tmp_path: Path) -> None:
    h100 = {"name": "NVIDIA H100 80GB HBM3", "driver_version": "550.54", "memory": "81559 MiB"}
    results = results_doc([], tf="2.15.1", target="gpu", gpus=["/physical_device:GPU:0", "/physical_device:GPU:1"])
    results["environment"]["host"]["nvidia_smi"] = {"gpus": [h100, h100], "driver_version": "550.54", "rc": 0}
    doc = cell_doc("tf2.15-gpu", "2.15.1", results=results, target="gpu",
                   runner={"name": "docker", "image": "tfmatrix/tf2.15-gpu:abc", "image_id": "sha256:0123",
                           "base": "nvidia/cuda:12.2"})
    cell = load_file(write(tmp_path, doc))
    assert cell.facts.host.gpu_names == ("NVIDIA H100 80GB HBM3",) * 2 and gpu_model(cell) == "NVIDIA H100 80GB HBM3"
    row = env_row(cell)
    assert row["nvidia_smi"] == f"gpus={[h100, h100]}, driver_version=550.54, rc=0"
    assert (row["cuda_built"], row["gpus"], row["gpu_problem"]) == (
        "10.0/7", "/physical_device:GPU:0, /physical_device:GPU:1", None)
    assert (row["image"], row["image_id"], row["base"], row["runner"]) == (
        "tfmatrix/tf2.15-gpu:abc", "sha256:0123", "nvidia/cuda:12.2", "docker")


def test_a_keras_the_suite_could_not_import_is_na_with_its_reason(tmp_path: Path) -> None:
    results = results_doc([], tf="2.0.4")
    results["environment"]["tf"]["keras"]["keras"] = {"api": "keras", "unavailable": "No module named 'keras'"}
    cell = load_file(write(tmp_path, cell_doc("tf2.0-cpu", "2.0.4", results=results)))
    assert cell.facts.tf.keras == TfFacts.of({"keras": {"keras": {"unavailable": "No module named 'keras'"}}}).keras
    row = env_row(cell)
    assert (row["keras"], row["keras_why"]) == ("n/a", "No module named 'keras'")


def test_the_spec_keeps_every_key_for_the_stack_comparison_only() -> None:
    raw: dict[str, Any] = {"name": "a", "pool": "h100", "requirements": ["x==1"], "env": {"OMP_NUM_THREADS": 1},
                           "base": {"ref": "python:3.11"}, "backend": "jax", "cuda": "12.2"}
    spec = CellSpec.of(raw)
    assert (spec.pool, dict(spec.env), spec.base_ref, spec.backend, spec.cuda, spec.cudnn) == (
        "h100", {"OMP_NUM_THREADS": "1"}, "python:3.11", "jax", "12.2", None)
    kept = spec.without(("name", "pool"))
    assert kept == {k: v for k, v in raw.items() if k not in ("name", "pool")}
    kept["requirements"] = []
    assert spec.without(("name", "pool"))["requirements"] == ["x==1"]       # a fresh dict each time
