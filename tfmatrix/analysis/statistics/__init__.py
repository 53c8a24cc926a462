"""The verdict statistics: one estimator, its test, the moderated variances and the many-comparisons rules.

Pure functions of numbers (numpy, scipy): ``stats`` (descriptive, of raw
samples), ``inference`` (the one estimator, its unit and its test),
``moderation`` (families of comparisons: ``judge``, the rule every verdict
uses) and ``multiplicity`` (false discoveries, the gate). Nothing here knows
a cell or a frame, and nothing imports the rest of ``analysis/``: the
questions asked of cells come down to these, never the other way round.
"""
