"""Runners turn a rendered cell into results: in Docker containers or in local virtualenvs."""
