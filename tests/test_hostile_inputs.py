"""Hostile inputs: files from other machines, from containers and from profiles never reach outside their folder.

One test per class of the security review (issue 59): an archive index naming
paths outside ``runs/`` (traversal, absolute, through links), a kept file that
is a link, does not match its digest, or inflates without end; a cell file's
``finished`` and a profile's cell name used as paths; a container's results
file that is a FIFO, a link or a sparse giant. Each runs the real command
(``publish``, ``report``) or the real reader, and checks with a snapshot of
the directory around it that nothing outside the output folder was written,
changed or deleted, with no traceback: the bad entry skipped with one warning
line while the rest is used, or the cell failed with the reason.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import stat
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest
from report_docs import synthetic_matrix
from series_runs import run_cell, run_series
from test_why import _direct, _doc, _predict

from tfmatrix.cli import main
from tfmatrix.report.build import build
from tfmatrix.results import foreign
from tfmatrix.results.archive import INDEX_FILE, cell_dir, open_cell_file, read_archive, stamp
from tfmatrix.runners.common import read_suite_results

LAPTOP = {"cpu": "Laptop CPU", "cpus": 8, "memory_gib": 16, "os": "Linux Ubuntu 24.04", "gpus": []}


# -- the snapshot: every path under a folder, with what it is, its mode and its bytes' hash ------------------------

def snapshot(root: Path, leave_out: tuple[Path, ...] = ()) -> dict[str, tuple[Any, ...]]:
    """Every file, folder and link under ``root`` (links not followed), but those under ``leave_out``."""
    out: dict[str, tuple[Any, ...]] = {}
    for where, dirs, files in os.walk(root, followlinks=False):
        here = Path(where)
        dirs[:] = [d for d in dirs if here / d not in leave_out]
        for name in (*dirs, *files):
            path = here / name
            if path in leave_out:
                continue
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                what: Any = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                what = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
            elif stat.S_ISDIR(info.st_mode):
                what = ("dir",)
            else:
                what = ("other",)
            out[str(path.relative_to(root))] = (*what, stat.S_IMODE(info.st_mode), info.st_mtime_ns)
    return out


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """A home with secrets and a victim's files beside the folders the commands are given."""
    (tmp_path / "outside").mkdir()
    secret = tmp_path / "outside" / "secret.txt"
    secret.write_text("the private key\n")
    secret.chmod(0o600)
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / ".bashrc").write_text("# the victim's shell\n")
    (tmp_path / "victim" / "important.txt").write_text("keep me\n")
    (tmp_path / "victim" / "important.txt").chmod(0o600)
    return tmp_path


def machine(world: Path, name: str = "machineB", runs: int = 2) -> Path:
    """A reports folder another machine made: real runs of one cell, each built into a report (which keeps it)."""
    return run_series(world / name, runs, lambda k, v: 1.0, host=LAPTOP)


def index_of(reports: Path) -> dict[str, Any]:
    return json.loads((reports / "runs" / INDEX_FILE).read_text())


def with_entry(reports: Path, **changes: Any) -> dict[str, Any]:
    """The index with one more run, older than the real ones, its fields changed as given (a crafted entry)."""
    doc = index_of(reports)
    extra = {**doc["runs"][0], "finished": "2026-10-01T12:00:00+00:00", "run": "crafted", **changes}
    doc["runs"].append(extra)
    (reports / "runs" / INDEX_FILE).write_text(json.dumps(doc))
    return extra


def planted(reports: Path, data: bytes, digest: str = "0123456789abcdef") -> None:
    """A kept file of ``data`` under a well-formed name in the cell's own folder, and an entry naming it."""
    name = f"tf2.15-cpu/2026-10-01T120000-{digest}.json.gz"
    (reports / "runs" / name).write_bytes(data)
    with_entry(reports, digest=digest, file=name)


def gz_of(data: bytes) -> tuple[bytes, str]:
    """A kept file's bytes and the digest its entry would carry."""
    return gzip.compress(data, mtime=0), hashlib.sha256(data).hexdigest()[:16]


