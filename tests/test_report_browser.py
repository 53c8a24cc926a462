"""The report in headless Chromium: renders without console errors or network requests, sorts, filters.

Driven through the DevTools protocol over ``--remote-debugging-pipe``
(tests/cdp_pipe.py, stdlib only). Needs Debian's ``chromium`` (or
``$TFMATRIX_CHROMIUM``); skipped when it is missing. Leaves a screenshot,
``report.png``, in the test's temp directory.
"""
from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from cdp_pipe import Chromium, find_chromium
from e2e import require
from report_docs import synthetic_matrix

from tfmatrix.analysis.claims.files import builtin
from tfmatrix.report.build import build

SEED_CLAIMS = builtin()      # the seeds' claims (tfmatrix/data/claims/seeds.toml)

pytestmark = pytest.mark.browser

CHROMIUM = find_chromium()


@pytest.fixture
def page(tmp_path):
    require(CHROMIUM is not None, "headless Chromium not found (apt-get install -y chromium, or set TFMATRIX_CHROMIUM)")
    synthetic_matrix(tmp_path / "cells")
    build(tmp_path / "cells", tmp_path / "out")
    url = (tmp_path / "out" / "index.html").as_uri()
    with Chromium.start(tmp_path / "profile", CHROMIUM) as browser:
        pg = browser.open_page("about:blank", width=1400, height=1000)
        pg.send("Network.enable")
        pg.send("Page.navigate", {"url": url})
        browser.wait_event("Page.loadEventFired", pg.session)
        yield pg, tmp_path


def _column(pg, table_sel: str, col: int) -> list:
    return pg.evaluate(
        "Array.from(document.querySelectorAll(SEL + ' tbody tr')).map(function (tr) {"
        "  var td = tr.cells[COL]; var s = td.getAttribute('data-sort');"
        "  return s === null ? td.textContent.trim() : Number(s); })".replace("SEL", repr(table_sel))
        .replace("COL", str(col)))


@pytest.mark.slow
def test_report_renders_without_errors_or_network(page):
    pg, tmp_path = page
    assert pg.evaluate("document.title").startswith("tfmatrix report")
    assert pg.evaluate("document.querySelectorAll('table.xv').length") == 1
    assert pg.evaluate("document.querySelectorAll('svg.chart').length") >= 1
    assert pg.evaluate("document.querySelectorAll('.panel-note[data-target=gpu]').length") >= 1   # no empty panel
    assert pg.evaluate("document.querySelectorAll('#warnings li.w-loud').length") >= 2
    # the JS ran: headers became sortable
    assert pg.evaluate("document.querySelectorAll('th.sort').length") > 10
    problems = pg.console_problems()
    assert problems == [], problems
    requests = [ev["params"]["request"]["url"] for ev in pg.browser.events
                if ev.get("method") == "Network.requestWillBeSent" and ev.get("sessionId") == pg.session]
    assert requests and all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
    shot = pg.screenshot(tmp_path / "report.png")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000


def test_clicking_a_header_sorts_the_table(page):
    pg, _ = page
    table = "table.xv"
    n_params = pg.evaluate("document.querySelectorAll('table.xv thead th.param').length")
    col = n_params + 1                       # the TF 2.0 column: numbers and n/a mixed
    before = _column(pg, table, col)
    pg.evaluate(f"document.querySelectorAll('table.xv thead th')[{col}].click()")
    asc = _column(pg, table, col)
    nums = [v for v in asc if isinstance(v, (int, float))]
    assert nums == sorted(nums) and len(nums) >= 4
    assert asc[:len(nums)] == nums             # numbers first, n/a and blanks last
    assert sorted(map(str, asc)) == sorted(map(str, before))
    assert pg.evaluate(f"document.querySelectorAll('table.xv thead th')[{col}].getAttribute('aria-sort')") \
        == "ascending"
    pg.evaluate(f"document.querySelectorAll('table.xv thead th')[{col}].click()")
    desc = _column(pg, table, col)
    nums_desc = [v for v in desc if isinstance(v, (int, float))]
    assert nums_desc == sorted(nums, reverse=True)
    # a text column sorts too
    pg.evaluate("document.querySelectorAll('table.xv thead th')[0].click()")
    texts = _column(pg, table, 0)
    assert texts == sorted(texts)
    # a question's lines are folded under each cell's count of them, and open with a click
    sel = "#claim-tf2_vs_tf1 ul.claim-cells details"
    seen = f"document.querySelector({sel!r}).querySelector('.cl-line').checkVisibility()"
    assert pg.evaluate(seen) is False
    pg.evaluate(f"document.querySelector({sel!r} + ' summary').click()")
    assert pg.evaluate(seen) is True
    assert pg.console_problems() == []


