"""The catalogue. Each module lists its ``BENCHMARKS``; modules are loaded in name order."""
