"""Controls that rerun only their part of the page (``webapp.layout.fragment``: Explore's view,
Geometry's correction, the Senses view, the WSD page's sentence and word), in a real
browser (Debian's headless Chromium driven by Playwright) at 1280x800: each changes what it
governs, keeps the page's URL and its "copy link" control in step (one control, its link
carrying the new value), and the link reopens the same view; no traceback, no widget warning.
"""

from __future__ import annotations

import urllib.parse

import pytest

from devtools.browser import EXCEPTION, new_page, wait_run_ended

SLOW_MS = 240_000

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _idle(page) -> None:
    wait_run_ended(page, SLOW_MS)


def _query(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def _copied_link(page) -> str:
    """The link in the "copy link" control (there is exactly one), its popover closed again."""
    button = page.get_by_role("button", name="Copy link")
    assert button.count() == 1
    button.click()
    code = page.locator('[data-testid="stPopoverBody"] [data-testid="stCode"]')
    text = code.inner_text().strip()
    page.keyboard.press("Escape")
    return text


def _choose(page, label: str, option: str) -> None:
    page.get_by_role("combobox", name=label, exact=True).click()
    page.get_by_role("option", name=option, exact=True).click()


def _fine(page) -> None:
    assert page.locator(EXCEPTION).count() == 0, "a traceback is shown"
    assert page.get_by_text("got both a default value").count() == 0  # no widget warning


def test_explore_s_correction_reruns_its_view_and_keeps_the_link_in_step(browser, server):
    page = new_page(browser, SLOW_MS)
    page.goto(server)
    page.get_by_text("standardized vectors").first.wait_for()
    _idle(page)
    _choose(page, "Correction", "centered")
    page.get_by_text("centered vectors").first.wait_for()
    _idle(page)
    assert _query(page.url)["correction"] == "center"
    link = _copied_link(page)
    assert _query(link)["correction"] == "center"
    _fine(page)
    again = new_page(browser, SLOW_MS)
    again.goto(link)
    again.get_by_text("centered vectors").first.wait_for()
    _idle(again)
    assert _query(again.url)["correction"] == "center"  # restored, then published again
    _fine(again)
    again.close()
    page.close()


def test_geometry_s_correction_and_layer_keep_the_url_in_step(browser, server):
    page = new_page(browser, SLOW_MS)
    page.goto(f"{server}/geometry")
    page.get_by_text("(standardized vectors)").first.wait_for()
    _idle(page)
    page.get_by_role("radio", name="centered", exact=True).click()
    page.get_by_text("(centered vectors)").first.wait_for()
    _idle(page)
    assert _query(page.url)["correction"] == "center"
    assert _query(_copied_link(page))["correction"] == "center"
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 3  # the figures above stay
    _fine(page)
    page.close()


def test_senses_side_by_side_and_back_keeps_the_url_in_step(browser, server):
    page = new_page(browser, SLOW_MS)
    page.goto(f"{server}/senses")
    page.get_by_text("Find in the map").first.wait_for()
    _idle(page)
    page.get_by_text("Side by side", exact=True).click()
    page.get_by_text("B: “bank”, layers").first.wait_for()
    _idle(page)
    assert _query(page.url)["compare"] == "1"
    assert _query(_copied_link(page))["compare"] == "1"
    page.get_by_text("Side by side", exact=True).click()
    page.get_by_text("Find in the map").first.wait_for()
    _idle(page)
    assert _query(page.url)["compare"] == "0"
    _fine(page)
    page.close()


def test_wsd_s_word_reruns_its_answer_and_keeps_the_link_in_step(browser, server):
    page = new_page(browser, SLOW_MS)
    page.goto(f"{server}/wsd?index=system%3Awordnet")
    page.locator('[data-testid="stAlert"]', has_text="bank%").first.wait_for()
    _idle(page)
    box = page.get_by_label("Word", exact=True)
    box.fill("river")
    box.press("Enter")
    page.locator('[data-testid="stAlert"]', has_text="river%").first.wait_for()
    _idle(page)
    assert _query(page.url)["word"] == "river"
    link = _copied_link(page)
    assert _query(link)["word"] == "river" and _query(link)["system"] == "wordnet"
    assert page.get_by_role("tab", name="Evaluation").count() == 1  # the page around it stays
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 1  # one chart, not two
    _fine(page)
    again = new_page(browser, SLOW_MS)
    again.goto(link)
    again.locator('[data-testid="stAlert"]', has_text="river%").first.wait_for()
    _idle(again)
    assert _query(again.url)["word"] == "river"
    _fine(again)
    again.close()
    page.close()
