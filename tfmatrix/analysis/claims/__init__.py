"""The questions the report answers, and how: claims as records (``records``), read from TOML (``files``), a
user's checked against the catalogue and the matrix (``checks``, ``sources``), answered at their own
configurations (``answers``); the seeds' findings (``findings``) and how a finding pairs variants (``pairing``).

Nothing is imported here: ``records`` is read by the matrix and execution layers, which must not pull in the
answering half (pandas, the statistics) through this package.
"""
