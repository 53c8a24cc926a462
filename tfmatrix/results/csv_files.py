"""The one CSV writer of every CSV tfmatrix writes: text a spreadsheet shows, never runs.

A spreadsheet that opens a CSV takes a cell starting with ``=``, ``+``, ``-``
or ``@`` as a formula (and one starting with a tab or a carriage return as
one too, once it strips them): ``=HYPERLINK(...)`` or ``=cmd|...`` in a claim's
source, a cell's name or a benchmark's parameter from someone else's file
would run when a reader opens ``claims.csv`` (CSV injection). ``inert``
writes such text with a leading ``'``, as OWASP advises: the spreadsheet
shows it as text (the quote hidden), a script sees the quote and the text.
Numbers are never touched, neither numbers nor text that is just a number
("-1.5", "+3", "-12%", "1e-3", "-inf": what the writers make of a float),
nor a lone "-" (the frame's "none": a sign alone computes nothing), so a
good report's files do not change.

``csv_text``: rows (lists) as the writers wrote them (``csv.writer``, one
"\\n" a line); ``frame_csv``: a pandas frame as ``to_csv`` writes it, its text
columns made inert.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")   # what a spreadsheet takes as the start of a formula
QUOTE = "'"                                         # OWASP's prefix: the cell is text
NONE_MARK = "-"                                     # "none" in the frame (a cell without TF): a lone sign runs nothing
_NUMBER = re.compile(r"[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?%?|inf|infinity|nan)", re.IGNORECASE)


def is_number_text(text: str) -> bool:
    """Whether ``text`` is just a number as the writers format one ("-1.5", "+3", "-12%", "1e-3", "-inf")."""
    return _NUMBER.fullmatch(text) is not None


def inert(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet will not run: text starting with ``= + - @``, a tab or a CR gets a
    leading ``'``; anything not text (numbers, booleans, None), text that is just a number and a lone "-" is
    returned as it is."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if value == NONE_MARK or is_number_text(value):
        return value
    return QUOTE + value


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A CSV file's text: ``header``, then ``rows``, every cell through ``inert`` (None is an empty cell)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([inert(h) for h in header])
    w.writerows([inert(x) for x in row] for row in rows)
    return out.getvalue()


def frame_csv(df: pd.DataFrame, float_format: str) -> str:
    """``df`` as ``to_csv`` writes it (no index, ``float_format``, one "\\n" a line), its text made inert: only
    object/string columns are looked at, and only a column holding a cell that changes is replaced (as an object
    column again, so no other value in it is written differently)."""
    import pandas as pd

    out = df.copy()
    for col in out.columns:
        if out[col].dtype.kind != "O":
            continue
        values = [inert(v) for v in out[col]]
        if any(new is not old for new, old in zip(values, out[col], strict=True)):
            out[col] = pd.Series(values, index=out.index, dtype=object)
    out.columns = [inert(c) for c in out.columns]
    return str(out.to_csv(index=False, float_format=float_format, lineterminator="\n"))
