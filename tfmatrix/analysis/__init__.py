"""Analysis: what the loaded cells answer (frame, claims and questions, the stopping rule, devices, ...).

Six subfolders, one concern each. ``claims/`` (the questions: claims as records and TOML, a user's
checked, each answered, the seeds' questions among them, and their pairing) reads the cells and their frame.
``statistics/`` (the verdict statistics)
and ``explain/`` (explain's profiles) import nothing else of analysis/;
``runs/`` (the noise between runs: a run's noise model, the runs kept
before, the run level, the control) reads the cells and their frame;
``series/`` (every kept run over time: the step rule, pure, and the series
per testbed and cell) reads the cells, their claims and ``runs/``;
``compare/`` (two result sets side by side) builds on those, on ``runs/``
and on ``claims.pairing``. All of it is pure but for the modules that read files:
``cells`` (``load_dir``, ``load_file``: cell files and their logs),
``compare.sets`` (``load_side``, ``compare_paths``: compare's two sides),
``runs.noise_model`` (``history_at``, ``history_beside``: the noise the run
archive kept), ``claims.files`` (``read_toml``,
``builtin_family``: the claims files, the built-in families in
``tfmatrix/data/claims/`` and a user's own) and ``statistics.tails``
(``one_process``: this host's null table, ``tfmatrix/data/noise_tails.toml``).
The other documents are records read in ``results/`` (``profile_docs``,
``archive``, ``journal``, ``history_docs``). Nothing here draws a page
or parses arguments: ``report/`` presents what this computes, ``history/``
and ``commands/`` call it.
"""
