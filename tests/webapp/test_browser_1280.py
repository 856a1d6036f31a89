"""The app as a new user meets it, in a real browser at 1280 px: the server preloads before the
first visitor (and a failed preload is a message, not a dead server); the corpus map (search,
a lasso, the sentences beside it); and every defect found by trying the app on an ordinary
screen stays fixed (cut controls, stray link notes, a long text's link, links and downloads on
every page, the toolbar, icons, a refused model, upload size).

Debian's headless Chromium (``.ci/install-browser.sh``), driven by Playwright for Python.
"""

from __future__ import annotations

import io
import re
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pandas
import pytest

from devtools.appserver import AppServer, Started, fresh, preload_status, wait_preloaded
from devtools.browser import (
    DOWNLOADS,
    FIRST_VIEWS,
    KEPT_CHART,
    new_page,
    open_downloads,
    wait_run_ended,
)
from webapp.offered_models import NOT_OFFERED

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SLOW_MS = 240_000
WIDTH = 1280

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def empty_cache_server(tmp_path_factory):
    """A server started on an empty cache: the preload test meets it first (right after its
    start, before any visitor), the WSD page's empty-cache test after it."""
    ARTIFACTS.mkdir(exist_ok=True)
    env = {"WORKBENCH_CACHE": str(tmp_path_factory.mktemp("empty-cache"))}
    with open(ARTIFACTS / "streamlit-server-preload.log", "w") as log:
        with AppServer(REPO, env=env, log=log) as url:
            yield Started(url)


def _idle(page) -> None:
    wait_run_ended(page, SLOW_MS)


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, "a traceback is shown"


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


# ------------------------------------------------------------------ ready before the first visitor


#: What a view that is not ready shows: a spinner or a progress bar.
WAITING = '[data-testid="stSpinner"], [data-testid="stProgress"]'


def test_the_server_loads_the_model_before_the_first_visitor(browser, empty_cache_server, tmp_path):
    """The preload runs at server start, with no browser connected: by the time the first
    visitor opens the page, the model, WordNet and the default views are loaded, and the page
    draws its chart from them. Once the preload has finished, each page opened one after
    another draws its first view from what the preload made; no spinner or progress bar is
    ever seen on the way (the Explore page's view was already drawn by the first visit)."""
    env = {"WORKBENCH_CACHE": str(tmp_path / "cache")}
    log = ARTIFACTS / "streamlit-server-preload-own.log"
    with fresh(empty_cache_server, REPO, log, env) as url:
        status = preload_status(url)  # the health check answered while the preload goes on
        assert not status["ready"] or all(s["state"] == "done" for s in status["steps"])
        status = wait_preloaded(url, "the Explore page's default view")
        states = {s["name"]: s["state"] for s in status["steps"]}
        assert states["the packaged model"] == "done" and states["FAISS"] == "done"
        page = new_page(browser, SLOW_MS, WIDTH, 1400)
        page.goto(url)
        page.locator('[data-testid="stPlotlyChart"] .heatmaplayer').first.wait_for()
        _idle(page)
        _no_exception(page)
        assert "could not load" not in _main_text(page)
        status = wait_preloaded(url, limit=900)  # every step
        assert status["ready"] and all(s["state"] == "done" for s in status["steps"]), status
        for path, view in FIRST_VIEWS:
            page.goto(f"{url}{path}")
            seen_waiting, start = [], time.monotonic()
            while page.locator(view).count() == 0:
                if page.locator(WAITING).count():
                    seen_waiting.append(round(time.monotonic() - start, 1))
                assert time.monotonic() - start < 120, f"{path}: no first view in 120 s"
                page.wait_for_timeout(100)
            _idle(page)
            _no_exception(page)
            assert not seen_waiting, f"{path}: a spinner or progress bar at {seen_waiting} s"
            assert page.locator(WAITING).count() == 0, f"{path}: still waiting on something"
        page.close()


