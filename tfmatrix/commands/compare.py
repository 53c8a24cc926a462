"""The ``compare`` command: two result sets side by side (pyperf's ``compare_to``), and a CI gate on them.

Per variant the time ratio B/A, its interval and a verdict
(``analysis.compare.sets``); ``--fail-on slower:PERCENT`` turns the clear
slowdowns beyond the threshold into exit code 1, offenders printed first.
With A a run archive (``reports/runs``: every run a report kept), B is read as
the newest run of each of its cells' series and judged by the series' step
rule instead (``_against_kept``): the archive is the baseline, not one run.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.markup import escape

from .options import add_csv, add_fail_on, add_rows, gate_head, gate_tail


def cmd_compare(args: argparse.Namespace) -> int:
    """Two result sets side by side (pyperf compare_to): per variant the time ratio B/A, its interval, a verdict."""
    from ..analysis.compare.sets import compare_paths
    from ..report.compare_view import compare_csv, compare_html, table_rows
    from ..results.store import write_text_atomic

    if _is_archive(Path(args.a)):
        return _against_kept(args)
    result = compare_paths(Path(args.a), Path(args.b), args.cell, args.normalise, [Path(k) for k in args.kept])
    offenders = result.offenders(args.fail_on) if args.fail_on is not None else []
    for line in gate_head(offenders, result.suspects(args.fail_on) if args.fail_on is not None else []):
        print(line)
    rows = table_rows(result, None if args.all else args.rows)
    if rows:
        shown = "all" if args.all or len(rows) == len(result.variants) else f"the {len(rows)} that moved most"
        print_table(rows, f"{len(result.variants)} variants, {shown}", ("A", "B", "B/A"))
    if args.csv:
        write_text_atomic(Path(args.csv), compare_csv(result))
    if args.html:
        write_text_atomic(Path(args.html), compare_html(result))
    for line in result.summary_lines():
        print(line)
    if args.fail_on is not None:
        print(f"tfmatrix: gate: {result.gate_line(args.fail_on)}")
        print(gate_tail(len(offenders), args.fail_on))
    return 1 if offenders else 0


def _is_archive(path: Path) -> bool:
    """A run archive: a directory holding the archive's index (``reports/runs``)."""
    from ..results.archive import INDEX_FILE

    return path.is_dir() and (path / INDEX_FILE).is_file()


def _against_kept(args: argparse.Namespace) -> int:
    """B against the kept runs in archive A: B's cells added to their series (in memory: nothing is written) and
    each series read by the step rule; ``--fail-on``: the series gate (``series --fail-on``: a confirmed step among
    each series' newest ``WITHIN`` runs fails it, a step in B alone is a suspect: the next run confirms it or not)."""
    from ..analysis.compare.sets import load_side
    from ..analysis.series.answers import WITHIN, gate
    from ..analysis.series.entries import with_cells
    from ..report.series_view import cell_lines, gate_lines
    from ..results.archive import Archive, digest_of, read_archive

    cells = [c for c in load_side(Path(args.b)) if not args.cell or c.name in args.cell]
    archive = read_archive(Path(args.a).parent)
    for line in archive.skipped:
        print(f"tfmatrix: warning: {line}", file=sys.stderr)
    runs = archive.runs
    newest = [r for c in cells for r in [r for r in runs if r.cell == c.name][-args.last:]]
    _, series = with_cells(Archive(tuple(sorted(newest, key=lambda r: r.finished))), cells, [])
    ours = {digest_of(c.path) for c in cells}
    series = [s for s in series if any(r.digest in ours for r in s.runs)]
    for s in series:
        print("\n".join(cell_lines(s)))
    if args.fail_on is None:
        return 0
    offenders, suspects = gate(series, args.fail_on, WITHIN)
    for line in gate_head(gate_lines(offenders, suspects)):
        print(line)
    print(gate_tail(len(offenders), args.fail_on, f" against the series in {args.a} (a confirmed step among each "
                                                  f"series' newest {WITHIN} runs, B the newest)"))
    return 1 if offenders else 0


def print_table(rows: list[list[str]], title: str, sides: tuple[str, str, str]) -> None:
    """``compare``'s terminal table (``report.compare_view.table_rows``); ``sides``: the two sides' and the ratio's
    column names."""
    from rich.table import Table

    from ..progress import table_console

    table = Table(title=title)
    for column in ("cell", "variant", *sides, "95% CI", "verdict"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(escape(x) for x in row))
    table_console().print(table)


def configure_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="RUN_A", help="a directory of cell files (a copy of reports/cells) or one cell file; "
                   "or a run archive (reports/runs): B then joins each of its cells' series, judged by its steps")
    p.add_argument("b", metavar="RUN_B", help="the same for the other side; two files compare two different cells")
    p.add_argument("--cell", action="append", default=[], metavar="NAME", help="only this cell (repeatable)")
    p.add_argument("--last", type=int, default=10, metavar="N", help="with A a run archive: each cell's newest N "
                   "kept runs are its baseline (default 10)")
    add_rows(p)
    p.add_argument("--all", action="store_true", help="show every variant")
    add_csv(p, "every variant's row as CSV")
    p.add_argument("--html", metavar="FILE", help="write the comparison as a self-contained HTML page")
    add_fail_on(p)
    p.add_argument("--kept", action="append", default=[], metavar="DIR",
                   help="an earlier run of the same cells, neither A nor B (a directory of cell files; repeatable): "
                        "each variant's own noise in the kept runs is the prior of its variance; with 2 or more, how "
                        "far each variant's runs wander beyond their rounds joins its interval (without --kept: from "
                        "the run archive beside A or B); with 3 or more, each cell's move between A and B is also "
                        "judged against how far its runs wander")
    p.add_argument("--normalise", choices=("auto", "none", "cell", "control", "host", "run"), default="auto",
                   help="take a common move of B out of every ratio: cell, each cell's own (shown, not judged: one "
                        "run a side cannot tell a whole cell's move from the run's drift, and a slowdown of a whole "
                        "slice or cell cannot fail the gate); control, each cell's move measured by its containers' "
                        "reference workload (a whole cell getting slower is judged); host, the host's reference "
                        "workload; run, the median ratio of every variant compared; auto (default): cell when both "
                        "sides are the same cells, else none")
