"""tfmatrix's benchmark suite: runs inside every cell (Python 3.7+, numpy, TF/Keras only)."""

SUITE_VERSION = "1.0.0"
