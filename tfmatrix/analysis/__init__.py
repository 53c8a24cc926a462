"""Analysis: pure functions over loaded cells (frame, statistics, pairing, findings, claims, compare, upgrade).

Nothing here draws a page or parses arguments: ``report/`` presents what this
computes, ``history/`` and ``commands/`` call it.
"""
