"""Provisioning: what a cell is built from (rendered Dockerfiles, base images, wheels, host interpreters)."""
