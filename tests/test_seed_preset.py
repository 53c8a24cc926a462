"""The default matrix's preset (``seed``) answers every claim at the seed's own size.

``quick`` (CI) shrinks shapes until some answers change (a loop of small
matmuls against one einsum came out 7x to 24x where the seed's shapes give
1.6x), so the default matrix runs ``seed``: every variant a claim compares at
the size ``full`` uses (the seed's), except the few a 2-core CPU cannot bear
inside the 30-minute default, which are declared here and run at the largest
size that fits (the report's Claims row shows both sizes).
"""
from __future__ import annotations

from typing import Any

from variant_sizes import SIZE_PARAMS
from variant_sizes import code_path as _code_path
from variant_sizes import volume as _volume

from suite.definitions import PRESETS, Variant
from suite.registry import all_variants
from tfmatrix.analysis.claims.files import builtin
from tfmatrix.analysis.claims.specs import in_benchmarks, matches

SEED_CLAIMS = builtin()      # the seeds' claims (tfmatrix/data/claims/seeds.toml)

# (benchmark, parameter) measured below the seed's size in the default matrix, and why
REDUCED = {
    ("tensor_ops.matmul", "n"): "n = 10000 takes ~30 s a call on 2 cores; 2000 is used",
    ("tensor_ops.batched_matmul", "a_shape"): "100 products of the seed's shape instead of 1000 (same ratio)",
    ("training.question", "width"): "the BiLSTM model takes ~20 s a step at full width",
}


def _variants(preset: str) -> list[tuple[Variant, dict[str, Any]]]:
    return [(v, v.as_dict()) for v in all_variants(PRESETS[preset])]


def _claim_variants(preset: str) -> dict[str, list[Variant]]:
    """Per claim, the variants of ``preset`` that either side of any of its setups matches."""
    everything = _variants(preset)
    out: dict[str, list[Variant]] = {}
    for claim in SEED_CLAIMS:
        for setup in claim.setups:
            cmp = setup.compare
            for spec in (cmp.a, cmp.b):
                found = [v for v, p in everything if in_benchmarks(v.benchmark, cmp.benchmarks) and matches(p, spec)]
                assert found, f"{claim.key}: no {preset} variant of {cmp.benchmarks} has {dict(spec)}"
                out.setdefault(claim.key, []).extend(found)
    return out


def test_the_default_matrix_runs_the_seed_preset():
    import tomllib
    from pathlib import Path

    doc = tomllib.loads((Path(__file__).resolve().parent.parent / "matrix.toml").read_text())
    assert doc["matrix"]["preset"] == "seed"


def test_every_claim_has_both_sides_in_the_seed_preset():
    claims = _claim_variants("seed")
    assert set(claims) == {c.key for c in SEED_CLAIMS}


def test_claims_are_measured_at_the_seeds_sizes_except_the_declared_reductions():
    full = {_code_path(v): v for v, _ in _variants("full")}
    quick = {_code_path(v): v for v, _ in _variants("quick")}
    reduced_seen = set()
    for key, variants in _claim_variants("seed").items():
        for v in variants:
            seed_v = full.get(_code_path(v))
            assert seed_v is not None, f"{key}: {v.id} has no counterpart in full (the seed's sizes)"
            for name in SIZE_PARAMS & set(dict(v.params)):
                mine, theirs = _volume(v.param(name)), _volume(seed_v.param(name))
                if (v.benchmark, name) in REDUCED:
                    if mine < theirs:
                        reduced_seen.add((v.benchmark, name))
                    small = quick.get(_code_path(v))
                    assert mine <= theirs, f"{v.id}: {name} above the seed's"
                    if small is not None:
                        assert mine >= _volume(small.param(name)), f"{v.id}: {name} below quick's"
                else:
                    assert mine == theirs, f"{key}: {v.id} runs {name}={v.param(name)}, the seed's is " \
                                           f"{seed_v.param(name)}"
    assert reduced_seen == set(REDUCED)     # no stale declaration: each is really reduced somewhere


def test_claims_never_run_at_quicks_shrunken_shapes_where_the_seed_size_differs():
    quick = {v.id for v, _ in _variants("quick")}
    full = {v.id for v, _ in _variants("full")}
    for key, variants in _claim_variants("seed").items():
        for v in variants:
            if any((v.benchmark, n) in REDUCED for n in SIZE_PARAMS & set(dict(v.params))):
                continue
            assert v.id in full or v.id not in quick, f"{key}: {v.id} is quick's shrunken variant"
