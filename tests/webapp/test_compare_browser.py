"""Side by side, shareable links and downloads in a real browser (Debian's headless Chromium
driven by Playwright): a URL with settings reopens the same view, both panes render, and every
download button yields a file that parses and carries its settings.

The app runs as ``streamlit run app.py`` on a free port in its own process group (see
``devtools/appserver.py``; the session's, shared: ``tests/webapp/conftest.py``); PCA projections
keep the test clear of UMAP's numba compilation.
"""

from __future__ import annotations

import io
import json
import urllib.parse
from pathlib import Path

import pandas
import pytest

from devtools.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DOWNLOADS,
    POPOVER_BODY,
    open_downloads,
    wait_run_ended,
)
from workbench.viz.export import image_export_available, read_settings, settings_fields

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SLOW_MS = 240_000

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SENSES_LINK = {
    "source": "demo", "demo_word": "bass", "compare": "1", "a_layer": "3", "a_corr": "none",
    "b_layer": "6", "b_corr": "zscore", "method": "pca", "seed": "5",
}  # fmt: skip


@pytest.fixture(scope="module")
def context(server, tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: run .ci/install-browser.sh")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    profile = tmp_path_factory.mktemp("chromium-profile-compare")
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1600, "height": 1400}, accept_downloads=True,
        )  # fmt: skip
        ctx.set_default_timeout(SLOW_MS)
        try:
            yield ctx
        finally:
            ctx.close()


#: The panes' neighbour tables (Markdown tables of the main area).
PANE_TABLES = '[data-testid="stMain"] [data-testid="stMarkdown"] table'


def _idle(page) -> None:
    wait_run_ended(page, SLOW_MS)


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, "a traceback is shown"


def _selected(page, label: str, nth: int = 0) -> str:
    """The shown value of the ``nth`` selectbox labelled ``label`` (sidebar ones count)."""
    boxes = page.locator(f'[data-testid="stSelectbox"] input[aria-label="{label}"]')
    return boxes.nth(nth).input_value().strip()


def _open_senses(page, url: str) -> None:
    page.goto(url)
    page.get_by_text("Sense clusters").first.wait_for()
    page.get_by_text("Separation at layers 6").first.wait_for(timeout=SLOW_MS)  # pane B's line
    charts = page.locator('[data-testid="stPlotlyChart"]')
    charts.nth(1).locator(".scatterlayer .point").first.wait_for(timeout=SLOW_MS)
    _idle(page)
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 2  # the curve is folded
    page.get_by_text("Separation at every layer", exact=True).click()  # drawn once opened
    page.get_by_text("Sense separation at every layer").first.wait_for(timeout=SLOW_MS)
    _idle(page)
    _no_exception(page)


def _check_view(page) -> None:
    """The view of SENSES_LINK: the word, both panes' layers and corrections, the projection."""
    assert _selected(page, "Word") == "bass"
    assert _selected(page, "Layers", 1) == "3" and _selected(page, "Layers", 2) == "6"  # 0: sidebar
    assert _selected(page, "Correction", 0) == "raw"
    assert _selected(page, "Correction", 1) == "standardized"
    charts = page.locator('[data-testid="stPlotlyChart"]')
    assert charts.count() == 3  # pane A, pane B, the separation curve
    for i in range(2):
        assert charts.nth(i).locator(".scatterlayer .point").count() >= 30
    titles = " ".join(page.locator(".gtitle").all_text_contents())
    assert "3, raw" in titles and "6, standardized" in titles
    assert page.get_by_text("Separation at layers 3").count() == 1
    assert page.get_by_text("Separation at layers 6").count() == 1
    page.get_by_role("button", name="Projection").click()  # the projection's popover
    seed = page.locator('[data-testid="stNumberInput"]').filter(has_text="random_state")
    seed.locator("input").wait_for()
    for _ in range(50):  # the popover's widgets take their values once drawn
        if seed.locator("input").input_value() == "5":
            break
        page.wait_for_timeout(200)
    assert _selected(page, "Method") == "PCA"
    assert seed.locator("input").input_value() == "5"
    page.keyboard.press("Escape")


def test_a_link_reopens_the_same_side_by_side_view(context, server):
    page = context.new_page()
    _open_senses(page, f"{server}/senses?{urllib.parse.urlencode(SENSES_LINK)}")
    _check_view(page)
    page.screenshot(path=str(ARTIFACTS / "senses-compare.png"), full_page=True)
    # the "copy link" control gives a link with every setting; a fresh page opens the same view
    page.get_by_role("button", name="Copy link").click()
    link = page.locator('[data-testid="stPopoverBody"] [data-testid="stCode"]').inner_text()
    link = link.strip()
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query, keep_blank_values=True))
    assert {k: query[k] for k in SENSES_LINK} == SENSES_LINK
    assert query["model"] == "" and query["pooling"] == "mean"
    fresh = context.new_page()
    _open_senses(fresh, link)
    _check_view(fresh)
    fresh.close()
    page.close()


