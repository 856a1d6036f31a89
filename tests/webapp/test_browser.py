"""The app in a real browser: Debian's headless Chromium driven by Playwright for Python.

The tests share the session's ``streamlit run app.py`` (``tests/webapp/conftest.py``) on a free
port of 127.0.0.1 in its own process group, stopped (with everything it started) at the end.
Screenshots go to ``test-artifacts/``.
Chromium comes from Debian's ``chromium`` package (``.ci/install-browser.sh``); Playwright's own
browser downloads are never used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.browser import CHROMIUM, CHROMIUM_ARGS, wait_run_ended
from webapp.offered_models import runs_dir
from workbench.encoding.models import default_model_path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SLOW_MS = 180_000  # first UMAP of a process compiles numba code (~20-30 s on 2 busy cores)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


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
    wait_run_ended(page, SLOW_MS)


def _sentences(page):
    """The Explore page's sentence box, its expander opened (folded once a text is set)."""
    area = page.locator('[data-testid="stTextArea"] textarea')
    if not area.is_visible():
        page.get_by_text("Your sentences and the word").first.click()
    area.wait_for()
    return area


def test_explore_type_a_sentence_pick_a_word_see_the_heatmap(browser_page, server):
    page = browser_page
    page.goto(server)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.locator(".main-svg").first.wait_for()
    assert not page.locator('[data-testid="stTextArea"] textarea').is_visible()  # folded
    area = _sentences(page)
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
    # the folded curve and table are drawn when opened, not before
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 1
    assert page.locator('[data-testid="stDataFrame"]').count() == 0
    page.get_by_text("Separation at every layer").click()
    page.get_by_text("leave-one-out 1-NN sense accuracy").first.wait_for()
    page.get_by_text("Occurrences", exact=True).click()
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    _idle(page)
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 2
    _no_exception(page)


@pytest.mark.parametrize(
    ("page_name", "heading", "shot"),
    [("Geometry", "Geometry of the layers", "geometry.png"),
     ("WSD", "Word sense disambiguation", "wsd.png")],
)  # fmt: skip
def test_other_pages_render_a_chart(browser_page, server, page_name, heading, shot, request):
    if page_name == "WSD":  # its default index: the best system's (a stand-in in a test session)
        request.getfixturevalue("best_wsd_index")
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
    page.get_by_text("5 occurrences from a text file").first.wait_for()  # the map's title
    page.locator('[data-testid="stPlotlyChart"] .scatterlayer .point').first.wait_for()
    _idle(page)
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "senses-upload.png"), full_page=True)


def _sidebar_page(page, server, name: str, heading: str) -> None:
    page.goto(server)
    page.locator('[data-testid="stSidebarNav"]').get_by_text(name, exact=True).click()
    page.get_by_text(heading).first.wait_for()
    _idle(page)


def _fill(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    _idle(page)


def _choose(page, label: str, option: str, exact: bool = True) -> None:
    page.locator('[data-testid="stSelectbox"]').filter(has_text=label).click()
    page.get_by_role("option", name=option, exact=exact).first.click()
    _idle(page)


def _chosen_sense(page, word: str) -> str:
    """The text of the page's answer box (chosen sense key and gloss) once it answers `word`.

    The candidates chart comes before the answer box, so the chart's new title can show while the
    box still holds the previous word's answer: wait for a box naming one of `word`'s sense keys.
    """
    box = page.locator('[data-testid="stAlertContentSuccess"]').filter(has_text=f"{word}%").first
    box.wait_for(timeout=SLOW_MS)
    return box.inner_text()


@pytest.mark.parametrize(
    ("sentence", "pos"),
    [("He plays the bass in a jazz band.", "any"), ("He caught a bass in the lake.", "any"),
     ("He caught a bass in the lake.", "NOUN")],
)  # fmt: skip
def test_wsd_default_app_answers_bass_with_a_noun_sense(browser_page, server, sentence, pos):
    page = browser_page
    _sidebar_page(page, server, "WSD", "Word sense disambiguation")
    # the default system: the shipped bi-encoder (a select box shows its value in its input)
    chosen = page.get_by_role("combobox", name="System", exact=True).input_value()
    assert chosen.startswith("bi-encoder"), chosen
    _fill(page, "Sentence", sentence)
    _fill(page, "Word", "bass")
    _choose(page, "POS", pos)
    page.get_by_text("Candidate senses of “bass”").first.wait_for()
    answer = _chosen_sense(page, "bass")
    assert "bass%1:" in answer, answer  # a noun sense (the adjective is bass%5:...)
    assert "score from: its gloss vector" in answer
    # every candidate says where its score comes from: how often training saw the sense
    table = page.locator('[data-testid="stTable"]').first.inner_text()
    assert "score from" in table and "in training" in table
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"wsd-bass-{pos}.png"), full_page=True)