def test_filters_hide_benchmarks_and_targets(page):
    pg, _ = page
    visible = "document.querySelectorAll('table.xv thead th.cellcol:not(.filtered-t)').length"
    assert pg.evaluate(visible) == 3
    pg.evaluate("var s = document.getElementById('f-target'); s.value = 'gpu';"
                "s.dispatchEvent(new Event('change'))")
    assert pg.evaluate(visible) == 0
    assert pg.evaluate("getComputedStyle(document.querySelector('.panel[data-target=cpu]')).display") == "none"
    pg.evaluate("var s = document.getElementById('f-target'); s.value = '';"
                "s.dispatchEvent(new Event('change'))")
    assert pg.evaluate(visible) == 3
    pg.evaluate("var s = document.getElementById('f-benchmark'); s.value = 'training.question';"
                "s.dispatchEvent(new Event('change'))")
    assert pg.evaluate("getComputedStyle(document.getElementById('bench-training.question')).display") != "none"
    assert pg.console_problems() == []


def test_claims_render_first_and_their_links_resolve(page):
    pg, _ = page
    # the verdict grid, then the claims' detail: the first things on screen under the header
    assert pg.evaluate("Array.from(document.querySelectorAll('main > section')).slice(0, 2).map(s => s.id)") \
        == ["grid", "claims"]
    top = pg.evaluate("document.getElementById('grid').getBoundingClientRect().top")
    assert 0 <= top < 400
    assert pg.evaluate("document.querySelectorAll('#claims tr.claim').length") >= 13
    assert pg.evaluate("document.querySelectorAll('#claims svg.spark').length") >= 1
    # every in-page link in the claims and the questions points at an element that exists
    broken = pg.evaluate(
        "Array.from(document.querySelectorAll('#claims a[href^=\"#\"]'))"
        ".map(function (a) { return a.getAttribute('href').slice(1); })"
        ".filter(function (id) { return !document.getElementById(id); })")
    assert broken == []
    n_links = pg.evaluate("document.querySelectorAll('#claims a[href^=\"#row-\"]').length")
    assert n_links >= 2
    # following one scrolls its table row into view
    pg.evaluate("document.querySelector('#claims a[href^=\"#row-\"]').click()")
    target = pg.evaluate("location.hash.slice(1)")
    assert target.startswith("row-")
    visible = pg.evaluate("(function () { var r = document.getElementById(%r).getBoundingClientRect();"
                          " return r.bottom > 0 && r.top < window.innerHeight; })()" % target)
    assert visible
    assert pg.console_problems() == []


DEFAULT_RUN = Path(__file__).parent / "golden" / "default-matrix.tar.gz"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.slow
def test_the_default_report_opens_on_a_verdict_grid_that_fits_a_laptop_screen(tmp_path):
    """The report of a real default run (12 CPU cells, 12 GPU cells skipped; tests/golden/default-matrix.tar.gz)
    at 1366x768: a square for every claim x cell, no horizontal scroll, the grid within the first screen, and a
    click on a square lands on the claim's detail."""
    require(CHROMIUM is not None, "headless Chromium not found (apt-get install -y chromium, or set TFMATRIX_CHROMIUM)")
    with tarfile.open(DEFAULT_RUN) as tar:
        tar.extractall(tmp_path, filter="data")
    build(tmp_path / "cells", tmp_path / "out", generated="2026-11-24T00:00:00+00:00")
    with Chromium.start(tmp_path / "profile", CHROMIUM, width=1366, height=768) as browser:
        pg = browser.open_page((tmp_path / "out" / "index.html").as_uri(), width=1366, height=768)
        ran = pg.evaluate("document.querySelectorAll('#grid th.g-cell').length")
        assert ran == 12
        rows = pg.evaluate("Array.from(document.querySelectorAll('#grid tbody tr'))"
                           ".map(tr => tr.querySelectorAll('td.g').length)")
        assert rows == [ran] * len(SEED_CLAIMS)
        # every square says something: a verdict with its ratio, or a blank with the reason on hover
        assert pg.evaluate("Array.from(document.querySelectorAll('#grid td.g'))"
                           ".filter(td => !td.textContent.trim() && !td.title).length") == 0
        # the golden run measured one process a variant: every claim square is "not enough
        # replication" (grey, as an open line), and says why
        assert pg.evaluate("document.querySelectorAll('#grid td.g-unclear').length") >= 5
        assert pg.evaluate("Array.from(document.querySelectorAll('#grid td.g-unclear'))"
                           ".filter(td => td.title.includes('no interval (one process a side)')).length") >= 5
        assert pg.evaluate("document.documentElement.scrollWidth") <= 1366           # no horizontal scroll
        assert pg.evaluate("(function () { var box = document.querySelector('#grid .scroll');"
                           " return box.scrollWidth <= box.clientWidth; })()")            # nor inside the grid's box
        assert pg.evaluate("document.querySelector('#grid table').getBoundingClientRect().right") <= 1366
        assert pg.evaluate("document.querySelector('#grid table').getBoundingClientRect().bottom") <= 768
        pg.evaluate("document.querySelector('#grid td.g-unclear a').click()")
        target = pg.evaluate("location.hash.slice(1)")
        assert target.startswith("claim-") and pg.evaluate(f"!!document.getElementById({target!r})")
        pg.evaluate("window.scrollTo(0, 0)")
        shot = pg.screenshot(tmp_path / "grid.png", full_page=False)
        assert _png_size(shot) == (1366, 768)
        assert pg.console_problems() == []


