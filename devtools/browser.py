"""Debian's headless Chromium visiting the app, for the browser tests and the benchmarks: where
the browser is, its flags, what each page's first view draws, the wait for Streamlit's
script run to end and the choice of a select box's option.

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

#: The frame of a kept chart (:mod:`webapp.kept_chart`): a plotly chart in its own document.
KEPT_CHART = 'iframe[title="webapp.kept_chart.kept_chart"]'


def in_kept_chart(selector: str) -> str:
    """A Playwright selector of ``selector`` inside a kept chart's frame (what
    ``page.frame_locator(KEPT_CHART).locator(selector)`` finds, as one string)."""
    return f"{KEPT_CHART} >> internal:control=enter-frame >> {selector}"


#: Each page and what its first view draws (the pages in the order a visitor meets them).
FIRST_VIEWS = (
    ("/", '[data-testid="stPlotlyChart"] .heatmaplayer'),
    ("/geometry", '[data-testid="stTable"]'),
    ("/senses", '[data-testid="stPlotlyChart"] .scatterlayer .point'),
    ("/corpus_map", in_kept_chart(".legend")),
    ("/wsd", '[data-testid="stPlotlyChart"]'),
)

#: The popovers of a figure's or a table's download buttons (:mod:`webapp.downloads`).
DOWNLOADS = '[data-testid="stPopover"]:has-text("Download the")'
#: The body of the open popover (the browser mounts a popover's content only while it is open).
POPOVER_BODY = '[data-testid="stPopoverBody"]'


def open_downloads(menu: Any) -> Any:
    """Open the downloads popover ``menu`` (a Locator of :data:`DOWNLOADS`) and return the
    buttons in it (a Locator); press Escape to close it again. Click them with
    ``dispatch_event("click")``: a popover opened by Playwright below the first screen can lie
    outside the window (Playwright's scroll to the button does not hold; a visitor's does)."""
    menu.locator("button").first.click()
    buttons = menu.page.locator(POPOVER_BODY).locator(
        '[data-testid="stDownloadButton"] button:visible'
    )  # visible: a button with help is in the page twice
    buttons.first.wait_for()
    return buttons


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
    begin, then until the status widget is hidden and every kept chart has drawn the figure
    it was sent last (:func:`wait_charts_drawn`), at most ``timeout_ms`` each (``None``: the
    page's default timeout). Raises Playwright's ``TimeoutError`` past it."""
    if pause_ms:
        page.wait_for_timeout(pause_ms)
    page.locator(STATUS_WIDGET).wait_for(state="hidden", timeout=timeout_ms)
    wait_charts_drawn(page, timeout_ms)


def choose_option(box: Any, option: str, timeout_ms: float, tries: int = 3) -> None:
    """Choose ``option`` (its label, exactly) in the select box ``box`` (a Locator of a
    ``stSelectbox``), as a visitor would: open it, type the label (the list shows only the
    options that match, so a long list's far options are drawn too) and click the option.

    A script run that starts meanwhile can draw the box anew and close its list: then the
    list is closed with Escape, the run awaited and the box opened again, ``tries`` times in
    all within ``timeout_ms``. Raises ``TimeoutError`` when the option never shows."""
    page = box.page
    wanted = page.get_by_role("option", name=option, exact=True)
    for _ in range(tries):
        box.click()
        page.keyboard.press("ControlOrMeta+A")  # what an earlier try typed is replaced
        page.keyboard.type(option)
        try:
            wanted.wait_for(timeout=timeout_ms / tries)
        except Exception:  # Playwright's TimeoutError (this module never imports playwright)
            page.keyboard.press("Escape")
            wait_run_ended(page, timeout_ms)
            continue
        wanted.click()
        return
    raise TimeoutError(f"the option {option!r} did not show in {tries} openings of its box")


#: True in a kept chart's frame once it has drawn the last figure it was sent.
_DRAWN = (
    "() => !!document.body && !!document.body.dataset.drawn && "
    "document.body.dataset.drawn === document.body.dataset.received"
)


def wait_charts_drawn(page: Any, timeout_ms: float | None = None) -> None:
    """Wait until every kept chart of ``page`` (:mod:`webapp.kept_chart`) has drawn the last
    figure it was sent: its frame draws after Streamlit's run has ended, in its own document."""
    for frame in page.frames:
        if "/component/webapp.kept_chart.kept_chart/" not in frame.url:
            continue
        try:
            frame.wait_for_function(_DRAWN, timeout=timeout_ms)
        except Exception:
            if not frame.is_detached():  # a chart removed from the page meanwhile has no draw
                raise