def test_a_failed_preload_is_a_message_and_the_server_lives_on(browser):
    ARTIFACTS.mkdir(exist_ok=True)
    env = {"WORKBENCH_DTYPE": "no-such-dtype"}  # the model cannot load in this process
    with open(ARTIFACTS / "streamlit-server-failed-preload.log", "w") as log:
        with AppServer(REPO, env=env, log=log) as url:
            status = wait_preloaded(url, "the packaged model")
            failed = {s["name"]: s for s in status["steps"]}["the packaged model"]
            assert failed["state"] == "failed" and "no-such-dtype" in failed["error"]
            page = new_page(browser, SLOW_MS, WIDTH, 1400)
            page.goto(url)
            page.get_by_text("The server could not load the packaged model").first.wait_for()
            page.locator('[data-testid="stAlert"]', has_text="no-such-dtype").first.wait_for()
            _idle(page)
            _no_exception(page)
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as resp:
                assert resp.read().strip() == b"ok"
            page.screenshot(path=str(ARTIFACTS / "failed-preload.png"), full_page=True)
            page.close()


# ------------------------------------------------------------------ the corpus map


def test_the_corpus_map_of_a_small_corpus_search_and_lasso(browser, server):
    page = new_page(browser, SLOW_MS, WIDTH, 1400)
    page.goto(f"{server}/corpus_map")
    page.get_by_text("A map of a whole corpus").first.wait_for()
    chart = page.frame_locator(KEPT_CHART).first  # the map stays in its frame between reruns
    chart.locator(".scatterlayer .point").first.wait_for(timeout=SLOW_MS)
    caption = page.get_by_text("words of demo texts").first.inner_text()
    n_words = int(caption.split()[0].replace(",", ""))
    assert n_words > 1000
    # search: the word's occurrences are ringed and listed with their sentences
    box = page.get_by_label("Search a word or lemma")
    box.fill("bank")
    box.press("Enter")
    page.get_by_text("“bank”:").first.wait_for()
    _idle(page)
    table = page.locator('[data-testid="stDataFrame"]').first
    table.wait_for()
    title = chart.locator(".gtitle").first
    title.filter(has_text="found, ringed").wait_for()  # the rings drawn as the layout's circles
    n_found = int(title.text_content().split("·")[-1].split()[0].replace(",", ""))
    assert n_found > 0 and chart.locator(".shapelayer path").count() == n_found
    # another search changes the rings and the title alone: relayout, the points not redrawn
    body = chart.locator("body")
    body.evaluate("""() => { window.calls = [];
        for (const name of ["react", "relayout"]) {
            const was = Plotly[name];
            Plotly[name] = function () {
                window.calls.push(name);
                return was.apply(this, arguments);
            };
        } }""")
    box.fill("river")
    box.press("Enter")
    page.get_by_text("“river”:").first.wait_for()
    _idle(page)
    title.filter(has_text="found, ringed").filter(has_not_text=f"· {n_found} found").wait_for()
    n_river = int(title.text_content().split("·")[-1].split()[0].replace(",", ""))
    assert chart.locator(".shapelayer path").count() == n_river != n_found
    assert body.evaluate("() => window.calls") == ["relayout"]
    # a lasso around the middle of the map selects points and lists their sentences
    drag = chart.locator(".nsewdrag").first.bounding_box()
    cx, cy = drag["x"] + drag["width"] / 2, drag["y"] + drag["height"] / 2
    w, h = drag["width"] / 3, drag["height"] / 3
    page.mouse.move(cx - w, cy - h)
    page.mouse.down()
    for x, y in ((cx + w, cy - h), (cx + w, cy + h), (cx - w, cy + h), (cx - w, cy - h)):
        page.mouse.move(x, y, steps=8)
    page.mouse.up()
    page.get_by_text("selected word").first.wait_for(timeout=SLOW_MS)
    _idle(page)
    heading = page.get_by_text("selected word").first.inner_text()
    assert 0 < int(heading.split()[0].replace(",", "")) <= n_words
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "corpus-map.png"), full_page=True)
    page.close()


# ------------------------------------------------------------------ the defects, at 1280 px


def _truncated(locator) -> list[str]:
    """Texts of the elements under ``locator`` that are cut (wider than their box)."""
    return locator.evaluate_all(
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"
    )


