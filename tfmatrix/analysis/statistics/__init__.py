"""The verdict statistics: one estimator, its test, the moderated variances and the many-comparisons rules.

Pure functions of numbers (numpy, scipy): ``stats`` (descriptive, of raw
samples), ``inference`` (the one estimator, its unit and its test),
``moderation`` (families of comparisons: ``judge``, the rule every verdict
uses), ``multiplicity`` (false discoveries, the gate) and ``tails`` (how far an
unchanged contrast strays on this host: the gate's null for one-process
variants, the one table read here) and ``steps`` (a series of runs: its
steps, a whole cell's move in each run, the wander between runs; the one
common move that ``series``, ``runs.kept`` and ``runs.run_level`` read).
Nothing here knows
a cell or a frame, and nothing imports the rest of ``analysis/``: the
questions asked of cells come down to these, never the other way round.
"""
