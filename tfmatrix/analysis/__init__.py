"""Analysis: what the loaded cells answer (frame, pairing, findings, claims, compare, upgrade, ...).

``statistics/`` (the verdict statistics) and ``explain/`` (explain's profiles)
import nothing else of analysis/. ``statistics/`` is pure; so is the rest,
but for the modules that read files: ``cells`` (``load_dir``, ``load_file``:
cell files and their logs), ``noise_model`` (``load``, ``load_history``,
``history_at``, ``beside``: a kept noise model), ``compare`` (``load_side``,
``compare_paths``: compare's two sides) and ``explain.profiles``
(``load_profiles``). Nothing here draws a page or parses arguments:
``report/`` presents what this computes, ``history/`` and ``commands/`` call it.
"""
