"""The Streamlit app (``app.py``) run as a child process, and the waits for it: for the browser
tests and the benchmarks.

:class:`AppServer` starts ``python -m streamlit run app.py`` headless on a free port of 127.0.0.1
in its own process group, waits until its health endpoint answers, and stops the whole group
(SIGTERM, then SIGKILL). :func:`wait_preloaded` waits for the server's preload
(``/_workbench/preload``, :mod:`webapp.startup`). Every wait has a deadline and raises
``TimeoutError`` past it. Never imports streamlit itself.

A server is slow to start (it imports torch and preloads the model and every page's default
view), so the browser tests share one (:class:`Started`); a test that must be the first visitor
of a fresh server takes it through :func:`fresh`.

Example:
    >>> with AppServer(repo_dir) as url:      # doctest: +SKIP
    ...     wait_preloaded(url, limit=300)["ready"]
    True
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    """``streamlit run app.py`` in ``repo`` as a context manager yielding the app's URL.

    Args:
        repo: directory holding ``app.py``.
        env: extra environment variables for the server.
        log: file the server's output goes to (default: discarded).
        timeout: seconds to wait for the health endpoint.
        watcher: keep Streamlit's file watcher as ``.streamlit/config.toml`` sets it (what a
            user's ``streamlit run app.py`` gets; the benchmark); default off (tests).
        options: more ``streamlit run`` options, e.g. ``["--runner.postScriptGC", "true"]``
            (they override ``.streamlit/config.toml``; a benchmark's baseline).
    """

    def __init__(
        self,
        repo: Path,
        env: dict[str, str] | None = None,
        log: IO[str] | None = None,
        timeout: float = 90,
        watcher: bool = False,
        options: list[str] | None = None,
    ) -> None:
        self.repo = Path(repo)
        self.watcher = watcher
        self.options = list(options or [])
        self.env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", **(env or {})}
        self.log = log
        self.timeout = timeout
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> subprocess.Popen:
        """Start the server process (returns at once; see :meth:`wait_healthy`)."""
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless",
                "true",
                "--server.port",
                str(self.port),
                "--server.address",
                "127.0.0.1",
                *([] if self.watcher else ["--server.fileWatcherType", "none"]),
                *self.options,
            ],
            cwd=self.repo,
            env=self.env,
            stdout=self.log if self.log is not None else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if self.log is not None else subprocess.DEVNULL,
            start_new_session=True,
        )
        return self.proc

    def wait_healthy(self) -> None:
        """Block until ``/_stcore/health`` answers ``ok``; raise if the server dies or is late
        (``timeout`` seconds)."""
        if self.proc is None:
            raise RuntimeError("the server was not started: call start() first")
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited early with code {self.proc.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as resp:
                    if resp.read().strip() == b"ok":
                        return
            except OSError:
                time.sleep(0.05)
        raise TimeoutError(f"streamlit did not answer on {self.url} within {self.timeout:.0f} s")

    def stop(self) -> None:
        """Stop the server's whole process group: SIGTERM, then SIGKILL after 15 s."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def __enter__(self) -> str:
        self.start()
        try:
            self.wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.stop()


def preload_status(url: str) -> dict[str, Any]:
    """The server's preload report (``GET /_workbench/preload``): ``{"ready": bool, "steps":
    [{"name", "state", "seconds", "error"}, ...]}`` (no steps while its thread is importing)."""
    with urllib.request.urlopen(f"{url}/_workbench/preload", timeout=10) as resp:
        return json.loads(resp.read())


def wait_preloaded(url: str, step: str | None = None, limit: float = 300) -> dict[str, Any]:
    """Poll the server's preload report every 0.5 s until ``step`` is done or failed (``None``:
    until the whole preload is ready), at most ``limit`` seconds; return the last report.

    Raises:
        TimeoutError: past ``limit``.
    """
    end = time.monotonic() + limit
    while time.monotonic() < end:
        status = preload_status(url)
        if step is None and status["ready"]:
            return status
        if step is not None:
            state = {s["name"]: s["state"] for s in status["steps"]}.get(step)
            if state in ("done", "failed"):
                return status
        time.sleep(0.5)
    what = "the preload" if step is None else step
    raise TimeoutError(f"{what} did not finish within {limit:.0f} s")


class Started:
    """A running server shared by several tests, and whether a test has opened it yet."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.used = False

    def take(self) -> str:
        """The URL, for a test that does not need the server untouched."""
        self.used = True
        return self.url


@contextlib.contextmanager
def fresh(
    started: Started, repo: Path, log: Path, env: dict[str, str] | None = None
) -> Iterator[str]:
    """The URL of a server no test has opened yet: ``started`` while untouched (it is then
    marked used, and the tests after this one share it), else a server of this test's own
    (``env`` its environment, ``log`` its output), stopped at the end."""
    if not started.used:
        yield started.take()
        return
    with open(log, "w") as out, AppServer(repo, env=env, log=out) as url:
        yield url
