"""The ray runner and Ray's token authentication: when joining is worth a warning, when a refusal is the token's.

A Ray task is root on every node here (the node's worker drives its Docker
engine), so whoever reaches a cluster without token authentication owns
every node. Joining one over the network without ``RAY_AUTH_MODE=token``
prints a warning line (``unauthenticated``, ``auth_warning``); a cluster
that refuses this driver's token is one error line saying what to set
(``auth_refused``), with Ray's own log lines about it left out
(``refusals_dropped``). docs/many-machines.md, "Securing the cluster", is what the
lines point to.
"""
from __future__ import annotations

import contextlib
import ipaddress
import os
import sys
import threading
from collections.abc import Iterator, Mapping

SECURING = "docs/many-machines.md#securing-the-cluster"
AUTH_MODE_ENV = "RAY_AUTH_MODE"     # Ray's switch for token authentication (Ray >= 2.52): "token" turns it on


def address_host(address: str) -> str | None:
    """The host a cluster address names (``ray://HOST:PORT``, ``HOST:PORT``, a GCS address); None for ``auto``."""
    if address == "auto":
        return None
    host = address.removeprefix("ray://")
    if host.startswith("["):                      # [::1]:6379
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (127.0.0.0/8, ::1, localhost): nothing else can reach it."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def token_auth(environ: Mapping[str, str]) -> bool:
    """Whether this process uses Ray's token authentication (``RAY_AUTH_MODE=token``)."""
    return environ.get(AUTH_MODE_ENV, "").strip().lower() == "token"


def unauthenticated(host: str | None, environ: Mapping[str, str]) -> bool:
    """Whether joining a cluster at ``host`` goes over the network without token authentication.

    A driver without ``RAY_AUTH_MODE=token`` that joined at all joined a
    cluster that asks no token (one that asks refuses it), so the cluster is
    open to whoever reaches its ports: worth a warning unless ``host`` is
    loopback. ``None`` (``auto`` whose cluster address is unknown): nothing
    to say.
    """
    return host is not None and not loopback(host) and not token_auth(environ)


def auth_warning(address: str, host: str | None, environ: Mapping[str, str]) -> str | None:
    """The one warning line for joining ``address`` (at ``host``) without token authentication, or None."""
    if not unauthenticated(host, environ):
        return None
    at = address if address_host(address) == host else f"{address} ({host})"
    return (f"the Ray cluster at {at} runs without token authentication (this driver has no "
            f"{AUTH_MODE_ENV}=token and was let in): anyone who reaches its ports can run any code on every node, "
            f"as root through its Docker engine; turn it on for every node and here: {SECURING}")


def auth_refused(error: BaseException) -> bool:
    """Whether joining failed because the cluster asks a token this driver lacks or has wrong.

    Ray raises ``ConnectionError`` from its ``AuthenticationError`` ("InvalidAuthToken"); the cause is read
    by name, so this needs no Ray to answer.
    """
    seen: BaseException | None = error
    for _ in range(8):                        # a cause chain, never a cycle
        if seen is None:
            return False
        if type(seen).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


REFUSAL_MARK = b"InvalidAuthToken"     # in each line Ray's C++ client logs while a cluster refuses its token


@contextlib.contextmanager
def refusals_dropped() -> Iterator[None]:
    """For the block, stderr (file descriptor 2) as it is, less Ray's lines about a refused token.

    Ray's C++ client logs to fd 2 directly, past Python's logging and
    ``sys.stderr``: a cluster that refuses this driver's token gets a line a
    second for about 20 s before ``ray.init`` gives up, and tfmatrix then says
    what happened in its own one line. Every other line passes as it comes
    (a wrong address's "Failed to connect to GCS" lines are the only sign of
    life for minutes). A relay thread reads fd 2's lines from a pipe; it owns
    its own copy of the real stderr, so a child that kept the pipe open can
    never make it write to a closed descriptor.
    """
    try:
        sys.stderr.flush()
        real, out = os.dup(2), os.dup(2)
        read_end, write_end = os.pipe()
    except (OSError, ValueError):              # no fd 2 (stderr closed): nothing to filter
        yield
        return

    def relay() -> None:
        with os.fdopen(read_end, "rb") as lines, os.fdopen(out, "wb", buffering=0) as stderr:
            for line in lines:
                if REFUSAL_MARK not in line:
                    stderr.write(line)

    thread = threading.Thread(target=relay, name="tfmatrix-stderr-relay", daemon=True)
    thread.start()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    finally:
        sys.stderr.flush()                     # Python's own lines meanwhile, through the relay in their order
        os.dup2(real, 2)                       # the pipe's last write end closes: the relay reads to its end
        os.close(real)
        thread.join(timeout=5.0)
