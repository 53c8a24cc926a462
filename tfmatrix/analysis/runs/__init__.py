"""The noise between runs: what one run measured of each variant's noise, and the runs kept before it.

``noise_model`` (a replicated run's unit variances, pooled over the noise
history), ``kept`` (each variant's own noise and run-to-run wander in the
runs a user kept), ``run_level`` (how far a whole cell moves between runs)
and ``control`` (the reference workload a change cannot touch). Pure
functions over loaded cells and their frame; nothing here imports
``compare/``: a comparison asks these, never the other way round.
"""
