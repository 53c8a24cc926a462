"""``publish``: two machines' reports directories in one static site, a report and a series per testbed, opened in
headless Chromium with no network."""
from __future__ import annotations

from pathlib import Path

import pytest
from cdp_pipe import Chromium, find_chromium
from e2e import require
from report_docs import parse_html
from series_runs import run_series

from tfmatrix.cli import main
from tfmatrix.results.archive import read_archive

LAPTOP = {"cpu": "Laptop CPU", "cpus": 8, "memory_gib": 16, "os": "Linux Ubuntu 24.04", "gpus": []}
GPU_BOX = {"cpu": "Server CPU", "cpus": 16, "memory_gib": 128, "os": "Linux Debian 12", "gpus": ["NVIDIA H200"]}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    run_series(tmp_path / "laptop", 5, lambda k, v: 1.3 if k >= 3 and v["loop"] == "fit" else 1.0, host=LAPTOP)
    run_series(tmp_path / "gpu-box", 2, lambda k, v: 1.0, host=GPU_BOX, seed=7)
    assert main(["publish", str(tmp_path / "laptop"), str(tmp_path / "gpu-box"), str(tmp_path / "laptop"),
                 "--out", str(tmp_path / "site")]) == 0
    return tmp_path / "site"


@pytest.mark.slow
def test_two_machines_are_two_testbeds_each_with_its_report_and_series(site: Path) -> None:
    index = parse_html((site / "index.html").read_text())
    rows = index.find("table", cls="testbeds").find_all("tr", cls=None)[1:]
    assert len(rows) == 2
    keys = [r.attrs["data-testbed"] for r in rows]
    for key in keys:
        page = (site / key / "index.html").read_text()
        assert 'id="series"' in page
        assert len(read_archive(site / key).runs) in (5, 2)       # each file once, though laptop was given twice
    laptop = next(k for k in keys if len(read_archive(site / k).runs) == 5)
    assert "Laptop CPU, 8 CPUs, 16 GiB, no GPU" in (site / "index.html").read_text()
    assert (site / laptop / "cells").is_dir() and len(list((site / laptop / "cells").glob("*.json"))) == 1
    assert not list(site.glob(".tmp-*")) and not list(site.glob(".old-*"))
    front = (site / "index.html").read_text()          # each source by its folder's name, not the publisher's path
    assert str(site.parent) not in front and "laptop" in front and "gpu-box" in front


def test_a_directory_without_kept_runs_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["publish", str(tmp_path / "empty"), "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no kept runs" in err


@pytest.mark.browser
@pytest.mark.slow
def test_the_site_opens_in_a_browser_without_a_network(site: Path, tmp_path: Path) -> None:
    chromium = find_chromium()
    require(chromium is not None, "headless Chromium not found (apt-get install -y chromium, or set TFMATRIX_CHROMIUM)")
    with Chromium.start(tmp_path / "profile", chromium) as browser:
        pg = browser.open_page("about:blank", width=1200, height=900)
        pg.send("Network.enable")
        pg.send("Page.navigate", {"url": (site / "index.html").as_uri()})
        browser.wait_event("Page.loadEventFired", pg.session)
        assert pg.evaluate("document.querySelectorAll('a.testbed-link').length") == 2
        pg.evaluate("document.querySelector('a.testbed-link').click()")
        browser.wait_event("Page.loadEventFired", pg.session)
        assert pg.evaluate("location.pathname").endswith("/index.html")
        assert pg.evaluate("document.title").startswith("tfmatrix report")
        assert pg.evaluate("document.querySelectorAll('#series .series-cell').length") == 1
        assert pg.console_problems() == []
        requests = [ev["params"]["request"]["url"] for ev in browser.events
                    if ev.get("method") == "Network.requestWillBeSent" and ev.get("sessionId") == pg.session]
        assert requests and all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
