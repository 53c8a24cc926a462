"""nox sessions: thin wrappers around ``python -m tfmatrix <command>``.

Everything real lives in the tfmatrix package, so each step also works without
nox; arguments after ``--`` are forwarded (``nox -s list -- --matrix other.toml``).
"""
from __future__ import annotations

import nox

nox.options.reuse_venv = "yes"
nox.options.sessions = ["validate"]


def _tfmatrix(session: nox.Session, command: str) -> None:
    """Install the host package (editable) and run one tfmatrix command."""
    session.install("-e", ".")
    session.run("python", "-m", "tfmatrix", command, *session.posargs)


@nox.session
def validate(session: nox.Session) -> None:
    """Check matrix.toml against the compatibility table."""
    _tfmatrix(session, "validate")


@nox.session(name="list")
def list_(session: nox.Session) -> None:
    """Print the resolved cells as a table (name, TF, Keras, Python, target, CUDA, base, tag)."""
    _tfmatrix(session, "list")


@nox.session
def render(session: nox.Session) -> None:
    """Write build/images/<cell>/{Dockerfile,requirements.txt,cell.json}."""
    _tfmatrix(session, "render")


# More sessions (wheels, base-images, run, report) go here, one _tfmatrix call each.
