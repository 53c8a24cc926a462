"""Explain's profiles: why one side of a comparison is slower, from its profiles.

``profiles`` lines two cProfile profiles up per call of the step (of a
cell's profiles file, ``results.profile_docs.ProfilesDoc``, read there),
``calltree`` rebuilds their call trees, ``ops`` reads TensorFlow's op
tables. It reads no file, and nothing here imports the rest of
``analysis/``: the ``explain`` command, the Why section and bisect's why take
a comparison's two variants to it.
"""