def test_senses_controls_show_every_option_whole_and_no_stray_link_note(browser, server):
    page = new_page(browser, SLOW_MS, WIDTH, 1400)
    page.goto(f"{server}/senses")
    page.locator('[data-testid="stPlotlyChart"] .scatterlayer .point').first.wait_for()
    _idle(page)
    group = page.locator('[data-testid="stButtonGroup"] button p')
    texts = group.all_inner_texts()
    assert {"one layer", "every layer", "several words", "gold", "predicted"} <= set(texts)
    assert _truncated(group) == []
    assert _truncated(page.locator('[data-testid="stButtonGroup"] button')) == []
    # ordinary edits, no link opened: the "settings do not apply" note never shows
    page.get_by_role("radio", name="every layer").click()
    _idle(page)
    page.get_by_role("radio", name="one layer").click()
    _idle(page)
    page.get_by_role("combobox", name="Word", exact=True).click()
    page.get_by_role("option", name="bass", exact=True).click()
    _idle(page)
    assert "do not apply" not in _main_text(page) and "does not apply" not in _main_text(page)
    _no_exception(page)
    page.close()


def test_several_words_are_each_projected_apart_and_other_words_say_where_to_look(browser, server):
    page = new_page(browser, SLOW_MS, WIDTH, 1400)
    page.goto(f"{server}/senses?view=several+words")
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.locator(".scatterlayer .point").first.wait_for()
    _idle(page)
    assert page.get_by_role("radio", name="each word apart", checked=True).count() == 1
    words = page.get_by_label("Words (comma-separated lemmas)")
    words.fill("bank, plant")
    words.press("Enter")
    page.get_by_text("plant: not among the demo words").first.wait_for()
    assert "SemCor" in _main_text(page) or "WordNet" in _main_text(page)
    _no_exception(page)
    page.close()


def test_a_link_with_a_long_text_asks_for_it_instead_of_showing_the_default(browser, server):
    page = new_page(browser, SLOW_MS, WIDTH, 1400)
    page.goto(f"{server}/?long_text=0123456789abcdef&word=bank")
    page.get_by_text("which a link cannot carry").first.wait_for()
    assert page.locator('[data-testid="stTextArea"] textarea').input_value() == ""
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 0
    _no_exception(page)
    page.close()


@pytest.mark.parametrize(
    ("path", "heading"),
    [("/geometry", "Geometry of the layers"), ("/wsd?index=system%3Awordnet", "Word sense"),
     ("/corpus_map", "A map of a whole corpus"), ("/senses", "Sense clusters"),
     ("/", "Explore a word across layers")],
)  # fmt: skip
def test_every_page_has_its_link_and_downloads(browser, server, path, heading):
    page = new_page(browser, SLOW_MS, WIDTH, 1400)
    page.goto(server + path)
    page.get_by_text(heading).first.wait_for()
    tables = page.locator(f"{DOWNLOADS}:visible", has_text="Download the table")
    tables.first.wait_for()
    _idle(page)
    assert page.locator('[data-testid="stDownloadButton"]').count() == 0  # all in popovers
    link = page.get_by_role("button", name="Copy link")
    assert link.count() == 1
    assert link.locator('[data-testid="stIconMaterial"]').first.inner_text() == "link"  # no emoji
    assert page.get_by_text("Deploy", exact=True).count() == 0  # no Deploy button
    assert "need kaleido" not in _main_text(page)  # the install note is in a tooltip, not repeated
    buttons = open_downloads(tables.first)
    names = {w for b in buttons.all() for w in b.inner_text().split() if w != "download"}
    assert names == {"CSV", "JSON", "Settings"}, names
    with page.expect_download(timeout=SLOW_MS) as info:
        buttons.filter(has_text="CSV").dispatch_event("click")
    table = pandas.read_csv(io.BytesIO(Path(info.value.path()).read_bytes()))  # no comment line
    assert len(table.columns) >= 2 and not table.columns[0].startswith("#")
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Copy link").click()
    code = page.locator('[data-testid="stPopoverBody"] [data-testid="stCode"]').inner_text()
    opened = urllib.parse.urlsplit(code.strip()).path or "/"
    assert opened == (urllib.parse.urlsplit(server + path).path or "/")
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"page-1280{path.split('?')[0].replace('/', '-')}.png"),
                    full_page=True)  # fmt: skip
    page.close()


