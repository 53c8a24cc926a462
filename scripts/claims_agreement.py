"""Two runs' Claims, line by line, as their reports wrote them: how many lines agree, changed, reversed.

    python scripts/claims_agreement.py RUN_A/claims.csv RUN_B/claims.csv

Reads the ``claims.csv`` each run's report wrote (the verdicts the page showed:
a sequential run's at its per-look level, with the noise history it had), pairs
the lines by claim, cell and the two variant ids, and prints the agreement
figures of issue 40's goals: lines the same, changed, reversed; and, in each
run, the measured lines left "no clear difference" although their ratio is
beyond 1.3x either way, with how many rounds they rest on and why they stopped.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

FAR = 1.3


def lines(path: Path) -> dict[tuple[str, str, str, str], dict[str, str]]:
    with open(path, newline="") as f:
        return {(r["claim"], r["cell"] + (" vs " + r["ref_cell"] if r["ref_cell"] else ""), r["a_id"], r["b_id"]): r
                for r in csv.DictReader(f) if r["ratio"]}


def far_unclear(rows: dict[tuple[str, str, str, str], dict[str, str]]) -> list[str]:
    out = []
    for key, r in sorted(rows.items()):
        ratio = float(r["ratio"])
        if r["verdict"] == "no clear difference" and (ratio > FAR or ratio < 1 / FAR):
            out.append(f"{key[0]} {key[1]}: {ratio:.3g} [{r['ci_low']}, {r['ci_high']}] "
                       f"({r.get('rounds', '')} rounds; {r.get('stopped', '')})")
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", metavar="RUN_A_CLAIMS_CSV", type=Path, help="the first run's claims.csv")
    ap.add_argument("b", metavar="RUN_B_CLAIMS_CSV", type=Path, help="the second run's claims.csv")
    args = ap.parse_args(argv)
    a, b = lines(args.a), lines(args.b)
    common = sorted(set(a) & set(b))
    changed = [k for k in common if a[k]["verdict"] != b[k]["verdict"]]
    reversed_ = [k for k in changed if {a[k]["verdict"], b[k]["verdict"]} == {"holds", "reversed"}]
    print(f"measured Claims lines: {len(a)} and {len(b)}; in both {len(common)}: the same verdict "
          f"{len(common) - len(changed)}, changed {len(changed)}, reversed {len(reversed_)}")
    for k in changed:
        print(f"  changed: {k[0]} {k[1]}: {a[k]['verdict']} ({float(a[k]['ratio']):.3g}) -> {b[k]['verdict']} "
              f"({float(b[k]['ratio']):.3g})")
    for name, rows in (("first", a), ("second", b)):
        far = far_unclear(rows)
        unclear = sum(1 for r in rows.values() if r["verdict"] == "no clear difference")
        print(f"{name} run: {unclear} of {len(rows)} lines no clear difference, {len(far)} of them beyond {FAR}x")
        for text in far:
            print("  " + text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
