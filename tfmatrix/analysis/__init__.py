"""Analysis: what the loaded cells answer (frame, pairing, findings, claims, compare, upgrade, ...).

``statistics/`` (the verdict statistics) and ``explain/`` (explain's profiles)
import nothing else of analysis/. ``statistics/`` is pure; so is the rest,
but for the modules that read files: ``cells`` (``load_dir``, ``load_file``:
cell files and their logs), ``compare`` (``load_side``, ``compare_paths``:
compare's two sides, the noise history beside them) and ``claim_file``
(``read_toml``, ``builtin_family``: the claims files, the built-in families in
``tfmatrix/data/claims/`` and a user's own). The other documents are
records read in ``results/`` (``profile_docs``, ``noise_history``,
``journal``, ``history_docs``). Nothing here draws a page or parses arguments:
``report/`` presents what this computes, ``history/`` and ``commands/`` call it.
"""
