"""Helpers for the report tests: schema-valid synthetic cell documents, real ones from suite runs, and a tiny DOM.

Synthetic documents go through the same code the real ones do
(``suite.stats`` for record statistics, ``tfmatrix.results.store.cell_document``
for the cell wrapper, dumped as ``CellDoc.to_json``) and are checked against ``suite.schema``.
"""
from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from suite import stats
from suite.document import GPU_MISSING
from suite.schema import validate
from tfmatrix.results.archive import ARCHIVE_FORMAT, INDEX_FILE, KeptRun, Testbed, archive_dir, cell_dir
from tfmatrix.results.documents import SuiteResults
from tfmatrix.results.store import CellOutcome, cell_document, write_cell

ROOT = Path(__file__).resolve().parent.parent

KERAS = {
    "1": ({"api": "tf.keras", "flavour": "tf.keras (bundled)", "version": "2.2.4-tf"},
          {"api": "keras", "unavailable": "standalone keras 2.2.5 builds tf.placeholder graphs and cannot run with "
                                          "TF1 eager execution"}),
    "2": ({"api": "tf.keras", "flavour": "tf.keras (bundled)", "version": "2.2.4-tf"},
          {"api": "keras", "flavour": "keras 2.3.1 (standalone)", "version": "2.3.1"}),
}


def record(benchmark: str, params: dict[str, Any], samples: list[float] | None = None, status: str = "ok",
           reason: str | None = None, per_process: list[list[float]] | None = None, unstable_cv: float = 0.10,
           seed: str = "000") -> dict[str, Any]:
    """One suite record, statistics computed the suite's way.

    ``samples`` alone (six or more) are dealt to three processes, as the
    default three rounds would have measured them: a verdict needs replication.
    """
    from suite.schema import param_text  # the suite's own id formatting

    rid = benchmark + "[" + ",".join(f"{k}={param_text(v)}" for k, v in params.items()) + "]"
    if status != "ok":
        per_process, samples = [], []
    elif per_process is None:
        values = list(samples or [])
        per_process = [values[i::3] for i in range(3)] if len(values) >= 6 else [values]
    all_samples = stats.all_samples(per_process)
    return {
        "id": rid, "benchmark": benchmark, "seed": seed, "title": f"synthetic {benchmark}",
        "params": dict(params), "mode": params.get("mode", "eager"), "api": params.get("api", "tf.keras"),
        "status": status, "reason": reason, "unit": "s", "samples": all_samples, "per_process": per_process,
        "iterations": {"per_repeat": [10] * len(per_process), "repeats": [len(p) for p in per_process], "inner": 1,
                       "warmup_calls": [2] * len(per_process)},
        "stats": stats.summarize(all_samples) if status == "ok" else None,
        "between_process": stats.between_processes(per_process) if status == "ok" else None,
        "unstable": status == "ok" and stats.is_unstable(per_process, unstable_cv),
        "setup": {"build_s": [0.1] * len(per_process), "first_call_s": [0.2] * len(per_process)},
        "extra": {}, "info": {}, "peak_rss_mb": 200.0 if status == "ok" else None, "wall_s": 1.0,
    }


