"""Debian's headless Chromium visiting the app, for the browser tests and the benchmarks: where
the browser is, its flags, what each page's first view draws, and the wait for Streamlit's
script run to end.

Playwright's own browser downloads are never used (``.ci/install-browser.sh`` installs Debian's
``chromium``). Pages are Playwright ``Page`` objects; this module never imports playwright.

Example::

    browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    page = browser.new_page()
    page.goto(url)
    wait_run_ended(page, timeout_ms=60_000)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

#: Each page and what its first view draws (the pages in the order a visitor meets them).
FIRST_VIEWS = (
    ("/", '[data-testid="stPlotlyChart"] .heatmaplayer'),
    ("/geometry", '[data-testid="stTable"]'),
    ("/senses", '[data-testid="stPlotlyChart"] .scatterlayer .point'),
    ("/corpus_map", '[data-testid="stPlotlyChart"] .legend'),
    ("/wsd", '[data-testid="stPlotlyChart"]'),
)

#: Streamlit's "Running..." indicator: shown while the script runs.
STATUS_WIDGET = '[data-testid="stStatusWidget"]'
#: A traceback shown in the page.
EXCEPTION = '[data-testid="stException"]'


def new_page(browser: Any, timeout_ms: float, width: int = 1280, height: int = 800) -> Any:
    """A new page of ``browser`` (Playwright's) at ``width`` x ``height`` (a projector's 1280 x
    800 by default), every wait on it bounded by ``timeout_ms``."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(timeout_ms)
    return page


def wait_run_ended(page: Any, timeout_ms: float | None = None, pause_ms: float = 300) -> None:
    """Wait until Streamlit's script run has ended: ``pause_ms`` for a rerun just asked for to
    begin, then until the status widget is hidden, at most ``timeout_ms`` (``None``: the
    page's default timeout). Raises Playwright's ``TimeoutError`` past it."""
    if pause_ms:
        page.wait_for_timeout(pause_ms)
    page.locator(STATUS_WIDGET).wait_for(state="hidden", timeout=timeout_ms)