@pytest.mark.slow
def test_the_timeline_and_bisect_sections_open_with_charts_tooltips_and_their_files(tmp_path):
    """The golden default run's report with a timeline (six real cells as six releases) and a bisect answer beside
    it: the nav links land on both sections, every claim has a chart whose points carry their values on hover,
    the files the sections link to (timeline.json beside timeline.csv, the bisect answer) resolve."""
    require(CHROMIUM is not None, "headless Chromium not found (apt-get install -y chromium, or set TFMATRIX_CHROMIUM)")
    import json

    from tfmatrix.analysis.cells import load_dir
    from tfmatrix.history.axis import tf_axis
    from tfmatrix.history.bisect import bisect
    from tfmatrix.history.search import Measure
    from tfmatrix.history.targets import claim_target
    from tfmatrix.history.timeline import points_for, timeline_claims, timeline_csv, timeline_json
    from tfmatrix.matrix.releases import load_table

    with tarfile.open(DEFAULT_RUN) as tar:
        tar.extractall(tmp_path, filter="data")
    cells = {c.name: c for c in load_dir(tmp_path / "cells").cells}
    names = ["tf1.15-cpu", "tf2.1-cpu", "tf2.9-cpu", "tf2.15-cpu", "tf2.16-keras3-cpu", "tf2.21-keras3-cpu"]
    releases = [cells[n].tf_installed for n in names]
    points = [p for n, r in zip(names, releases, strict=True) for p in points_for(r, cells[n], f"cells/{n}.json")]
    out = tmp_path / "out"
    (out / "bisect").mkdir(parents=True)
    axis = tf_axis(load_table())
    (out / "timeline.json").write_text(json.dumps(timeline_json(points, axis, releases, "quick")))
    (out / "timeline.csv").write_text(timeline_csv(points))
    truth = {"2.0.4": Measure(24.0, 22.0, 27.0), "2.1.4": Measure(0.97, 0.9, 1.04)}
    answer = bisect(claim_target("predict_slower_after_compile", "seed"), axis, "2.1.4", "2.0.4",
                    lambda r, attempt: truth[r], patches=False)
    (out / "bisect" / "predict.json").write_text(json.dumps(answer.to_json()))
    build(tmp_path / "cells", out, generated="2026-11-25T00:00:00+00:00")
    with Chromium.start(tmp_path / "profile", CHROMIUM, width=1366, height=900) as browser:
        pg = browser.open_page((out / "index.html").as_uri(), width=1366, height=900)
        for section in ("timeline", "bisect"):
            pg.evaluate(f"document.querySelector('nav a[href=\"#{section}\"]').click()")
            assert pg.evaluate("location.hash") == f"#{section}"
            assert pg.evaluate(f"document.getElementById('{section}').getBoundingClientRect().top") < 200
        assert pg.evaluate("document.querySelectorAll('#timeline svg.timeline').length") == len(timeline_claims())
        tips = pg.evaluate("Array.from(document.querySelectorAll('#timeline circle.point title'))"
                           ".map(t => t.textContent)")
        assert len(tips) == sum(1 for p in points if p.ratio is not None)
        assert all(t.split(":")[0] in releases and ("x [" in t or "no interval (one process a side)" in t)
                   for t in tips)
        assert pg.evaluate("document.querySelector('#timeline svg.timeline').getBoundingClientRect().width") <= 1366
        links = pg.evaluate("Array.from(document.querySelectorAll('#timeline a, #bisect a')).map(a => a.href)")
        assert {h.rsplit("/", 1)[-1] for h in links} >= {"timeline.json", "timeline.csv", "predict.json"}
        assert all(Path(h.removeprefix("file://")).exists() for h in links if h.startswith("file:"))
        assert "changed between 2.1.4 and 2.0.4" in pg.evaluate("document.querySelector('#bisect .answer').textContent")
        pg.screenshot(tmp_path / "timeline.png")
        assert pg.console_problems() == []