def test_a_refused_sidebar_model_is_said_in_the_page_which_goes_on(browser, server):
    page = new_page(browser, SLOW_MS, WIDTH, 1400)
    page.goto(f"{server}/?model=" + urllib.parse.quote("/etc" + "x" * 20_000))
    page.locator('[data-testid="stPlotlyChart"] .heatmaplayer').first.wait_for()
    _idle(page)
    text = page.locator("body").inner_text()
    assert NOT_OFFERED in text and "x" * 200 not in text  # neutral, and never echoed whole
    model = page.locator('[data-testid="stSidebar"] input[aria-label="Model"]')
    model.fill("/etc")
    model.press("Enter")
    _idle(page)
    main = _main_text(page)
    assert NOT_OFFERED in main and "/etc" not in main  # in the page, not only the sidebar
    assert page.locator('[data-testid="stPlotlyChart"]').count() >= 1  # the page goes on
    _no_exception(page)
    model.fill("")
    model.press("Enter")
    _idle(page)
    page.close()


def test_a_sense_map_answers_a_click_a_search_and_a_lasso(browser, server):
    page = new_page(browser, SLOW_MS, WIDTH, 1400)
    page.goto(f"{server}/senses")
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.locator(".scatterlayer .point").first.wait_for()
    _idle(page)
    # search: the occurrences whose sentence holds the word are ringed
    find = page.get_by_label("Find in the map", exact=True)
    find.fill("river")
    find.press("Enter")
    page.get_by_text("“river”: in").first.wait_for()
    _idle(page)
    n = int(page.get_by_text("“river”: in").first.inner_text().split()[2])
    assert 0 < n < 34
    legend = chart.locator(".legendtext").all_text_contents()
    assert any(t.startswith("sentences with “river”") for t in legend), legend
    # a click on a point lists it and its 10 nearest occurrences (ringed on the map)
    point = chart.locator(".scatterlayer .trace").first.locator(".point").first.bounding_box()
    page.mouse.click(point["x"] + point["width"] / 2, point["y"] + point["height"] / 2)
    page.get_by_text("the clicked occurrence and its nearest").first.wait_for()
    _idle(page)
    # the table of the click (waited for: under load the rerun can still be drawing it)
    cosine = page.locator("thead th", has_text="cosine")
    table = page.locator('[data-testid="stTable"]', has=cosine).last
    table.wait_for()
    header = table.locator("thead tr").first.locator("th, td").all_inner_texts()
    at = [h.strip() for h in header].index("cosine")
    rows = table.locator("tbody tr")
    assert rows.count() == 11
    cosines = [float(r.locator("th, td").all_inner_texts()[at]) for r in rows.all()]
    assert cosines[0] == 1.0 and cosines[1:] == sorted(cosines[1:], reverse=True)
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "senses-map-click.png"), full_page=True)
    page.close()


# ------------------------------------------------------------------ the WSD page's default system


def test_the_wsd_page_answers_a_rare_sense_with_the_shipped_bi_encoder_on_an_empty_cache(
    browser, empty_cache_server
):
    """The default system is the bi-encoder shipped with the package: on a server started with
    an empty cache it answers at once (no index is built), and a sense SemCor never tags (the
    computer mouse: seen once, in WordNet's examples) wins; the candidates are listed with
    their definitions and evidence. (The preload test's server: started on an empty cache.)"""
    url = empty_cache_server.take()
    page = new_page(browser, SLOW_MS, WIDTH, 1400)
    query = urllib.parse.urlencode(
        {"sentence": "Click the left button of the mouse to open the file.", "word": "mouse"}
    )
    page.goto(f"{url}/wsd?{query}")
    success = page.locator('[data-testid="stAlertContentSuccess"]', has_text="mouse%")
    answer = success.first
    answer.wait_for()
    assert "mouse%1:06:00::" in answer.inner_text()  # the computer mouse
    _idle(page)
    _no_exception(page)
    text = _main_text(page)
    assert "bi-encoder" in text and "Building the" not in text
    assert re.search(r"(unseen|seen \d+x) in training", text)  # each score's evidence
    assert "hand-operated electronic device" in text  # the winner's definition
    page.screenshot(path=str(ARTIFACTS / "wsd-biencoder.png"), full_page=True)
    page.close()
