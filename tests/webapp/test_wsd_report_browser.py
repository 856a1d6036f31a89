"""The WSD page's Evaluation tab as the report, in a real browser (Debian's headless Chromium
driven by Playwright): the report's sections and a download made by its writers, two systems
compared, an error's link reopening its sentence on the One sentence tab; and, on a server
without SemCor and a model without a bi-encoder, every system not offered saying why.
"""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pytest

from devtools.appserver import AppServer
from devtools.browser import EXCEPTION, wait_run_ended

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
#: Where the guide's picture of the tab goes: ``WORKBENCH_SCREENSHOTS_DIR`` (``docs/img`` makes
#: docs/app.md's), else the ignored ``test-artifacts/``.
IMAGES = REPO / os.environ.get("WORKBENCH_SCREENSHOTS_DIR", "test-artifacts")
SLOW_MS = 300_000
#: A short evaluation: the first sentences of SemEval-2007, the shipped bi-encoder against the
#: WordNet-glosses system.
QUERY = {"dataset": "semeval2007", "first": "12", "compare": "wordnet"}

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def evaluated(browser, app_server, wsd_data):
    """The Evaluation tab once its evaluation has run (the page, the server's URL)."""
    ARTIFACTS.mkdir(exist_ok=True)
    server = app_server.take()
    page = browser.new_page(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page.set_default_timeout(SLOW_MS)
    page.goto(f"{server}/wsd?{urllib.parse.urlencode(QUERY)}")
    page.get_by_role("tab", name="Evaluation").click()
    page.get_by_role("button", name="Run the evaluation").click()
    page.get_by_text("WSD on semeval2007[:12]:").first.wait_for()
    page.get_by_text("biencoder (A) against wordnet (B)").wait_for()
    wait_run_ended(page, SLOW_MS)
    assert page.locator(EXCEPTION).count() == 0, "a traceback is shown"
    yield page, server
    page.close()


def test_the_evaluation_tab_shows_the_reports_sections_and_downloads_its_files(evaluated):
    page, server = evaluated
    main = page.locator('[data-testid="stMain"]')
    text = main.inner_text()
    assert "(95% interval)" in text and "WordNet 1st sense scores" in text  # the summary
    page.screenshot(path=str(IMAGES / "wsd-evaluation.png"))  # docs/app.md's picture
    for heading in ("Summary", "F1 per dataset", "Errors in words"):
        assert main.get_by_role("heading", name=heading).count() >= 1, heading
    for folded in ("Most frequent and less frequent senses", "Seen in training",
                   "Per part of speech", "Number of candidate senses",
                   "Calibration: accuracy by score margin"):  # fmt: skip
        assert main.locator('[data-testid="stExpander"]', has_text=folded).count() >= 1, folded
    with page.expect_download() as info:
        page.get_by_role("button", name="HTML").first.click()
    download = info.value
    assert download.suggested_filename == "wsd-semeval2007-first12.html"
    html = Path(download.path()).read_text()
    assert "<title>WSD on semeval2007[:12]: biencoder" in html
    assert f'<a href="{server}/wsd?sentence=' in html  # the errors link to this server


def test_two_systems_are_compared_with_deltas_and_their_differences(evaluated):
    page, _ = evaluated
    main = page.locator('[data-testid="stMain"]')
    assert main.get_by_role("heading", name="Deltas per dataset and split").count() == 1
    assert main.get_by_role("heading", name="Instances answered differently").count() == 1
    assert "delta = A - B; p: paired bootstrap" in main.inner_text()


def test_an_errors_link_opens_its_sentence_disambiguated(evaluated, browser):
    page, server = evaluated
    link = page.get_by_role("link", name="Open this sentence in the WSD page").first
    href = link.get_attribute("href")
    assert href and href.startswith(f"{server}/wsd?")
    values = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query))
    opened = browser.new_page(viewport={"width": 1280, "height": 800})
    opened.set_default_timeout(SLOW_MS)
    opened.goto(href)
    opened.locator('[data-testid="stAlertContentSuccess"]').first.wait_for()
    wait_run_ended(opened, SLOW_MS)
    assert opened.locator(EXCEPTION).count() == 0
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(opened.get_by_role("textbox", name="Sentence")).to_have_value(values["sentence"])
    expect(opened.get_by_role("textbox", name="Word", exact=True)).to_have_value(values["word"])
    assert values["system"] == "biencoder" and values["pos"] in ("NOUN", "VERB", "ADJ", "ADV")
    title = opened.locator('[data-testid="stPlotlyChart"] .gtitle').first
    title.wait_for()
    assert f"“{values['word']}”" in (title.text_content() or "")  # the chart names the word
    answer = opened.locator('[data-testid="stAlertContentSuccess"]').first.inner_text()
    assert "%" in answer  # a sense key: the sentence disambiguated
    opened.close()


def test_every_system_not_offered_says_why(browser, tiny_model_dir, tmp_path):
    """A model without a bi-encoder on a server without SemCor: the WordNet-glosses system
    answers, and the bi-encoder and the two SemCor systems each say in one line why they are
    not offered."""
    empty = tmp_path / "no-wsd-data"
    empty.mkdir()
    env = {"WORKBENCH_DATA": str(empty), "WORKBENCH_APP_MODELS": str(tiny_model_dir)}
    with open(ARTIFACTS / "streamlit-server-wsd-missing.log", "w") as log:
        with AppServer(REPO, env=env, log=log) as url:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(SLOW_MS)
            query = urllib.parse.urlencode({"model": str(tiny_model_dir), "word": "bank"})
            page.goto(f"{url}/wsd?{query}")
            page.get_by_text("Not offered:").first.wait_for()
            wait_run_ended(page, SLOW_MS)
            assert page.locator(EXCEPTION).count() == 0
            lines = [t for t in page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
                     if "Not offered:" in t][0].splitlines()  # fmt: skip
            reasons = [line for line in lines if line.startswith("Not offered:")]
            assert len(reasons) == 3, lines
            assert any("no WSD bi-encoder was trained for" in r for r in reasons)
            assert sum("needs SemCor" in r and "workbench data download" in r
                       for r in reasons) == 2  # fmt: skip
            page.close()