def test_wsd_best_system_says_where_its_scores_come_from(browser_page, server, best_wsd_index):
    page = browser_page
    _sidebar_page(page, server, "WSD", "Word sense disambiguation")
    _choose(page, "System", "best: SemCor", exact=False)
    _fill(page, "Sentence", "He caught a bass in the lake.")
    _fill(page, "Word", "bass")
    page.get_by_text("Index: best system").first.wait_for()
    assert "bass%1:" in _chosen_sense(page, "bass")
    # the winning sense rests on one SemCor occurrence: the page says so
    page.get_by_text("rests on too few occurrences").first.wait_for()
    table = page.locator('[data-testid="stTable"]').first.inner_text()
    assert "score from" in table and "propagated from" in table
    _no_exception(page)


def test_wsd_helium_is_answered_by_the_default_and_by_wordnet_only(browser_page, server):
    page = browser_page
    _sidebar_page(page, server, "WSD", "Word sense disambiguation")
    _fill(page, "Sentence", "The balloon was filled with helium")
    _fill(page, "Word", "helium")
    page.get_by_text("Candidate senses of “helium”").first.wait_for()
    assert "helium%1:27:00::" in _chosen_sense(page, "helium")
    _no_exception(page)
    _choose(page, "System", "WordNet glosses only (no SemCor; below WordNet's first sense)")
    page.get_by_text("below WordNet's first sense (65.2)").first.wait_for()
    # the back-off line comes after the answer box and only with this index: once it shows, the
    # answer box above it is this index's answer, not the previous one's
    page.get_by_text("WordNet's first sense, the back-off").first.wait_for()
    assert "helium%1:27:00::" in _chosen_sense(page, "helium")
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "wsd-helium-wordnet.png"), full_page=True)


@pytest.mark.parametrize("text", ["A cat sat quietly.", "cat"])
def test_explore_text_where_no_word_repeats_explains_itself(browser_page, server, text):
    page = browser_page
    page.goto(server)
    page.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for()
    area = _sentences(page)
    area.fill(text)
    area.press("Control+Enter")
    _idle(page)
    page.get_by_text("occurs only once in your text").first.wait_for()
    assert page.get_by_text("need at least two vectors").count() == 0
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    page.get_by_text("Nearest neighbours of occurrence 1").first.wait_for()
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"explore-once-{len(text)}.png"), full_page=True)


def test_non_utf8_uploads_get_the_same_message_everywhere(browser_page, server, tmp_path):
    page = browser_page
    latin1 = tmp_path / "notes.txt"
    latin1.write_bytes("Café crème at the bank.\nThe bank of the Seine.\n".encode("latin-1"))
    expected = "notes.txt is not UTF-8 text"
    _sidebar_page(page, server, "Senses", "Sense clusters")
    _choose(page, "Occurrences from", "a text file")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(latin1)
    page.get_by_text(expected).first.wait_for()
    _no_exception(page)
    _sidebar_page(page, server, "Fine-tune", "Fine-tune an encoder")
    page.get_by_role("radio", name="my own files").click()
    _idle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(latin1)
    _idle(page)
    page.get_by_role("button", name="Fine-tune").click()
    page.get_by_text(expected).first.wait_for()
    assert "/tmp" not in page.locator('[data-testid="stMain"]').inner_text()  # no server paths
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "finetune-upload.png"), full_page=True)


@pytest.fixture(scope="module")
def twelve_layer_model(tmp_path_factory) -> Path:
    """A randomly initialised 12-layer BERT (hidden 32): 13 hidden states, fast; saved in the
    app's runs folder (the server's cache is this session's), where the app offers it."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    path = runs_dir() / "bert-12"
    tok = AutoTokenizer.from_pretrained(default_model_path())
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=12,
                        num_attention_heads=2, intermediate_size=64)  # fmt: skip
    BertModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_explore_heatmap_labels_stay_readable_for_13_layers(
    browser_page, server, twelve_layer_model
):
    page = browser_page
    page.goto(server)
    page.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for()
    model = page.locator('[data-testid="stSidebar"] input[aria-label="Model"]')
    model.fill(str(twelve_layer_model))
    model.press("Enter")
    _idle(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.locator(".xtick text", has_text="12").first.wait_for()
    labels = chart.locator(".heatmaplayer text")
    assert labels.count() == 2 * 5 * 13  # 2 panels x 5 occurrences of "bank" x 13 states
    rows: dict[int, list[dict]] = {}
    for box in labels.evaluate_all(
        "els => els.map(e => e.getBBox ? e.getBoundingClientRect() "
        ": null).map(r => ({x: r.x, y: r.y, width: r.width}))"
    ):
        rows.setdefault(round(box["y"]), []).append(box)
    assert len(rows) == 5  # one line of labels per occurrence
    for row in rows.values():  # along a row, no label runs into the next
        row.sort(key=lambda b: b["x"])
        for left, right in zip(row, row[1:]):
            assert left["x"] + left["width"] < right["x"], (left, right)
    size = float(labels.first.evaluate("e => getComputedStyle(e).fontSize").rstrip("px"))
    assert size >= 10
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "explore-13-layers.png"), full_page=True)
    model.fill("")
    model.press("Enter")
    _idle(page)
