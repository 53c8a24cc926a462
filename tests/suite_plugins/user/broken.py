"""A user benchmark file that cannot be imported (its package is not installed)."""
import a_package_this_cell_does_not_have  # noqa: F401

BENCHMARKS = []
