"""Runners turn a rendered cell into results: in Docker containers, in local virtualenvs, or on a Ray cluster.

``base.Runner`` is the interface ``execution`` uses; ``common`` holds what every
runner shares.
"""
from .base import Runner

__all__ = ["Runner"]