def results_doc(records: list[dict[str, Any]], tf: str = "2.0.4", target: str = "cpu", gpus: list[str] | None = None,
                cell: str = "local") -> dict[str, Any]:
    """A suite results document; a GPU target without GPUs comes out as the suite writes it (an error)."""
    gpus = list(gpus or [])
    tfk, keras = KERAS["1" if tf.startswith("1.") else "2"]
    doc: dict[str, Any] = {
        "schema": "tfmatrix.results", "schema_version": 1, "suite_version": "1.0.0", "status": "ok", "error": None,
        "preset": "quick",
        "config": {"only": [], "processes": 1, "budget": {}, "timeout_s": 180.0, "unstable_cv": 0.1,
                   "variants_planned": len(records)},
        "cell": {"name": cell, "target": target, "image": None, "runner": "venv"},
        "environment": {
            "host": {"python": {"version": "3.7.16", "implementation": "CPython", "executable": "/x/python"},
                     "platform": "Linux-x86_64", "cpu": {"model": "Test CPU", "flags": {"avx": True, "avx2": True,
                                                                                       "avx512f": False},
                                                         "logical_cpus": 2, "usable_cpus": 2},
                     "env": {}, "nvidia_smi": None},
            "tf": {"tensorflow": {"version": tf, "git_version": f"v{tf}-0-gabc"},
                   "keras": {"tf.keras": tfk, "keras": keras}, "numpy": "1.18.5",
                   "threads": {"intra_op": 0, "inter_op": 0},
                   "build_info": {"is_cuda_build": target == "gpu", "cuda_version": "10.0" if target == "gpu" else None,
                                  "cudnn_version": "7" if target == "gpu" else None},
                   "gpus_visible": gpus, "gpu_error": None, "onednn": False, "packages": {}, "import_s": 1.0},
        },
        "gpu": {"requested": target == "gpu", "visible": gpus, "ok": True},
        "warnings": [], "started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:01:00+00:00",
        "wall_s": 60.0, "records": records,
    }
    if target == "gpu" and not gpus:
        doc.update(status="error", error=GPU_MISSING, records=[])
        doc["gpu"]["ok"] = False
        doc["warnings"].append(GPU_MISSING)
    unstable = [r for r in records if r.get("unstable")]
    if unstable and doc["status"] == "ok":
        doc["warnings"].append(f"{len(unstable)} of {len(records)} variants are unstable (CV above 10%)")
    problems = validate(doc)
    assert not problems, problems
    return doc


def cell_doc(name: str, tf: str, status: str = "ok", results: dict[str, Any] | None = None, target: str = "cpu",
             reason: str | None = None, log_tail: str = "", python: str = "3.7",
             runner: dict[str, Any] | None = None) -> dict[str, Any]:
    cell = {"name": name, "tf": tf, "tf_release": tf, "python": python, "target": target, "preset": "quick",
            "keras": {"flavour": "keras", "version": "2.3.1"}}
    typed = None if results is None else SuiteResults.from_json(results, Path(f"{name}.json"))
    outcome = CellOutcome(name, status, reason, runner or {"name": "venv"}, {"run_s": 1.0}, typed, log_tail)
    return cell_document(cell, outcome, {"preset": "quick", "only": [], "repeats": None,
                                         "suite": "0123abcd"}).to_json()


def write_interleaved_cell(out: Path, records: list[dict[str, Any]], name: str, rounds: int, seed: int,
                           runner: str = "venv", **config: Any) -> Path:
    """A cell file of an interleaved run of ``rounds`` rounds holding ``records`` (``config``: more of its config)."""
    doc = results_doc(records, tf="2.15.1", cell=name)
    doc["config"].update(rounds=rounds, schedule={"kind": "interleaved", "run": f"run-{seed}", "seed": seed}, **config)
    results = SuiteResults.from_json(doc, Path(f"{name}.json"))
    write_cell(out, cell_document({"name": name, "tf": "2.15", "target": "cpu", "preset": "seed"},
                                  CellOutcome(name, "ok", None, {"name": runner}, {"run_s": 1.0}, results),
                                  {"preset": "seed"}))
    return out


def write(cells_dir: Path, doc: dict[str, Any], filename: str | None = None) -> Path:
    cells_dir.mkdir(parents=True, exist_ok=True)
    path = cells_dir / (filename or f"{doc['name']}.json")
    path.write_text(json.dumps(doc))
    return path


def noisy(center: float, n: int = 9, spread: float = 0.02, seed: int = 0) -> list[float]:
    """Deterministic samples around ``center`` (relative spread ``spread``)."""
    import random

    rnd = random.Random(seed)
    return [center * (1 + rnd.uniform(-spread, spread)) for _ in range(n)]