def test_every_download_carries_its_settings(context, server):
    page = context.new_page()
    _open_senses(page, f"{server}/senses?{urllib.parse.urlencode(SENSES_LINK)}")
    menus = page.locator(DOWNLOADS)
    per_figure = 3 if image_export_available() else 1
    # two panes and the curve, each a figure's popover and a table's (CSV, its settings
    # sidecar and JSON)
    assert menus.count() == 6
    files = []
    for m in range(menus.count()):
        buttons = open_downloads(menus.nth(m))
        assert buttons.count() == (3 if m % 2 else per_figure)
        for i in range(buttons.count()):
            with page.expect_download(timeout=SLOW_MS) as info:
                buttons.nth(i).dispatch_event("click")
            files.append(info.value)
        page.keyboard.press("Escape")
        page.locator(POPOVER_BODY).first.wait_for(state="detached")
    seen = set()
    for download in files:
        data = Path(download.path()).read_bytes()
        name = download.suggested_filename
        seen.add(name.rsplit(".", 1)[1])
        if name.endswith(".csv"):  # the plain table, which any CSV reader reads as is
            table = pandas.read_csv(io.BytesIO(data))
            assert table.columns[0] in ("sentence", "view") and len(table) > 0
            continue
        settings = settings_fields(read_settings(data))
        for s in settings:
            assert s["model"] and len(s["fingerprint"]) >= 12 and s["pooling"] == "mean"
            assert s["layer"] in ("3", "6", "all") and s["correction"] in ("none", "zscore")
            assert s["data"]["lemma"] == "bass"
        if "separation" not in name:
            (s,) = settings
            assert s["projection"]["method"] == "pca" and s["seed"] == 5
            assert (s["layer"], s["correction"]) in (("3", "none"), ("6", "zscore"))
            assert s["reference"] == ("" if s["correction"] == "none" else s["reference"])
        if name.endswith(".json") and not name.endswith(".settings.json"):
            assert json.loads(data)["rows"]
        if name.endswith(".html"):
            assert b"plotly" in data and len(data) > 1_000_000  # plotly.js inlined
    assert {"html", "csv", "json"} <= seen
    _no_exception(page)
    page.close()


def test_explore_side_by_side_from_a_link(context, server):
    page = context.new_page()
    text = "The cell divided twice.\nHe was locked in a cell.\nMy cell phone died."
    link = {"text": text, "word": "cell", "compare": "1", "b_corr": "zscore", "b_layer": "3",
            "method": "pca"}  # fmt: skip
    page.goto(f"{server}/?{urllib.parse.urlencode(link)}")
    page.get_by_text("Explore a word across layers").first.wait_for()
    page.locator(PANE_TABLES).nth(1).wait_for(timeout=SLOW_MS)
    _idle(page)
    _no_exception(page)
    # the folded expander's text box takes its value once drawn: waited for, as a visitor sees it
    box = page.locator('[data-testid="stTextArea"] textarea')
    for _ in range(50):
        if box.input_value() == text:
            break
        page.wait_for_timeout(200)
    assert box.input_value() == text
    charts = page.locator('[data-testid="stPlotlyChart"]')
    charts.nth(3).locator(".main-svg").first.wait_for()  # drawn after the tables, once plotly loads
    assert charts.count() == 4  # per pane: the similarity heatmap and the projection
    assert charts.nth(0).locator(".heatmaplayer").count() == 1
    assert page.get_by_text("Nearest neighbours of occurrence 1 at layers 3").count() == 1
    page.screenshot(path=str(ARTIFACTS / "explore-compare.png"), full_page=True)
    page.close()


def test_explore_side_by_side_shows_one_correction_per_pane_the_page_s_by_default(context, server):
    """Side by side, each pane has its own correction and the page's is not shown; both panes
    start with the correction the page had (here "centered", from the link), so that a
    comparison of two models compares one correction."""
    page = context.new_page()
    page.goto(f"{server}/?correction=center&method=pca")
    page.locator('[data-testid="stPlotlyChart"] .heatmaplayer').first.wait_for()
    _idle(page)
    corrections = page.locator('[data-testid="stSelectbox"] input[aria-label="Correction"]')
    assert corrections.count() == 1 and _selected(page, "Correction") == "centered"
    page.get_by_text("Side by side", exact=True).click()
    page.locator(PANE_TABLES).nth(1).wait_for(timeout=SLOW_MS)
    _idle(page)
    _no_exception(page)
    assert corrections.count() == 2  # one per pane, none for the page
    assert _selected(page, "Correction", 0) == _selected(page, "Correction", 1) == "centered"
    titles = " ".join(page.locator(".gtitle").all_text_contents())
    assert titles.count("centered") >= 2, titles
    page.close()


def test_senses_side_by_side_starts_both_panes_alike_and_hides_the_page_s_layer(context, server):
    """Side by side on Senses, both panes start with the one-pane view's layers and raw vectors
    (one correction, equal), and the page's own layer and colour controls, which no pane
    follows, are not shown."""
    page = context.new_page()
    page.goto(f"{server}/senses?demo_word=bass&method=pca&layer=3")
    page.locator('[data-testid="stPlotlyChart"] .scatterlayer .point').first.wait_for()
    _idle(page)
    assert page.get_by_text("Layer (0 = embedding output").count() == 1
    page.get_by_text("Side by side", exact=True).click()
    page.locator('[data-testid="stPlotlyChart"]').nth(1).wait_for(timeout=SLOW_MS)  # pane B
    _idle(page)
    _no_exception(page)
    assert _selected(page, "Correction", 0) == _selected(page, "Correction", 1) == "raw"
    assert _selected(page, "Layers", 1) == _selected(page, "Layers", 2) == "3"  # 0: sidebar
    assert page.get_by_text("Layer (0 = embedding output").count() == 0
    assert page.get_by_text("Colour by sense").count() == 0
    page.close()
