"""``compare`` A/A on real runs kept on disk: each consecutive pair, alone and with the runs before it kept.

Each directory is one run's reports (``<run>/cells``), given in the order
they ran; pairs of the same code back to back are the A/A. For each pair the
share of unchanged variants called different, with the rounds alone and with
up to five earlier runs as ``--kept`` (their variance prior and each
variant's run-to-run wander), and the smallest change resolved at the median
variant. The figures in docs/measurement.md ("Run-to-run wander").

``--tails``: over the pairs given (those of unchanged code), fit the gate's
null for one-process contrasts (``statistics.tails.fit_null``: the normal
scores of every variant with one process a side, compared with ``--keep``
runs before its pair kept) and print it: the numbers of
tfmatrix/data/noise_tails.toml ("The gate's one-process tail" in
docs/measurement.md).

    python scripts/bench_real_pairs.py RUN1 RUN2 RUN3 ... [--normalise cell|control] [--pairs 3:4,4:5]
        [--keep 5] [--tails]
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tfmatrix.analysis.compare.result import CompareResult  # noqa: E402
from tfmatrix.analysis.compare.sets import compare_paths  # noqa: E402
from tfmatrix.analysis.statistics.multiplicity import one_unit  # noqa: E402
from tfmatrix.analysis.statistics.tails import fit_null, score  # noqa: E402

KEEP = 5


def called(result: CompareResult) -> tuple[int, int, float, str]:
    """Unchanged variants called different, of how many judged; the median MDE; the gate's offenders (slower:10%),
    and its suspects (one process a side: what the t test alone would have failed)."""
    judged = [v for v in result.variants if v.ci.replicated]
    mdes = sorted(v.ci.mde for v in judged if math.isfinite(v.ci.mde))
    return (sum(1 for v in judged if v.verdict in ("slower", "faster")), len(judged),
            mdes[len(mdes) // 2] if mdes else math.nan,
            f"{len(result.offenders(0.10))} (suspects {len(result.suspects(0.10))})")


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--normalise", default="cell", choices=("cell", "control"))
    ap.add_argument("--pairs", default="", help="1-based pairs i:j of the runs given (default: each consecutive)")
    ap.add_argument("--keep", type=int, default=KEEP, help=f"earlier runs kept for each pair (default {KEEP})")
    ap.add_argument("--tails", action="store_true", help="fit the gate's one-process null over the pairs' contrasts")
    args = ap.parse_args(argv)
    scores: list[float] = []
    pairs = [tuple(int(x) - 1 for x in p.split(":")) for p in args.pairs.split(",") if p] or \
        [(i, i + 1) for i in range(len(args.runs) - 1)]
    for i, j in pairs:
        a, b = args.runs[i], args.runs[j]
        kept = [r / "cells" for r in args.runs[max(0, i - args.keep):i]]
        line = f"{a.name} -> {b.name} (--normalise {args.normalise}): rounds alone "
        n, total, mde, gate = called(compare_paths(a / "cells", b / "cells", normalise=args.normalise))
        line += f"{n}/{total} ({n / total:.1%}), MDE {mde:.0%}, gate slower:10% offenders {gate}"
        if kept:
            res = compare_paths(a / "cells", b / "cells", normalise=args.normalise, kept=kept)
            n, total, mde, gate = called(res)
            line += f"; {len(kept)} earlier runs kept {n}/{total} ({n / total:.1%}), MDE {mde:.0%}, offenders {gate}"
            scores += [score(v.contrast) for v in res.variants
                       if v.contrast is not None and v.contrast.replicated and one_unit(v.contrast)]
        print(line, flush=True)
    null = fit_null(scores) if args.tails else None
    if null is not None:
        print(f"one-process null over {len(scores)} contrasts: df = {null.df:.2f}, scale = {null.scale:.2f} "
              f"(tfmatrix/data/noise_tails.toml)")


if __name__ == "__main__":
    main(sys.argv[1:])
