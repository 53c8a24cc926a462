"""Execution: when each slice of each cell runs (the schedules, rounds, the host's speed, the run lock)."""
