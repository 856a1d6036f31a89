"""Controls that cannot mislead, in a real browser (Debian's headless Chromium driven by
Playwright) at a projector's 1280x800: the WSD chart marks its answer and says which candidates
were set aside and why; a new sentence on the WSD page picks its likely word instead of an
error; a corpus-map rebuild keeps the search box and the "copy link" control.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from pathlib import Path

import pytest

from devtools.browser import EXCEPTION, KEPT_CHART, new_page, wait_run_ended
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.disambiguate import likely_target

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SLOW_MS = 240_000

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _idle(page) -> None:
    wait_run_ended(page, SLOW_MS)


def _no_exception(page) -> None:
    assert page.locator(EXCEPTION).count() == 0, "a traceback is shown"


def test_the_wsd_chart_marks_the_answer_and_says_what_was_set_aside(browser, server):
    """With no POS in "water the plant" the POS probe reads a noun, so the answer is the best
    noun sense whatever a verb sense scores. The answer's bar is the top one, marked "the
    answer"; the verb senses are in the legend as set aside, with the reason, and the caption
    under the chart names them."""
    page = new_page(browser, SLOW_MS)
    sentence = "Don't forget to water the plant."
    query = urllib.parse.urlencode({"sentence": sentence, "word": "plant"})
    page.goto(f"{server}/wsd?{query}")
    answer = page.locator('[data-testid="stAlertContentSuccess"]', has_text="plant%").first
    answer.wait_for()
    _idle(page)
    _no_exception(page)
    key = re.search(r"plant%\S+::", answer.inner_text()).group(0)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.locator(".ytick text").first.wait_for()  # plotly.js draws after the run has ended
    ticks = chart.locator(".ytick text").evaluate_all(
        "els => els.map(e => [e.getBoundingClientRect().y, e.textContent])"
    )
    top = min(ticks)[1]
    assert top.startswith(key), (key, ticks)  # the answer first
    assert chart.locator(".textpoint text", has_text="the answer").count() == 1  # marked
    legend = chart.locator(".legendtext").all_text_contents()
    assert "the answer" in legend
    aside = [t for t in legend if t.startswith("set aside")]
    assert len(aside) == 1 and "NOUN" in aside[0], legend  # which, and why
    caption = page.get_by_text("set aside before choosing").first.inner_text()
    assert "plant%2:" in caption  # the verb senses, named
    page.screenshot(path=str(ARTIFACTS / "wsd-answer-marked.png"))
    page.close()


def test_a_new_sentence_picks_its_likely_word_instead_of_an_error(browser, server):
    page = new_page(browser, SLOW_MS)
    page.goto(f"{server}/wsd")
    page.locator('[data-testid="stAlertContentSuccess"]', has_text="bank%").first.wait_for()
    _idle(page)
    sentence = "The bass line of the song was very deep."
    box = page.get_by_label("Sentence", exact=True)
    box.fill(sentence)
    box.press("Enter")
    _idle(page)
    expected = likely_target(sentence, load_wordnet())
    assert expected and expected != "bank"
    page.get_by_text("picked from the new sentence").first.wait_for()  # the rerun has come
    word = page.get_by_label("Word", exact=True)
    assert word.input_value() == expected
    page.locator('[data-testid="stAlertContentSuccess"]', has_text=f"{expected}%").first.wait_for()
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert "is not a word of the sentence" not in main
    # a word the visitor types is kept (and, when it is not in the sentence, said so)
    word.fill("deep")
    word.press("Enter")
    _idle(page)
    assert word.input_value() == "deep"
    _no_exception(page)
    page.close()


#: Installed in a page: every time the DOM changes while a progress bar shows, what the search box
#: holds and how many "copy link" buttons are shown, in ``window.__progressSeen`` (a bar shown
#: for less than a polling interval is seen too).
WATCH_PROGRESS = """() => {
  window.__progressSeen = [];
  new MutationObserver(() => {
    if (!document.querySelector('[data-testid="stProgress"]')) return;
    const box = document.querySelector('input[aria-label="Search a word or lemma"]');
    const links = [...document.querySelectorAll('button')]
      .filter((b) => b.offsetParent !== null && b.innerText.includes('Copy link')).length;
    window.__progressSeen.push({search: box ? box.value : null, links: links});
  }).observe(document.body, {childList: true, subtree: true, characterData: true});
}"""


def test_a_corpus_map_rebuild_keeps_the_search_and_the_link(browser, server):
    """Changing the map's settings rebuilds it (a number of sentences this test run has not
    mapped yet, of WordNet's examples: a build with its progress bar); meanwhile and after it,
    the search box keeps
    its word and the "copy link" control stays."""
    page = new_page(browser, SLOW_MS)
    page.goto(f"{server}/corpus_map")
    chart = page.frame_locator(KEPT_CHART).first  # the map stays in its frame between reruns
    chart.locator(".scatterlayer .point").first.wait_for()
    _idle(page)
    search = page.get_by_label("Search a word or lemma")
    search.fill("the")
    search.press("Enter")
    page.get_by_text("“the”:").first.wait_for()
    _idle(page)
    page.get_by_role("combobox", name="Corpus").click()
    page.get_by_role("option", name=re.compile("WordNet glosses")).click()
    _idle(page)  # the sentences box is a new widget of that corpus: typed before, it is lost
    sentences = page.locator('input[aria-label="First sentences (0 = all)"]')
    sentences.fill(str(100 + os.getpid() % 200))  # a map not made yet, most likely: a build
    page.evaluate(WATCH_PROGRESS)  # every state of the page while the progress bar shows
    sentences.press("Enter")
    found = chart.locator(".gtitle", has_text="found, ringed")
    for _ in range(600):  # the new map drawn, with the search's hits ringed
        if found.count() and "wordnet" in chart.locator(".gtitle").first.text_content().lower():
            break  # the title names the corpus, "wordnet-3.0-glosses-examples, layer 6"
        page.wait_for_timeout(250)
    seen = page.evaluate("window.__progressSeen")
    _idle(page)
    page.get_by_text("“the”:").first.wait_for()
    assert search.input_value() == "the"
    assert page.get_by_role("button", name="Copy link").count() == 1
    assert "found, ringed" in chart.locator(".gtitle").first.text_content()
    assert chart.locator(".shapelayer path").count() > 0  # the rings
    _no_exception(page)
    assert "wordnet" in chart.locator(".gtitle").first.text_content().lower()  # the new map
    # the map was built, not loaded (the case where the search was lost); meanwhile the
    # search and the link control stayed
    assert seen, "no progress bar was shown: the map was loaded, not built"
    assert {(s["search"], s["links"]) for s in seen} == {("the", 1)}, seen
    page.close()