def training_params(model: str = "small", loop: str = "train_on_batch", input: str = "numpy",
                    api: str = "tf.keras", mode: str = "eager") -> dict[str, Any]:
    return {"model": model, "data": "question", "batch_shape": [8, 40, 16], "width": 0.125, "loop": loop,
            "input": input, "api": api, "mode": mode}


def synthetic_matrix(cells_dir: Path) -> dict[str, Path]:
    """Five cells: TF 1.15 and TF 2.0 and TF 2.10 CPU (ok), a failed CPU cell, a skipped GPU cell,
    and a GPU cell whose results show no GPU. File names do not sort in TF order on purpose."""
    paths = {}
    # TF 1.15: graph 2 ms, eager 4 ms; keras n/a (TF1 eager limitation)
    recs = []
    for mode, t in (("eager", 0.004), ("graph", 0.002)):
        recs.append(record("training.question", training_params(mode=mode), noisy(t, seed=1)))
        recs.append(record("training.question", training_params(mode=mode, loop="fit"), noisy(t * 1.5, seed=2)))
        recs.append(record("training.question", training_params(mode=mode, api="keras"), status="n/a",
                           reason=KERAS["1"][1]["unavailable"]))
    paths["tf1.15"] = write(cells_dir, cell_doc("tf1.15-cpu", "1.15", results=results_doc(recs, tf="1.15.0")),
                            "z-tf1.15-cpu.json")
    # TF 2.0: everything 2x slower than TF 1.15; standalone keras 3 ms eager; one unstable variant
    recs = []
    for mode, t in (("eager", 0.008), ("graph", 0.004)):
        recs.append(record("training.question", training_params(mode=mode), noisy(t, seed=3)))
        recs.append(record("training.question", training_params(mode=mode, loop="fit"),
                           noisy(t * 1.5, seed=4, spread=0.6 if mode == "graph" else 0.02)))
        recs.append(record("training.question", training_params(mode=mode, api="keras"), noisy(0.003, seed=5)))
    paths["tf2.0"] = write(cells_dir, cell_doc("tf2.0-cpu", "2.0", results=results_doc(recs, tf="2.0.4")),
                           "a-tf2.0-cpu.json")
    # TF 2.10: like TF 2.0 but keras is the same package as tf.keras
    recs = []
    for mode, t in (("eager", 0.006), ("graph", 0.004)):
        recs.append(record("training.question", training_params(mode=mode), noisy(t, seed=6)))
        recs.append(record("training.question", training_params(mode=mode, loop="fit"), noisy(t * 1.5, seed=7)))
        recs.append(record("training.question", training_params(mode=mode, api="keras"), status="n/a",
                           reason="standalone keras is the same package as tf.keras here (keras 2.10.0)"))
    paths["tf2.10"] = write(cells_dir, cell_doc("tf2.10-cpu", "2.10", results=results_doc(recs, tf="2.10.1"),
                                                python="3.9"), "b-tf2.10-cpu.json")
    paths["tf2.9"] = write(cells_dir, cell_doc(
        "tf2.9-cpu", "2.9", status="failed", python="3.9",
        reason="pip could not install the cell's wheels: No matching distribution found for tensorflow-cpu==2.9.3",
        log_tail="Looking in links: /wheels\nERROR: Could not find a version that satisfies the requirement "
                 "tensorflow-cpu==2.9.3\nERROR: No matching distribution found for tensorflow-cpu==2.9.3"))
    paths["gpu-skipped"] = write(cells_dir, cell_doc(
        "tf2.10-gpu", "2.10", status="skipped", target="gpu", python="3.9", runner={"name": "docker"},
        reason="the Docker engine has no NVIDIA runtime (install the NVIDIA Container Toolkit); a GPU cell is "
               "never run on the CPU instead"))
    gpu_results = results_doc([], tf="2.0.4", target="gpu", gpus=[])
    paths["gpu-nogpu"] = write(cells_dir, cell_doc(
        "tf2.0-gpu", "2.0", status="failed", target="gpu", results=gpu_results, reason=GPU_MISSING,
        runner={"name": "docker", "image": "tfmatrix/cell-tf2.0-gpu:0123abcd", "image_id": "sha256:" + "ab" * 32},
        log_tail="[suite] fingerprint (importing TensorFlow)\n[suite] ERROR: " + GPU_MISSING))
    return paths


