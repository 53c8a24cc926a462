"""A tiny Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (stdlib only).

Chromium reads NUL-terminated JSON commands from fd 3 and writes
NUL-terminated JSON replies and events to fd 4, so no websocket library is
needed. Used by tests/test_report_browser.py; also handy by hand::

    with Chromium.start(tmp_path) as browser:
        page = browser.open_page("file:///.../index.html")
        page.evaluate("document.title")
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
         "--remote-debugging-pipe")


def find_chromium() -> str | None:
    env = os.environ.get("TFMATRIX_CHROMIUM")
    if env:
        return env if shutil.which(env) or Path(env).exists() else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium process driven through the pipe."""

    def __init__(self, proc: subprocess.Popen[bytes], to_browser: int, from_browser: int) -> None:
        self.proc = proc
        self._out = to_browser
        self._in = from_browser
        self._next = 0
        self._lock = threading.Lock()
        self._buf = b""
        self.events: list[dict[str, Any]] = []

    @classmethod
    @contextmanager
    def start(cls, profile: Path, binary: str | None = None, width: int = 1400,
              height: int = 1000) -> Iterator[Chromium]:
        binary = binary or find_chromium()
        if binary is None:
            raise FileNotFoundError("chromium not found")
        profile.mkdir(parents=True, exist_ok=True)
        # fd 3: Chromium reads commands; fd 4: Chromium writes replies.
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        args = [binary, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                "about:blank"]

        def child_fds() -> None:
            # Move both ends out of the way first, so neither is clobbered if it already is 3 or 4;
            # os.dup2 makes 3 and 4 inheritable, the pipe's own fds are closed on exec.
            high_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 64)
            high_w = fcntl.fcntl(res_w, fcntl.F_DUPFD_CLOEXEC, 64)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        with open(profile / "chromium.stderr.log", "wb") as stderr:
            # close_fds=False: fds 3 and 4 made in preexec_fn must survive; Python's own fds are not inheritable.
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                                    preexec_fn=child_fds, close_fds=False)
        os.close(cmd_r)
        os.close(res_w)
        browser = cls(proc, cmd_w, res_r)
        try:
            yield browser
        finally:
            browser.close()

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._out, self._in):
            try:
                os.close(fd)
            except OSError:
                pass

    # -- protocol ------------------------------------------------------------

    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from chromium")
            ready, _, _ = select.select([self._in], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise CDPError(f"chromium closed the pipe (exit code {self.proc.poll()})")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        msg: dict[str, Any] = json.loads(raw)
        return msg

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 30.0) -> dict[str, Any]:
        with self._lock:
            self._next += 1
            msg_id = self._next
            msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            os.write(self._out, json.dumps(msg).encode() + b"\0")
            deadline = time.monotonic() + timeout
            while True:
                reply = self._read_message(deadline)
                if reply.get("id") == msg_id:
                    if "error" in reply:
                        raise CDPError(f"{method}: {reply['error']}")
                    result: dict[str, Any] = reply.get("result") or {}
                    return result
                if "method" in reply:
                    self.events.append(reply)

    def wait_event(self, method: str, session: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev.get("method") == method and (session is None or ev.get("sessionId") == session):
                    return self.events.pop(i)
            with self._lock:
                msg = self._read_message(deadline)
            if "method" in msg:
                self.events.append(msg)

    def open_page(self, url: str, width: int = 1400, height: int = 1000) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log"):
            page.send(domain + ".enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        page.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", session)
        return page


class Page:
    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        return self.browser.send(method, params, self.session, timeout)

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise CDPError(f"evaluate {expression[:80]!r}: {reply['exceptionDetails']}")
        return (reply.get("result") or {}).get("value")

    def console_problems(self) -> list[str]:
        """Console errors/warnings, uncaught exceptions and failed loads seen so far on this page."""
        out = []
        for ev in self.browser.events:
            if ev.get("sessionId") != self.session:
                continue
            method, params = ev.get("method"), ev.get("params") or {}
            if method == "Runtime.exceptionThrown":
                out.append(f"exception: {(params.get('exceptionDetails') or {}).get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
                text = " ".join(str(a.get("value", a.get("description"))) for a in params.get("args") or [])
                out.append(f"console.{params.get('type')}: {text}")
            elif method == "Log.entryAdded" and (params.get("entry") or {}).get("level") in ("error", "warning"):
                entry = params["entry"]
                out.append(f"log {entry.get('level')} ({entry.get('source')}): {entry.get('text')} "
                           f"{entry.get('url') or ''}")
        return out

    def screenshot(self, path: Path, full_page: bool = True, clip: dict[str, float] | None = None) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if clip is not None:
            params["clip"] = dict(clip, scale=1)
            params["captureBeyondViewport"] = True
        elif full_page:
            metrics = self.send("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params, timeout=60)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
