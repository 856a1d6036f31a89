"""Plain text coloured by predicted sense, and waits that say what they wait for, in a real
browser (Debian's headless Chromium driven by Playwright) at a projector's 1280x800: the demo
texts' corpus map coloured by sense or supersense shows several colours under a legend that
says "predicted"; Geometry's switch to another corpus shows what it is preparing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from devtools.browser import EXCEPTION, KEPT_CHART, new_page, wait_run_ended

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SLOW_MS = 240_000

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize("colour", ["sense", "supersense"])
def test_the_demo_map_is_coloured_by_predicted_sense(browser, server, colour):
    """The demo texts carry no gold senses: the map is coloured by the WSD bi-encoder's
    predictions, in several colours, and its legend says so."""
    page = new_page(browser, SLOW_MS)
    page.goto(f"{server}/corpus_map?colour={colour}")
    chart = page.frame_locator(KEPT_CHART).first  # the map is drawn in its own frame
    title = chart.locator(".legendtitletext").first
    title.wait_for()
    wait_run_ended(page, SLOW_MS)
    assert page.locator(EXCEPTION).count() == 0, "a traceback is shown"
    assert (title.text_content() or "").strip() == f"predicted {colour}"
    items = chart.locator(".legend .traces")
    names = [(t or "").strip() for t in items.all_text_contents()]
    fills = {
        p.get_attribute("style").split("fill:")[1].split(";")[0].strip()
        for p in chart.locator(".legend .traces path.scatterpts").all()
    }
    coloured = [n for n in names if not n.startswith(("(none)", "(other)"))]
    assert len(coloured) >= 5 and len(fills) >= 5, (names, fills)
    assert page.get_by_text(f"{colour.capitalize()}s predicted by the WSD bi-encoder").count() == 1
    page.screenshot(path=str(ARTIFACTS / f"corpus-map-predicted-{colour}.png"))
    page.close()


def test_geometry_says_what_it_prepares_when_the_corpus_changes(browser, server):
    """Switching Geometry to WordNet's glosses at a sample size the preload did not prepare
    shows a spinner that names the corpus and the work, then the table."""
    page = new_page(browser, SLOW_MS)
    page.goto(f"{server}/geometry?sample=300")
    page.locator('[data-testid="stTable"]').first.wait_for()
    wait_run_ended(page, SLOW_MS)
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Corpus").first.click()
    page.get_by_role("option", name="WordNet glosses and examples").click()
    page.locator('[data-testid="stSpinner"]', has_text="Preparing WordNet glosses").wait_for()
    page.locator('[data-testid="stSpinner"]').first.wait_for(state="detached")
    wait_run_ended(page, SLOW_MS)
    assert page.locator(EXCEPTION).count() == 0, "a traceback is shown"
    caption = page.get_by_text(re.compile(r"^300 sentences, [\d,]+ words: corrections fitted"))
    assert caption.count() == 1  # the figure's caption: the new corpus's sample
    page.close()
