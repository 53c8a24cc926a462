"""Two result sets side by side: how far each variant moved, and whether the report's answers held.

``sets`` (the comparison: per variant the one rule's ratio, interval and
verdict; the readers of its two sides), ``result`` (what it found, the CI
gate), ``agreement`` (how far two runs agree), ``ab`` (A/B inside one run,
read as ``compare`` reads) and ``upgrade`` (the report's pair of cells).
The noise between runs comes from ``runs/``, the verdicts from
``statistics/``.
"""