def publish_hostile(world: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    """``publish source --out site`` with a snapshot of everything around the site; (exit code, stderr, site)."""
    site = world / "site"
    before = snapshot(world, leave_out=(site,))
    code = main(["publish", str(source), "--out", str(site)])
    err = capsys.readouterr().err
    assert snapshot(world, leave_out=(site,)) == before, "publish changed a file outside its site"
    assert "Traceback" not in err
    return code, err, site


def published_files(site: Path) -> set[bytes]:
    return {p.read_bytes() for p in site.rglob("*") if p.is_file()}


def assert_published_without(site: Path, world: Path) -> None:
    """The real runs are in the site; no byte of the secret or the victim's files is."""
    pages = [p for p in site.iterdir() if p.name.startswith("tb-")]
    assert len(pages) == 1 and len(read_archive(pages[0]).runs) == 2 and (pages[0] / "index.html").is_file()
    inside = published_files(site)
    for path in ((world / "outside" / "secret.txt"), (world / "victim" / ".bashrc")):
        assert path.read_bytes() not in inside
    assert not list(site.glob(".tmp-*")) and not list(site.glob(".old-*"))


# -- publish: an archive index from another machine ----------------------------------------------------------------

@pytest.mark.parametrize("file", ["../../outside/secret.txt", "tf2.15-cpu/../../../outside/secret.txt",
                                  "ABSOLUTE", "tf2.15-cpu/2026-10-01T120000-0123456789abcdef.json.gz/../x"])
@pytest.mark.slow
def test_an_index_entry_naming_a_file_outside_runs_is_skipped_with_one_line(
        world: Path, capsys: pytest.CaptureFixture[str], file: str) -> None:
    source = machine(world)
    with_entry(source, file=str(world / "outside" / "secret.txt") if file == "ABSOLUTE" else file,
               digest="0123456789abcdef")
    code, err, site = publish_hostile(world, source, capsys)
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("tfmatrix: warning:")]
    assert len(warnings) == 1 and "index entry 3" in warnings[0] and "is not a name the archive writes" in warnings[0]
    assert str(source / "runs") in warnings[0] and warnings[0].endswith("skipped")
    assert_published_without(site, world)


