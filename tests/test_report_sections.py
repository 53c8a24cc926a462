"""The report's sections as a table: a new section is an analysis, a view, a partial and one row.

The fixture adds a section the way a contributor would (here all in one test
file and a partial written beside it): a question asked of the cells, a view
of its answer, its markup, and one ``Section`` row after the others. Nothing
in ``tfmatrix/report`` is edited: the page gets the section and its nav link,
and the file it writes lands beside the page.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from report_docs import cell_doc, noisy, parse_html, record, results_doc, write

from tfmatrix.report.build import Asked, analyse, load, render_files
from tfmatrix.report.sections import SECTIONS, Page, Section

GENERATED = "2026-01-02T03:04:05+00:00"


def slowest(page: Page) -> list[tuple[str, float]]:
    """The question (an analysis module's): each cell's slowest variant time."""
    ok = page.df[page.df["status"] == "ok"]
    return sorted((str(cell), float(group["time"].max())) for cell, group in ok.groupby("cell"))


def slowest_view(page: Page) -> dict[str, Any]:
    """Its view: the partial's context (an empty list hides its nav link)."""
    return {"slowest": [{"cell": c, "ms": f"{t * 1e3:.1f}"} for c, t in slowest(page)]}


PARTIAL = """{% if slowest %}
<section id="slowest">
  <h2>Slowest variant per cell</h2>
  <ul>{% for s in slowest %}<li>{{ s.cell }}: {{ s.ms }} ms</li>{% endfor %}</ul>
</section>
{% endif %}

"""


def test_a_new_section_is_an_analysis_a_view_a_partial_and_one_row(tmp_path: Path) -> None:
    cells = tmp_path / "cells"
    for name, t in (("tf2.1-cpu", 0.002), ("tf2.15-cpu", 0.004)):
        recs = [record("tensor_ops.matmul", {"impl": "tf.matmul", "n": 256, "dtype": "float64", "api": "tf",
                                             "mode": "eager"}, noisy(t, seed=1), seed="002")]
        write(cells, cell_doc(name, name[2:-4], results=results_doc(recs, tf=name[2:-4] + ".0")))
    (tmp_path / "mine" / "sections").mkdir(parents=True)
    (tmp_path / "mine" / "sections" / "slowest.html").write_text(PARTIAL)
    row = Section("slowest", slowest_view, "Slowest", 20, shown="slowest", where=tmp_path / "mine",
                  files=lambda p: {"slowest.csv": "".join(f"{c},{t}\n" for c, t in slowest(p))})
    inputs = load(cells, tmp_path / "out")
    files = render_files(analyse(inputs, Asked()), inputs, GENERATED, (*SECTIONS, row))
    dom = parse_html(files["index.html"])
    section = dom.by_id("slowest")
    assert section is not None and "tf2.15-cpu: 4.0 ms" in " ".join(section.text.split())
    nav = [a.attrs["href"] for a in dom.find_all("a") if a.attrs.get("href") == "#slowest"]
    assert nav, "the row's nav link"
    assert files["slowest.csv"].startswith("tf2.1-cpu,0.00")
    before = render_files(analyse(inputs, Asked()), inputs, GENERATED)
    assert "slowest" not in before["index.html"] and "slowest.csv" not in before   # the row alone added it
