"""The report of a golden set of cell files, byte for byte: a restructuring must not change what a user reads.

Inputs (``tests/golden/default-matrix.tar.gz``, a real default run: 12 CPU
cells, 12 GPU cells skipped; ``tests/golden/report-inputs.tar.gz``, a timeline
and a bisect answer made from those cells) go through every output the
commands that read results write: the report page and its CSV/JSON files
(with a previous run and an upgrade pair, so those sections are drawn too),
and ``compare`` of two cells and of two runs (table, CSV, HTML, gate lines).
The expected bytes are ``tests/golden/report-expected.tar.gz``; a change that
means to change the report rewrites it with ``python tests/test_golden_report.py``.
"""
from __future__ import annotations

import contextlib
import io
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
GENERATED = "2026-11-25T00:00:00+00:00"


def outputs(tmp: Path, build: Callable[..., object], cli_main: Callable[[list[str]], int]) -> dict[str, bytes]:
    """Every file the report and compare write for the golden inputs, plus what the commands printed."""
    for name in ("default-matrix.tar.gz", "report-inputs.tar.gz"):
        with tarfile.open(GOLDEN / name) as tar:
            tar.extractall(tmp, filter="data")
    out = tmp / "out"
    build(tmp / "cells", out, "tf1.15-cpu", generated=GENERATED, previous=tmp / "cells",
          upgrade=("tf2.15-cpu", "tf2.21-keras3-cpu"))
    printed = io.StringIO()
    cmp = tmp / "compare"
    cmp.mkdir()
    runs = [
        ["compare", str(tmp / "cells/tf2.15-cpu.json"), str(tmp / "cells/tf2.16-keras3-cpu.json"), "--all",
         "--csv", str(cmp / "cells.csv"), "--html", str(cmp / "cells.html"), "--fail-on", "slower:10%"],
        ["compare", str(tmp / "cells"), str(tmp / "cells"), "--normalise", "host", "--rows", "5",
         "--csv", str(cmp / "runs.csv"), "--html", str(cmp / "runs.html"), "--fail-on", "slower:10%"],
    ]
    for argv in runs:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            code = cli_main(argv)
        printed.write(f"exit {code}\n")
    inputs = ("timeline.json", "timeline.csv")
    written = [p for d in (out, cmp) for p in sorted(d.rglob("*")) if p.is_file() and p.parent.name != "bisect"
               and "runs" not in p.relative_to(d).parts          # the run archive: tests/test_archive.py
               and p.suffix in (".html", ".csv", ".json") and p.name not in inputs]
    files = {str(p.relative_to(tmp)): p.read_bytes().replace(str(tmp).encode(), b"TMP") for p in written}
    files["printed.txt"] = printed.getvalue().encode().replace(str(tmp).encode(), b"TMP")
    return files


@pytest.mark.slow
def test_the_report_of_the_golden_cells_is_byte_identical(tmp_path: Path) -> None:
    from tfmatrix.cli import main
    from tfmatrix.report.build import build

    got = outputs(tmp_path, build, main)
    with tarfile.open(GOLDEN / "report-expected.tar.gz") as tar:
        expected = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    assert sorted(got) == sorted(expected)
    changed = []
    for name in sorted(expected):
        if got[name] != expected[name]:
            old, new = expected[name].decode().splitlines(), got[name].decode().splitlines()
            line = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
            changed.append(f"{name} line {line + 1}")
    assert changed == [], "the report changed: " + "; ".join(changed)


def write_expected(files: dict[str, bytes], path: Path) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":   # rewrite the expected bytes after a change that means to change the report
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tfmatrix.cli import main
    from tfmatrix.report.build import build

    with tempfile.TemporaryDirectory() as d:
        write_expected(outputs(Path(d), build, main), GOLDEN / "report-expected.tar.gz")