def test_a_link_in_runs_is_never_followed_to_read_or_write(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder of runs/ that is a link (to the victim's), a name through it, and a kept file that is itself a link
    to a file outside: each entry well formed, each refused as a link."""
    source = machine(world)
    data, digest = gz_of(b'{"stolen": true}')
    (world / "victim" / f"2026-10-01T120000-{digest}.json.gz").write_bytes(data)
    (source / "runs" / "evil").symlink_to(world / "victim", target_is_directory=True)
    with_entry(source, cell="evil", digest=digest, file=f"evil/2026-10-01T120000-{digest}.json.gz")
    data2, digest2 = gz_of(b'{"stolen": 2}')
    (world / "outside" / "kept.json.gz").write_bytes(data2)
    (source / "runs" / "tf2.15-cpu" / f"2026-10-02T120000-{digest2}.json.gz").symlink_to(
        world / "outside" / "kept.json.gz")
    with_entry(source, digest=digest2, finished="2026-10-02T12:00:00+00:00",
               file=f"tf2.15-cpu/2026-10-02T120000-{digest2}.json.gz")
    code, err, site = publish_hostile(world, source, capsys)
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("tfmatrix: warning:")]
    assert len(warnings) == 2 and all("symbolic link" in w for w in warnings), warnings
    assert_published_without(site, world)
    assert data not in published_files(site) and data2 not in published_files(site)


def test_a_kept_file_that_does_not_match_its_digest_is_skipped(world: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    source = machine(world)
    planted(source, gz_of(b'{"not": "the cell file the entry names"}')[0])
    code, err, site = publish_hostile(world, source, capsys)
    assert code == 0 and "do not match the entry's digest 0123456789abcdef" in err
    assert_published_without(site, world)


@pytest.mark.slow
def test_a_decompression_bomb_stops_at_the_cap(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A kept file of under a megabyte that would inflate past the 256 MB a cell file may hold."""
    source = machine(world)
    pack = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 24)
    bomb = b"".join(pack.compress(zeros) for _ in range(foreign.CELL_FILE_CAP // len(zeros) + 2)) + pack.flush()
    assert len(bomb) < 10**6
    planted(source, bomb)
    code, err, site = publish_hostile(world, source, capsys)
    assert code == 0 and "inflates past 256 MB" in err
    assert_published_without(site, world)


def test_nothing_readable_to_publish_is_one_line_and_exit_2(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = machine(world, runs=1)
    doc = index_of(source)
    doc["runs"][0]["file"] = "../../outside/secret.txt"
    (source / "runs" / INDEX_FILE).write_text(json.dumps(doc))
    code, err, site = publish_hostile(world, source, capsys)
    assert code == 2
    errors = [line for line in err.splitlines() if not line.startswith("tfmatrix: warning:")]
    assert len(errors) == 1 and errors[0].startswith("tfmatrix: error:") and "no kept runs" in errors[0]


def test_the_prune_never_removes_a_file_outside_runs(world: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The review's deletion: an absolute ``file`` with a huge ``bytes``, and a cell whose folder in runs/ is a link
    to the victim's, past a small budget: neither is removed, nor anything outside runs/."""
    reports = machine(world, "reports")
    with_entry(reports, file=str(world / "victim" / "important.txt"), bytes=10**12)
    name = f"2026-10-02T120000-{'f' * 16}.json.gz"
    (world / "victim" / name).write_text("the victim's, though named like a kept file\n")
    (reports / "runs" / "linked").symlink_to(world / "victim", target_is_directory=True)
    for day, digest in ((2, "f" * 16), (3, "e" * 16)):       # the older one is pruned, the newer stays
        with_entry(reports, cell="linked", file=f"linked/2026-10-0{day}T120000-{digest}.json.gz", digest=digest,
                   bytes=10**12, finished=f"2026-10-0{day}T12:00:00+00:00")
    run_cell(reports / "cells", 2, lambda v: 1.0, host=LAPTOP)     # a new run: the report saves, then prunes
    monkeypatch.setenv("TFMATRIX_ARCHIVE_MB", "0.001")
    before = snapshot(world, leave_out=(reports,))
    victim = (world / "victim" / name).read_bytes()
    assert main(["report", "--reports", str(reports), "--cells", str(reports / "cells")]) == 0
    said = capsys.readouterr()
    assert snapshot(world, leave_out=(reports,)) == before and "Traceback" not in said.err
    assert (world / "victim" / name).read_bytes() == victim
    assert "index entry 3" in said.out and "is not a name the archive writes" in said.out
    assert f"linked/{name}: not removed past the budget (a folder on its path is a symbolic link" in said.out


# -- report: names from a cell file and a profiles file ------------------------------------------------------------

@pytest.mark.parametrize("finished", ["../../../../x/", "2026-11-28\u0000T12:00:00", "/abs/olute"])
@pytest.mark.slow
def test_a_cell_files_finished_never_names_a_path(world: Path, capsys: pytest.CaptureFixture[str],
                                                  finished: str) -> None:
    reports = world / "a" / "b" / "reports"
    paths = synthetic_matrix(reports / "cells")
    doc = json.loads(paths["tf2.0"].read_text())
    doc["finished"] = finished
    paths["tf2.0"].write_text(json.dumps(doc))
    before = snapshot(world, leave_out=(reports,))
    for _ in range(2):       # and every later report as well
        assert main(["report", "--reports", str(reports), "--cells", str(reports / "cells")]) == 0
        assert "Traceback" not in capsys.readouterr().err
    assert snapshot(world, leave_out=(reports,)) == before
    kept = [r for r in read_archive(reports).runs if r.cell == "tf2.0-cpu"]
    assert len(kept) == 1 and kept[0].file.startswith("tf2.0-cpu/undated-")
    assert stamp("2026-11-28T16:06:03+00:00") == "2026-11-28T160603" and cell_dir("..") == "_."


def test_a_profiles_files_cell_name_never_names_a_path(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reports = world / "a" / "b" / "reports"
    synthetic_matrix(reports / "cells")
    build(reports / "cells", reports)
    (reports / "profiles").mkdir()
    evil = dict(_doc([_direct(), _predict()]).to_json(), cell={"name": "../../../../PWNED-profile", "target": "cpu"})
    (reports / "profiles" / "tf2.0-cpu.json").write_text(json.dumps(evil))
    before = snapshot(world, leave_out=(reports,))
    assert main(["report", "--reports", str(reports), "--cells", str(reports / "cells")]) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert snapshot(world, leave_out=(reports,)) == before
    assert not list(world.rglob("PWNED*"))
    assert (reports / "profiles" / "tf2.0-cpu.speedscope.json").is_file()


# -- a container's results file ------------------------------------------------------------------------------------

def _read_within(path: Path, seconds: float = 10.0) -> tuple[Any, str | None]:
    """``read_suite_results`` in a thread: a read that blocks fails the test instead of hanging it."""
    done: list[tuple[Any, str | None]] = []
    thread = threading.Thread(target=lambda: done.append(read_suite_results(path)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"reading {path} blocked for {seconds} s"
    return done[0]


def test_a_results_file_that_is_a_fifo_a_link_or_a_giant_fails_the_cell_with_why(world: Path) -> None:
    out = world / "out"
    out.mkdir()
    before = snapshot(world, leave_out=(out,))
    os.mkfifo(out / "fifo.json")
    (out / "link.json").symlink_to(world / "outside" / "secret.txt")
    with open(out / "giant.json", "wb") as f:          # sparse: a terabyte of nothing on the disk
        f.truncate(10**12)
    for name, why in (("fifo.json", "not a regular file"), ("link.json", "symbolic link"),
                      ("giant.json", "over the 256 MB")):
        doc, problem = _read_within(out / name)
        assert doc is None and problem is not None and "refused" in problem and why in problem, (name, problem)
    doc, problem = read_suite_results(out / "none.json")
    assert doc is None and problem == "the suite wrote no results file"
    assert snapshot(world, leave_out=(out,)) == before


def test_the_readers_refuse_names_that_leave_their_folder() -> None:
    for name in ("", ".", "..", "a/../b", "/etc/passwd", "a//b", "a/./b", "a\\b", "a\0b"):
        with pytest.raises(foreign.Refused):
            foreign.child(name)
    assert foreign.child("tf2.15-cpu/2026-11-28T160603-0123456789abcdef.json.gz") == (
        "tf2.15-cpu", "2026-11-28T160603-0123456789abcdef.json.gz")
    with pytest.raises(foreign.Refused, match="truncated"):
        foreign.gunzip(gzip.compress(b"x" * 1000)[:-8], 10**6)
    with pytest.raises(foreign.Refused, match="not gzip"):
        foreign.gunzip(b"plain text", 10**6)


def test_a_fifo_or_a_giant_among_the_cell_files_is_refused_not_waited_on(world: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    reports = world / "reports"
    synthetic_matrix(reports / "cells")
    os.mkfifo(reports / "cells" / "evil.json")
    with open(reports / "cells" / "huge.json", "wb") as f:
        f.truncate(10**12)
    before = snapshot(world, leave_out=(reports,))
    done: list[int] = []
    thread = threading.Thread(target=lambda: done.append(
        main(["report", "--reports", str(reports), "--cells", str(reports / "cells")])), daemon=True)
    thread.start()
    thread.join(120)
    assert done == [2], "report blocked on a FIFO among the cell files"      # 2: as for any refused cell file
    said = capsys.readouterr()
    assert "2 cell files refused" in said.out and "Traceback" not in said.err
    assert [line.split(": cannot read: ")[1] for line in said.err.splitlines()] == [
        "not a regular file", "1000000 MB, over the 256 MB a file may hold"]
    assert snapshot(world, leave_out=(reports,)) == before
    page = (reports / "index.html").read_text()
    assert "evil.json: cannot read: not a regular file" in page and "huge.json: cannot read: " in page


# -- report: each cell's previous run and the noise history, read from an archive another machine wrote -------------

def test_a_reports_previous_run_and_noise_never_come_through_a_link_or_a_malformed_entry(
        world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report reads each cell's previous run from the archive (``cells.previous_kept``) and its noise history
    from the index (``KeptRun.variances``): a newest earlier entry whose kept file is a link to a file outside is
    never read (the cell has no previous run rather than the victim's file), an entry whose variances are not
    numbers is skipped with one line, and nothing outside the reports folder changes."""
    reports = machine(world)
    current = index_of(reports)["runs"][-1]
    assert 'id="run-to-run"' in (reports / "index.html").read_text()     # the archive's previous run, as it is
    real = json.loads(open_cell_file(reports, read_archive(reports).runs[0]))
    real["log_tail"] = "stolen"          # a valid cell file of the victim's: followed, it would be the previous run
    data, digest = gz_of(json.dumps(real).encode())
    (world / "victim" / "kept.json.gz").write_bytes(data)
    name = f"tf2.15-cpu/2026-10-01T120000-{digest}.json.gz"
    (reports / "runs" / name).symlink_to(world / "victim" / "kept.json.gz")
    with_entry(reports, digest=digest, file=name, finished=current["finished"])
    with_entry(reports, variances={"v": ["not", "numbers", "at all"]}, digest="fedcba9876543210",
               file="tf2.15-cpu/2026-10-01T120000-fedcba9876543210.json.gz")
    before = snapshot(world, leave_out=(reports,))
    assert main(["report", "--reports", str(reports)]) == 0
    said = capsys.readouterr()
    assert "Traceback" not in said.err and "Traceback" not in said.out
    assert snapshot(world, leave_out=(reports,)) == before
    page = (reports / "index.html").read_text()
    assert "stolen" not in page and 'id="run-to-run"' not in page      # the link's target never became a run
    assert "index entry 4" in said.out + said.err + page and "not a kept run" in said.out + said.err + page
