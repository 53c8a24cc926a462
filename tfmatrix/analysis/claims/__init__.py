"""The questions the report answers, and how: claims as records (``records``), read from TOML (``files``), a
user's checked against the catalogue and the matrix (``checks``, ``sources``), answered at their own
configurations (``answers``), each side written in ``specs`` and paired with the other by ``pairing``. The seeds'
questions are claims with no side expected (``Claim.is_question``), read from ``tfmatrix/data/questions.toml``.

Nothing is imported here: ``records`` is read by the matrix and execution layers, which must not pull in the
answering half (pandas, the statistics) through this package.
"""
