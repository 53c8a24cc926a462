"""The noise prior shipped with tfmatrix (``analysis.runs.prior``): what it lends, to which variants, and its table."""
from __future__ import annotations

from pathlib import Path

import pytest
from report_docs import kept_run, write_archive

from tfmatrix.analysis.runs.noise_model import CONTROL, NoiseModel
from tfmatrix.analysis.runs.prior import PRIOR_PATH, ShippedPrior, read_prior, shipped

PRIOR = ShippedPrior({"v1": 0.01, "v2": 0.04}, scale=4.0, d=4.0, measured="a test host")


def test_a_fresh_machine_borrows_the_prior_wider_than_measured_for_the_variants_it_knows() -> None:
    lent = PRIOR.lend(None, [("c", "v1"), ("c", "v3")])
    assert lent is not None and not lent.variances
    assert lent.lent == {("c", "v1"): (0.04, 4.0)}      # v3: not in the table, nothing lent
    assert "shipped with tfmatrix" in lent.lent_source and "a test host" in lent.lent_source


def test_the_machines_own_history_is_kept_and_the_prior_fills_only_what_it_does_not_know() -> None:
    own = NoiseModel({("c", "v1"): (0.002, 12.0)}, "(3 earlier runs)", {("c", "v1"): (1.0, 0.1)})
    lent = PRIOR.lend(own, [("c", "v1"), ("c", "v2")])
    assert lent is not None and lent is not own
    assert lent.variances == own.variances and lent.means == own.means and lent.source == own.source
    assert lent.lent == {("c", "v2"): (0.16, 4.0)}
    # nothing to lend: the history itself (the run records that it borrowed nothing)
    assert PRIOR.lend(own, [("c", "v1"), ("c", "v9")]) is own
    assert PRIOR.lend(None, [("c", "v9")]) is None


def test_a_line_with_a_variance_of_its_own_never_sees_the_prior() -> None:
    """The prior is the last resort: a variant measured in two rounds here is judged on its own rounds (pooled with
    the history where there is one), a variant of one round on the prior."""
    import pandas as pd

    from tfmatrix.analysis.runs.noise_model import annotate

    df = pd.DataFrame([
        {"cell": "c", "id": "v1", "status": "ok", "benchmark": "b", "samples": [1.0],
         "per_process": [[1.0, 1.01], [1.2, 1.19]], "rounds": [1, 2], "windows": ["0", "0"]},
        {"cell": "c", "id": "v2", "status": "ok", "benchmark": "b", "samples": [1.0],
         "per_process": [[1.0, 1.02]], "rounds": [1], "windows": ["0"]},
    ])
    out = annotate(df, PRIOR.lend(None, [("c", "v1"), ("c", "v2")]))
    own, borrowed = out.iloc[0], out.iloc[1]
    assert own["unit_src"] == "its benchmark in this run" and own["unit_s2"] != 0.04
    assert borrowed["unit_s2"] == 0.16 and borrowed["unit_d"] == 4.0
    assert "shipped with tfmatrix" in borrowed["unit_src"]
    plain = annotate(df, None)
    assert pd.isna(plain.iloc[1]["unit_s2"])       # before: a line of one round had no variance at all


def test_the_shipped_table_reads_and_names_only_suite_variants() -> None:
    from suite.definitions import PRESETS
    from suite.registry import all_variants

    prior = shipped()
    assert prior == read_prior(PRIOR_PATH)
    assert prior.scale >= 1.0 and prior.d >= 1.0 and prior.measured
    assert prior.variances and all(v > 0 for v in prior.variances.values())
    known = {v.id for preset in PRESETS.values() for v in all_variants(preset)}
    assert set(prior.variances) <= known, sorted(set(prior.variances) - known)[:5]
    assert CONTROL not in prior.variances


def test_the_table_covers_every_variant_a_seed_claim_compares() -> None:
    """A fresh machine's round 1 can decide every seed claim's line the default measures: each of its variants has a
    prior."""
    from suite.definitions import PRESETS
    from suite.registry import all_variants
    from tfmatrix.analysis.claims.files import builtin
    from tfmatrix.analysis.stopping import claim_variant_ids

    catalogue = [(v.benchmark, v.id, v.as_dict()) for v in all_variants(PRESETS["seed"])]
    wanted = set(claim_variant_ids(catalogue, builtin()))
    missing = sorted(wanted - set(shipped().variances))
    # but MobileNetV2's tf.keras XLA variants: the default's TF cells answer that claim with EfficientNetV2S, and
    # the Keras 3 cells on JAX or PyTorch cannot run tf.keras: no default cell measures them
    assert len(wanted) > 40
    assert all(m.startswith("graphs.xla[model=mobilenetv2,") and "api=tf.keras" in m for m in missing), missing


def test_a_table_written_by_the_script_reads_back(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    write_archive(tmp_path, [kept_run("a", "r1", {"v1": (0.01, 2.0), CONTROL: (0.5, 2.0)}, 0),
                             kept_run("b", "r1", {"v1": (0.04, 2.0)}, 1)])
    out = tmp_path / "prior.toml"
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(root / "scripts" / "make_noise_prior.py"),
                           str(tmp_path), "--measured", 'a "quoted" host', "--out", str(out)],
                          capture_output=True, text=True, check=True)
    assert "1 variants" in done.stdout
    prior = read_prior(out)
    assert prior.variances == {"v1": 0.025}
    assert prior.measured == 'a "quoted" host'
    assert json.dumps(prior.variances)


def test_the_report_lends_the_prior_to_the_cells_whose_looks_borrowed_it_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """One path with the looks: a line a look decided on the prior is judged on it in the report; a cell of a run
    that never borrowed it (a run with rounds of its own, an older file) is judged as before."""
    from types import SimpleNamespace

    import pandas as pd

    from tfmatrix.report import build

    monkeypatch.setattr(build, "shipped", lambda: PRIOR)
    cells = [SimpleNamespace(name=n, results=SimpleNamespace(config={"schedule": {"sequential": {"prior": p}}}))
             for n, p in (("lent", True), ("not", False))]
    df = pd.DataFrame({"cell": ["lent", "lent", "not"], "id": ["v1", "v9", "v1"]})
    lent = build._noise_lent(df, cells, None)  # type: ignore[arg-type]
    assert lent is not None and lent.lent == {("lent", "v1"): (0.04, 4.0)}
    assert build._noise_lent(df, cells[1:], None) is None  # type: ignore[arg-type]
