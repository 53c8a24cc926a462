"""tfmatrix: TensorFlow/Keras performance across versions, reproducibly (host side)."""

__version__ = "0.1.0"
