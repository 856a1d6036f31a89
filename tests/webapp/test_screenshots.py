"""The screenshots of the app's user guide (``docs/app.md``): each page opened with its defaults in
Debian's headless Chromium at 1280 px and saved as ``<page>.png``. A page that shows an
exception, or a failure to load what its default view needs, fails its test (and its screenshot
is not written).

The pictures go to ``test-artifacts/screenshots/`` (ignored by git), so a test run leaves the
working tree as it was. After changing a page, refresh the guide's pictures and commit them with
the change::

    WORKBENCH_SCREENSHOTS_DIR=docs/img pytest tests/webapp/test_screenshots.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devtools.browser import EXCEPTION, FIRST_VIEWS, wait_run_ended

REPO = Path(__file__).resolve().parents[2]
#: Where the pictures go: ``WORKBENCH_SCREENSHOTS_DIR`` (relative to the repository), else the
#: ignored artifacts folder.
IMAGES = REPO / os.environ.get("WORKBENCH_SCREENSHOTS_DIR", "test-artifacts/screenshots")
SLOW_MS = 240_000  # a page's first view on a busy machine (the first UMAP compiles numba code)
#: The browser's window: the guide's pictures are this wide; Streamlit scrolls its main area
#: inside the window, so the picture is the window, the height chosen to show each default view.
WINDOW = {"width": 1280, "height": 1500}
#: Well under the guide's budget per picture.
MAX_BYTES = 500_000
#: Each page of the guide: its path, its picture's name, what its default view draws when ready.
PAGES = (
    *((path, path.strip("/") or "explore", view) for path, view in FIRST_VIEWS),
    ("/finetune", "finetune", '[data-testid="stButton"] button:has-text("Fine-tune")'),
)
#: What a page says when something failed: an unexpected exception (``webapp.feedback.user_errors``)
#: or a preload step that could not load (``webapp.startup.show_failures``).
FAILED = ("Something went wrong", "The server could not load")

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize(("path", "name", "view"), PAGES, ids=[p[1] for p in PAGES])
def test_each_page_s_default_view_is_pictured_for_the_guide(browser, server, path, name, view):
    page = browser.new_page(viewport=WINDOW)
    page.set_default_timeout(SLOW_MS)
    try:
        page.goto(f"{server}{path}")
        page.locator(view).first.wait_for()
        wait_run_ended(page, SLOW_MS)
        page.wait_for_timeout(500)  # plotly's last layout pass after the run
        assert page.locator(EXCEPTION).count() == 0, f"{path}: a traceback is shown"
        text = page.locator('[data-testid="stMain"]').inner_text()
        for failed in FAILED:
            assert failed not in text, f"{path}: {failed} ..."
        IMAGES.mkdir(parents=True, exist_ok=True)
        picture = IMAGES / f"{name}.png"
        page.screenshot(path=str(picture))
    finally:
        page.close()
    size = picture.stat().st_size
    assert size < MAX_BYTES, f"{picture.name}: {size:,} bytes"
