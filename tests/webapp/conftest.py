"""The app's server for the browser tests: one per session (a start imports torch and preloads the
model and every page's default view), shared by every test that needs no fresh server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.appserver import AppServer, Started

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