# -- real results --------------------------------------------------------------

def run_suite(python: str, out: Path, cell: str, only: list[str], target: str = "cpu",
              timeout: float = 900) -> tuple[dict[str, Any] | None, str, int]:
    """Run the suite in a cell's interpreter; (results or None, log, exit code)."""
    cmd = [python, "-m", "suite", "run", "--preset", "quick", "--out", str(out), "--cell", cell, "--target", target,
           "--runner", "venv"]
    for pattern in only:
        cmd += ["--only", pattern]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(out.parent), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(cmd, cwd=out.parent, env=env, capture_output=True, text=True, timeout=timeout)
    results = json.loads(out.read_text()) if out.exists() else None
    return results, proc.stdout + proc.stderr, proc.returncode


# -- a tiny DOM over html.parser -------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    def iter(self) -> Any:
        for c in self.children:
            if isinstance(c, Node):
                yield c
                yield from c.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        out = []
        for n in self.iter():
            if tag and n.tag != tag:
                continue
            if cls and cls not in n.classes:
                continue
            if any(n.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            out.append(n)
        return out

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag} class={cls} {attrs}>"
        return found[0]

    def by_id(self, ident: str) -> Node:
        return self.find(id=ident)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.cur.children.append(Node(tag, {k: v or "" for k, v in attrs}, self.cur))

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.cur = node.parent

    def handle_data(self, data: str) -> None:
        self.cur.children.append(data)


def parse_html(text: str) -> Node:
    b = _Builder()
    b.feed(text)
    b.close()
    return b.root


def table_rows(table: Node) -> tuple[list[str], list[list[Node]]]:
    """(header texts, body rows as lists of <td> nodes)."""
    head = [" ".join(th.text.split()) for th in table.find("thead").find_all("th")]
    rows = [tr.find_all("td") for tr in table.find("tbody").find_all("tr")]
    return head, rows


def kept_run(cell: str, run: str, variances: dict[str, tuple[float, float]], n: int = 0,
             means: dict[str, tuple[float, float]] | None = None, rounds: int = 2) -> KeptRun:
    """An archive index entry (``results.archive.KeptRun``) of one cell's run, the ``n``-th kept, with its variants'
    variances (and means: each variant's own, else a zero mean of ``rounds`` rounds)."""
    digest = f"{n + 1:016x}"
    means = means if means is not None else {vid: (0.0, 0.001) for vid in variances}
    return KeptRun(cell, run, f"2026-11-{n % 28 + 1:02d}T{n // 28:02d}0000", digest,
                   Testbed("test cpu", "2", "24", (), "linux"), "request", 0.01, means, {},
                   f"{cell_dir(cell)}/undated-{digest}.json.gz", 1, "", {}, {vid: rounds for vid in means}, variances)


def write_archive(reports: Path, runs: list[KeptRun]) -> None:
    """The run archive's index in ``reports/runs`` naming ``runs`` (their cell files are not written: readers of the
    index alone, such as the noise history, need none)."""
    doc = {"schema": ARCHIVE_FORMAT.schema, "schema_version": ARCHIVE_FORMAT.version,
           "runs": [r.to_json() for r in runs]}
    archive_dir(reports).mkdir(parents=True, exist_ok=True)
    (archive_dir(reports) / INDEX_FILE).write_text(json.dumps(doc))
