"""A picture of the host: one fixed workload, timed between slices, the same binary every time.

The cells' own numbers cannot tell a slow TensorFlow from a slow host; a
fixed reference can. It runs in the tfmatrix process itself (the host's
Python, never a cell's), is pure Python (no numpy threads to schedule) and
takes about 15 ms here, the best of three: between two slices of a run it shows
how fast the machine was just then. The series goes into every cell file
(``config.host_speed``) and onto the report's chart of the run. The workload
is the suite's (``suite.reference``), which every slice also times inside
its cell.
"""
from __future__ import annotations

from suite.reference import REPEATS, probe

__all__ = ["REPEATS", "probe"]
