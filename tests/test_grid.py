"""The verdict grid (tfmatrix/report/grid.py): one square per claim x cell, coloured by verdict, by family."""
from __future__ import annotations

from types import SimpleNamespace

from report_docs import parse_html
from test_claims import GENERATED, _claims, _hidden_effect

from tfmatrix.analysis.cells import load_dir
from tfmatrix.analysis.claims.answers import CANNOT, HOLDS, NOT_MEASURED, REVERSED
from tfmatrix.analysis.claims.files import builtin
from tfmatrix.analysis.statistics.inference import RatioCI
from tfmatrix.analysis.statistics.words import UNCLEAR
from tfmatrix.report.build import build
from tfmatrix.report.grid import MIXED, family, grid_view, head, short_claim, square

SEED_CLAIMS = builtin()      # the seeds' claims (tfmatrix/data/claims/seeds.toml)


def _cell(backend=None, flavour="tf.keras", tf="2.15", major=2, keras="2.15.0", target="cpu"):
    return SimpleNamespace(backend=backend, keras_flavour=flavour, tf=tf, tf_installed=tf + ".1", tf_major=major,
                           keras_version=keras, target=target)


def test_families_follow_the_issue_order_and_headers_stay_short():
    assert family(_cell(major=1, tf="1.14", flavour="keras")) == "tf1"
    assert family(_cell()) == "tf2"
    assert family(_cell(flavour="tf_keras")) == "tf_keras"
    assert family(_cell(backend="tensorflow", keras="3.3.3")) == "keras3-tf"
    assert family(_cell(backend="jax", keras="3.15.1")) == "keras3-other"
    assert head(_cell(tf="2.15")) == "2.15" and head(_cell(target="gpu")) == "2.15 GPU"
    assert head(_cell(backend="tensorflow", keras="3.3.3")) == "K3.3"
    assert head(_cell(backend="torch", keras="3.15.1")) == "torch"


def test_a_long_claim_is_cut_at_a_word():
    text = "predict() on a compiled model is much slower than on the same model before compile() in TF 2.0."
    short = short_claim(text, 40)
    assert len(short) <= 40 and short.endswith("…") and text.startswith(short[:-1])
    assert short_claim("Short.", 40) == "Short"


def _line(ratio, verdict):
    ci = RatioCI(ratio, ratio * 0.9, ratio * 1.1, 3, 3)
    return SimpleNamespace(verdict=verdict, standin="", comparison=SimpleNamespace(ci=ci, config="model=tiny"))


def test_a_square_agrees_with_its_lines_or_says_mixed():
    one = SimpleNamespace(name="tf2.0-cpu", seed_cell=True, lines=[_line(24.2, HOLDS)], reason="", not_measured=False)
    sq = square(one)
    assert (sq.verdict, sq.css, sq.text) == (HOLDS, "holds", "24×") and "24.2 [21.8, 26.6] holds" in sq.title
    two = SimpleNamespace(name="tf2.9-cpu", seed_cell=False, lines=[_line(0.5, HOLDS), _line(1.7, REVERSED)],
                          reason="", not_measured=False)
    assert (square(two).verdict, square(two).text) == (MIXED, "0.5–1.7×")
    same = SimpleNamespace(name="x", seed_cell=False, lines=[_line(1.01, UNCLEAR), _line(0.99, UNCLEAR)], reason="",
                           not_measured=False)
    assert square(same).verdict == UNCLEAR
    na = SimpleNamespace(name="tf2.21-cpu", seed_cell=False, lines=[], reason="no standalone keras package",
                         not_measured=False, empty_verdict=CANNOT)
    assert (square(na).verdict, square(na).text) == (CANNOT, "") and "no standalone keras package" in square(na).title
    filtered = SimpleNamespace(name="tf2.21-cpu", seed_cell=False, lines=[], reason="no variant", not_measured=True,
                               empty_verdict=NOT_MEASURED)
    assert square(filtered).verdict == NOT_MEASURED and square(filtered).css == "unmeasured"
    assert square(None, "the reference cell").verdict == "" and square(None, "the reference cell").title


def test_the_grid_has_a_square_for_every_claim_and_cell_and_links_to_the_detail(tmp_path):
    _hidden_effect(tmp_path / "cells")
    cells = load_dir(tmp_path / "cells").cells
    results = list(_claims(tmp_path / "cells").values())
    grid = grid_view(results, cells)
    assert grid is not None and grid["measured"]
    assert len(grid["rows"]) == len(SEED_CLAIMS)
    assert all(len(r["squares"]) == len(grid["cells"]) == 1 for r in grid["rows"])
    (seed,) = [r for r in grid["rows"] if r["key"] == "predict_slower_after_compile"]
    assert seed["squares"][0]["verdict"] == HOLDS and seed["squares"][0]["seed_cell"]
    (matmul,) = [r for r in grid["rows"] if r["key"] == "tf_matmul_faster_than_np_dot"]
    assert matmul["squares"][0]["verdict"] == NOT_MEASURED                # this run did not select it
    build(tmp_path / "cells", tmp_path / "out", generated=GENERATED)
    dom = parse_html((tmp_path / "out" / "index.html").read_text())
    table = dom.by_id("grid").find("table", cls="grid")
    assert len(table.find_all("td", cls="g")) == len(SEED_CLAIMS)
    ids = {n.attrs["id"] for n in dom.find_all() if "id" in n.attrs}
    links = [a.attrs["href"] for a in table.find_all("a")]
    assert len(links) >= len(SEED_CLAIMS) and all(h[1:] in ids for h in links)
