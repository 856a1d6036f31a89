"""The app in a real browser: Debian's headless Chromium driven by Playwright for Python.

The test starts ``streamlit run app.py`` on a free port of 127.0.0.1 in its own process group and
stops it (and everything it started) at the end. Screenshots go to ``test-artifacts/``.
Chromium comes from Debian's ``chromium`` package (``.ci/install-browser.sh``); Playwright's own
browser downloads are never used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.appserver import CHROMIUM, CHROMIUM_ARGS, AppServer

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SLOW_MS = 180_000  # first UMAP of a process compiles numba code (~20-30 s on 2 busy cores)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """URL of a running app; the server is stopped after the module's tests."""
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "streamlit-server.log", "w") as log:
        app = AppServer(REPO, log=log)
        with app as url:
            yield url
    assert app.proc.poll() is not None


@pytest.fixture(scope="module")
def browser_page(server, tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: run .ci/install-browser.sh")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1500, "height": 1400},
        )  # fmt: skip
        page = context.new_page()
        page.set_default_timeout(SLOW_MS)
        try:
            yield page
        finally:
            context.close()


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, "a traceback is shown"


def _idle(page) -> None:
    """Wait until Streamlit has finished running the script."""
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=SLOW_MS)


def test_explore_type_a_sentence_pick_a_word_see_the_heatmap(browser_page, server):
    page = browser_page
    page.goto(server)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.locator(".main-svg").first.wait_for()
    area = page.locator('[data-testid="stTextArea"] textarea')
    area.fill(
        "The prisoner paced his narrow cell all night.\n"
        "Every living cell needs energy.\n"
        "My cell rang during the school play.\n"
        "The children play cards in the cell block.\n"
        "They play chess after lunch."
    )
    area.press("Control+Enter")
    _idle(page)
    page.get_by_role("radio", name="cell ×4", checked=True).wait_for()  # the default word
    page.get_by_role("radio", name="play ×3").click()
    _idle(page)
    page.get_by_role("radio", name="play ×3", checked=True).wait_for()
    # while the rerun draws, Streamlit shows the stale "cell" heading beside the new one:
    # wait for the new heading, then for the stale one to go
    page.get_by_text("“play”: similarity to occurrence 1, layer by layer").wait_for(timeout=SLOW_MS)
    stale = page.get_by_text("“cell”: similarity to occurrence 1")
    stale.wait_for(state="detached", timeout=SLOW_MS)
    assert "play" in page.locator("h3").first.inner_text()
    chart.locator(".heatmaplayer").first.wait_for()
    chart.locator(".ytick text", has_text="[play]").first.wait_for(timeout=SLOW_MS)
    ticks = chart.locator(".ytick text").all_text_contents()
    assert sum("[play]" in t for t in ticks) == 3, ticks
    _idle(page)
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "explore.png"), full_page=True)


def test_senses_page_draws_the_umap_plot(browser_page, server):
    page = browser_page
    page.goto(server)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Senses").click()
    page.get_by_text("Sense clusters").first.wait_for()
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    points = chart.locator(".scatterlayer .point")
    points.first.wait_for()
    assert points.count() >= 30  # the demo text of the first word, plus the centroids
    legend = chart.locator(".legendtext").all_text_contents()
    assert any("%" in t for t in legend), legend  # sense keys in the legend
    _idle(page)
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "senses.png"), full_page=True)


@pytest.mark.parametrize(
    ("page_name", "heading", "shot"),
    [("Geometry", "Geometry of the layers", "geometry.png"),
     ("WSD", "Word sense disambiguation", "wsd.png")],
)  # fmt: skip
def test_other_pages_render_a_chart(browser_page, server, page_name, heading, shot):
    page = browser_page
    page.goto(server)
    page.locator('[data-testid="stSidebarNav"]').get_by_text(page_name, exact=True).click()
    page.get_by_text(heading).first.wait_for()
    page.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for()
    _idle(page)
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / shot), full_page=True)


def test_senses_upload_refuses_a_binary_file_and_plots_a_text_file(browser_page, server, tmp_path):
    page = browser_page
    page.goto(server)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Senses").click()
    page.get_by_text("Sense clusters").first.wait_for()
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Occurrences from").click()
    page.get_by_role("option", name="a text file").click()
    _idle(page)
    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(picture)
    page.get_by_text("photo.png is not a text file").wait_for()
    _no_exception(page)
    text = tmp_path / "banks.txt"
    text.write_text(
        "The bank lent us money.\nWe swam to the far bank.\nThe bank closed early.\n"
        "Reeds grew on the river bank.\nHer bank charges fees.\n",
        encoding="utf-8",
    )
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(text)
    page.get_by_text("5 occurrences of “bank” from a text file").wait_for()
    page.locator('[data-testid="stPlotlyChart"] .scatterlayer .point').first.wait_for()
    _idle(page)
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "senses-upload.png"), full_page=True)