TRACING_PROFILE = Path(__file__).parent / "golden" / "profiles" / "tf2.15-cpu-tracing.json.gz"


@pytest.mark.slow
def test_a_profiled_claim_line_opens_its_why_panel_and_icicle_on_a_laptop_screen(tmp_path):
    """The golden default run's report with a real profile of seed 004's retracing pair in tf2.15-cpu (`explain
    --claim python_args_retrace --cell tf2.15-cpu`, 2026-11-26): the claim line links to its why panel, which
    says it is retracing and draws both sides' call trees within a 1366x768 screen, every bar with its figures on
    hover, and the speedscope file it links to exists."""
    require(CHROMIUM is not None, "headless Chromium not found (apt-get install -y chromium, or set TFMATRIX_CHROMIUM)")
    import gzip

    with tarfile.open(DEFAULT_RUN) as tar:
        tar.extractall(tmp_path, filter="data")
    out = tmp_path / "out"
    (out / "profiles").mkdir(parents=True)
    (out / "profiles" / "tf2.15-cpu.json").write_bytes(gzip.decompress(TRACING_PROFILE.read_bytes()))
    build(tmp_path / "cells", out, generated="2026-11-26T00:00:00+00:00")
    with Chromium.start(tmp_path / "profile", CHROMIUM, width=1366, height=768) as browser:
        pg = browser.open_page((out / "index.html").as_uri(), width=1366, height=768)
        link = "#claims a.why-link[href^=\"#why-python_args_retrace-tf2.15-cpu-\"]"
        assert pg.evaluate(f"document.querySelectorAll({link!r}).length") == 1
        pg.evaluate(f"document.querySelector({link!r}).click()")
        target = pg.evaluate("location.hash.slice(1)")
        assert target.startswith("why-python_args_retrace-tf2.15-cpu-")
        assert -2 <= pg.evaluate(f"document.getElementById({target!r}).getBoundingClientRect().top") < 200
        said = pg.evaluate(f"document.getElementById({target!r}).querySelector('.why-sentences').textContent")
        assert "retracing" in said and "per step" in said
        box = pg.evaluate(f"(function () {{ var r = document.getElementById({target!r}).querySelector('svg.icicle')"
                          ".getBoundingClientRect(); return [r.left, r.right, r.width, r.height]; })()")
        assert box[0] >= 0 and box[1] <= 1366 and box[2] >= 900 and box[3] > 100
        sides = pg.evaluate(f"Array.from(document.getElementById({target!r}).querySelectorAll('g.ic-f'))"
                            ".map(g => g.getAttribute('data-side'))")
        assert sides.count("a") >= 5 and sides.count("b") >= 5
        tips = pg.evaluate(f"Array.from(document.getElementById({target!r}).querySelectorAll('g.ic-f title'))"
                           ".map(t => t.textContent)")
        assert len(tips) == len(sides) and all(" per step on this path" in t for t in tips)
        assert any("_create_concrete_function" in t for t in tips)
        href = pg.evaluate(f"document.getElementById({target!r}).querySelector('a[href$=\".speedscope.json\"]')"
                           ".getAttribute('href')")
        assert (out / href).is_file()
        assert pg.evaluate("document.documentElement.scrollWidth") <= 1366
        shot = pg.screenshot(tmp_path / "why.png", full_page=False)
        assert _png_size(shot) == (1366, 768)
        assert pg.console_problems() == []
