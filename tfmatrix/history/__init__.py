"""When did it change: the releases between two ends, searched (``bisect``), for a claim or one variant.

``axis`` knows the releases (TensorFlow's, or Keras 3's on one TF), ``search``
is the bisection itself (pure), ``targets`` what each probe measures and
``bisect`` runs the probes as ordinary cells and says what it found.
"""
