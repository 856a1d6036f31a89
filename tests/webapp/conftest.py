"""The app's server for the browser tests: one per session (a start imports torch and preloads the
model and every page's default view), shared by every test that needs no fresh server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.appserver import AppServer, Started
from devtools.browser import CHROMIUM, CHROMIUM_ARGS

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="session")
def app_server() -> Iterator[Started]:
    """The session's server (its default settings and the session's cache), stopped (and
    checked stopped) at the end of the session."""
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "streamlit-server.log", "w") as log:
        app = AppServer(REPO, log=log)
        with app as url:
            yield Started(url)
    assert app.proc is not None and app.proc.poll() is not None


@pytest.fixture(scope="module")
def server(app_server: Started) -> str:
    """The session's server's URL, for a module's browser tests (the first module to ask starts
    it)."""
    return app_server.take()


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through Playwright, one per test module (skipped without it)."""
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: run .ci/install-browser.sh")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
