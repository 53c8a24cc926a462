"""nox sessions: thin wrappers around ``python -m tfmatrix <command>``.

Everything real lives in the tfmatrix package, so each step also works without
nox; arguments after ``--`` are forwarded (``nox -s list -- --matrix other.toml``).
"""
from __future__ import annotations

import re
import shutil
import subprocess

import nox

nox.options.reuse_venv = "yes"
nox.options.sessions = ["validate"]


def _tfmatrix(session: nox.Session, command: str) -> None:
    """Install the host package (editable) and run one tfmatrix command.

    ``--runner ray`` also installs Ray, at the version of the ``ray`` command on
    this host when there is one: a driver must run the cluster's Ray version.
    """
    session.install("-e", ".")
    if _wants_ray(session.posargs):
        session.install(_ray_requirement(_host_ray_version()))
    session.run("python", "-m", "tfmatrix", command, *session.posargs)


def _wants_ray(args: list[str]) -> bool:
    return "--runner=ray" in args or any(a == "--runner" and b == "ray" for a, b in zip(args, args[1:], strict=False))


def _host_ray_version() -> str | None:
    """The version of the ``ray`` on PATH (the one that started a local cluster), or None."""
    exe = shutil.which("ray")
    if exe is None:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"version\s+([0-9][0-9A-Za-z.+-]*)", out)
    return m.group(1) if m else None


def _ray_requirement(version: str | None) -> str:
    return "ray[default]==%s" % version if version else "ray[default]>=2.54"


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


@nox.session
def matrix(session: nox.Session) -> None:
    """Run every cell (Docker if an engine answers, else local venvs), then build reports/index.html."""
    _tfmatrix(session, "matrix")


@nox.session
def cell(session: nox.Session) -> None:
    """Run one cell: nox -s cell -- NAME [--preset P] [--bench PATTERN]; then refresh the report."""
    _tfmatrix(session, "cell")


@nox.session
def report(session: nox.Session) -> None:
    """Rebuild reports/index.html and results.csv from reports/cells/*.json (runs nothing)."""
    _tfmatrix(session, "report")


@nox.session
def compare(session: nox.Session) -> None:
    """Two result sets side by side: nox -s compare -- RUN_A RUN_B [--csv F] [--html F] (pyperf compare_to)."""
    _tfmatrix(session, "compare")


@nox.session
def bisect(session: nox.Session) -> None:
    """Which release changed a claim: nox -s bisect -- --claim NAME --good 2.1 --bad 2.0 [--patches] [--axis keras]."""
    _tfmatrix(session, "bisect")


@nox.session
def timeline(session: nox.Session) -> None:
    """Every claim across every TF minor release: nox -s timeline [-- --from 2.0 --to 2.9] [--axis keras]."""
    _tfmatrix(session, "timeline")


@nox.session
def disk(session: nox.Session) -> None:
    """What tfmatrix keeps on this disk (images, virtualenvs, wheels), who uses each, and what nothing uses."""
    _tfmatrix(session, "disk")


@nox.session
def prune(session: nox.Session) -> None:
    """Remove tfmatrix's images, virtualenvs and wheels that nothing uses (never another program's images)."""
    session.posargs[:0] = ["--prune"]
    _tfmatrix(session, "disk")


@nox.session
def wheels(session: nox.Session) -> None:
    """Download every wheel the cells need into the shared wheelhouse (for air-gapped hosts)."""
    _tfmatrix(session, "wheels")


@nox.session(name="base-images")
def base_images(session: nox.Session) -> None:
    """Build the cells' base images from this host (debootstrap + local CPython): no registry needed."""
    _tfmatrix(session, "base-images")


@nox.session
def tests(session: nox.Session) -> None:
    """Unit and end-to-end tests (real Docker, real TensorFlow, headless Chromium, a local Ray cluster); installs
    what they need (Ray from PyPI through the test extra)."""
    session.run("bash", "scripts/host-setup", external=True)
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


FAST = "not docker and not tf and not ray and not slow"


@nox.session(reuse_venv=True)
def fast(session: nox.Session) -> None:
    """The tests to run before every commit, about 1.5 minutes here: no Docker, TensorFlow, Ray, and none marked
    slow (the seeded calibrations and real processes, a second or more each: ``nox -s tests`` runs them). Its
    environment is kept between runs, so only the first one pays for the install."""
    session.install("-e", ".[test]")
    session.run("pytest", "-q", "-m", FAST, *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site (README + docs/) into build/site/ with mkdocs; fails on a broken link or page."""
    session.install("mkdocs>=1.6")
    session.run("python", "scripts/build_docs.py")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the host package, the suite, the tests and this file."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", "tfmatrix", "suite", "tests", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy over the host package."""
    session.install("-e", ".[lint]")
    session.run("mypy", "tfmatrix")
