"""Explain's profiles: why one side of a comparison is slower, from its profiles.

``profiles`` lines two cProfile profiles up per call of the step (and reads
the profiles file, ``load_profiles``: the one reader here), ``calltree``
rebuilds their call trees, ``ops`` reads TensorFlow's op tables. Nothing
here imports the rest of ``analysis/``: the ``explain`` command, the Why
section and bisect's why take a comparison's two variants to it.
"""
