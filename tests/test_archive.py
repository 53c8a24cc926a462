"""Every run kept (``results.archive``): written by each report build once per cell file, read back as it was,
pruned to its size budget oldest first, refused in one line when broken; the testbed each cell file names."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from report_docs import cell_doc, results_doc, synthetic_matrix
from series_runs import run_cell, run_series

from tfmatrix.analysis.cells import load_file
from tfmatrix.cli import main
from tfmatrix.errors import UserError
from tfmatrix.report.build import build
from tfmatrix.results import archive
from tfmatrix.results.archive import KeptRun, read_archive, within_budget
from tfmatrix.results.store import host_summary


def test_a_report_keeps_each_complete_cell_file_once_however_often_it_is_rebuilt(tmp_path: Path) -> None:
    paths = synthetic_matrix(tmp_path / "cells")
    build(tmp_path / "cells", tmp_path / "out")
    first = read_archive(tmp_path / "out")
    # three complete cells; the failed, the skipped and the GPU-less ones are not runs to keep
    assert sorted(r.cell for r in first.runs) == ["tf1.15-cpu", "tf2.0-cpu", "tf2.10-cpu"]
    build(tmp_path / "cells", tmp_path / "out")
    assert read_archive(tmp_path / "out").runs == first.runs
    kept = next(r for r in first.runs if r.cell == "tf2.0-cpu")
    assert archive.open_cell_file(tmp_path / "out", kept) == paths["tf2.0"].read_bytes()
    assert kept.means and all(len(v) == 2 for v in kept.means.values())
    assert kept.lines, "the claim lines' verdicts of the run"


def test_a_new_run_of_a_cell_is_added_beside_the_earlier_ones(tmp_path: Path) -> None:
    run_series(tmp_path, 3, lambda k, v: 1.0)
    runs = read_archive(tmp_path).runs
    assert [r.finished[:10] for r in runs] == ["2026-11-01", "2026-11-02", "2026-11-03"]
    assert len({r.digest for r in runs}) == 3 and len({r.request for r in runs}) == 1
    files = sorted(p.relative_to(tmp_path / "runs").as_posix() for p in (tmp_path / "runs").rglob("*.gz"))
    assert files == sorted(r.file for r in runs)
    assert json.loads(gzip.decompress((tmp_path / "runs" / runs[0].file).read_bytes()))["name"] == "tf2.15-cpu"


def _kept(cell: str, day: int, size: int) -> KeptRun:
    return KeptRun(cell, f"r{day}", f"2026-11-{day:02d}", f"{cell}-{day}", archive.Testbed(), "req", None, bytes=size)


def test_past_the_budget_the_oldest_go_first_and_each_cells_newest_stays() -> None:
    runs = [_kept("a", 1, 40), _kept("b", 2, 40), _kept("a", 3, 40), _kept("b", 4, 40)]
    kept, dropped = within_budget(runs, 90)
    assert [r.digest for r in dropped] == ["a-1", "b-2"]
    kept, dropped = within_budget(runs, 10)            # never a cell's newest, whatever the budget
    assert sorted(r.digest for r in kept) == ["a-3", "b-4"]


def test_the_budget_prunes_the_files_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_series(tmp_path, 2, lambda k, v: 1.0)
    one = read_archive(tmp_path).runs[-1].bytes
    monkeypatch.setenv("TFMATRIX_ARCHIVE_MB", str(1.5 * one / 1e6))
    run_cell(tmp_path / "cells", 2, lambda v: 1.0)
    build(tmp_path / "cells", tmp_path)
    runs = read_archive(tmp_path).runs
    assert [r.finished[:10] for r in runs] == ["2026-11-03"]
    assert len(list((tmp_path / "runs").rglob("*.gz"))) == 1


def test_a_bad_budget_and_a_broken_index_are_one_line_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TFMATRIX_ARCHIVE_MB", "lots")
    with pytest.raises(UserError, match="TFMATRIX_ARCHIVE_MB='lots': expected a positive number"):
        archive.budget_bytes()
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "index.json").write_text('{"schema": "tfmatrix.run-archive", "schema_version": 1}')
    assert main(["series", "--reports", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "runs/index.json: cannot read the run archive's index" in err
    assert "move" in err and "Traceback" not in err


def test_the_host_names_what_makes_its_testbed() -> None:
    host = host_summary()
    assert isinstance(host["memory_gib"], int) and host["memory_gib"] > 0
    assert host["os"].startswith("Linux") and isinstance(host["gpus"], list)


def test_a_gpu_cell_and_its_cpu_twin_on_one_host_share_a_testbed(tmp_path: Path) -> None:
    host = {"cpu": "Test CPU", "cpus": 16, "memory_gib": 128, "os": "Linux Debian", "gpus": ["NVIDIA H200"]}
    docs = {}
    for name, target, gpus in (("k-gpu", "gpu", ["/physical_device:GPU:0"]), ("k-cpu", "cpu", [])):
        doc = cell_doc(name, "2.15", results=results_doc([], tf="2.15.1", target=target, gpus=gpus), target=target)
        doc["host"] = host
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        docs[name] = load_file(path).facts.testbed
    assert docs["k-gpu"] == docs["k-cpu"]
    assert docs["k-gpu"].text() == "Test CPU, 16 CPUs, 128 GiB, NVIDIA H200, Linux Debian"
    other = archive.Testbed("Test CPU", "16", "128", (), "Linux Debian")
    assert other.key != docs["k-gpu"].key
