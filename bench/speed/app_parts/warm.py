"""Parts 4, 6 and 9 of ``python -m bench run app``: a warm server (model loaded, first results
computed) answering a visitor's changes in headless Chromium. 4: the Senses page side by side
from a link, against two plain UMAP fits; 6: a WSD page rerun with the project's config against
Streamlit's default forced garbage collection; 9: each page's common interactions beside the
floors of the same widget kinds (:func:`floor.bare_change_app`).
"""

from __future__ import annotations

import re
import shutil
import statistics
import time
import urllib.parse
import warnings

from bench.lib.measure import cpu_seconds, median_time
from bench.speed.app_parts import REPO
from bench.speed.app_parts.floor import CHANGE_WIDGETS, bare_app, bare_change_app
from bench.speed.app_parts.in_process import play_vectors
from devtools.appserver import AppServer, wait_preloaded
from devtools.browser import CHROMIUM, CHROMIUM_ARGS, KEPT_CHART, wait_run_ended

COMPARE_LINK = {
    "source": "semcor", "word": "play", "limit": "300", "compare": "1", "method": "umap",
    "a_layer": "3", "a_corr": "none", "b_layer": "6", "b_corr": "none",
}  # fmt: skip


def _drawn(page, url: str, pid: int) -> tuple[float, float]:
    """Seconds from opening ``url`` until both panes' points are drawn (the separation curve is
    folded, drawn when opened), and the server's CPU seconds meanwhile."""
    cpu, t = cpu_seconds(pid), time.perf_counter()
    page.goto(url)
    charts = page.locator('[data-testid="stPlotlyChart"]')
    for i in range(2):
        charts.nth(i).locator(".scatterlayer .point").first.wait_for()
    return time.perf_counter() - t, cpu_seconds(pid) - cpu


def bench_compare(repeats: int) -> None:
    import umap
    from playwright.sync_api import sync_playwright

    ov = play_vectors()
    print(f"\n4. side by side: Senses page, SemCor 'play' ({len(ov.occurrences)} occurrences), "
          "layers 3 | 6, UMAP, in headless Chromium")  # fmt: skip
    cached, fresh = [], []
    app = AppServer(REPO, timeout=600)
    with app as url, sync_playwright() as pw:
        pid = app.proc.pid
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=CHROMIUM_ARGS)  # fmt: skip
        page = browser.new_page(viewport={"width": 1600, "height": 1400})
        page.set_default_timeout(600_000)
        link = f"{url}/senses?" + urllib.parse.urlencode(COMPARE_LINK)
        first, _ = _drawn(page, link + "&seed=0", pid)  # loads the model, compiles, encodes
        for _ in range(repeats):
            cached.append(_drawn(page, link + "&seed=0", pid))
        for seed in range(1, repeats + 1):
            fresh.append(_drawn(page, link + f"&seed={seed}", pid))
        browser.close()
    x3, x6 = ov.emb.select("3"), ov.emb.select("6")

    def plain() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            umap.UMAP(random_state=1).fit(x3)
            umap.UMAP(random_state=1).fit(x6)

    plain()  # numba compiled in this process too
    base = median_time(plain, repeats)
    print(f"   first open of the server (model, numba, encoding): {first:.1f} s")
    for label, runs in (
        ("every result cached (the link reopened)", cached),
        ("new projections (another seed)", fresh),
    ):
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        print(f"   warm, {label}: median {wall:.2f} s (max {max(r[0] for r in runs):.2f} s); "
              f"server CPU {cpu:.2f} s")  # fmt: skip
    fresh_wall = statistics.median(r[0] for r in fresh)
    print(f"   baseline, two plain umap.UMAP fits in this process: {base:.2f} s; "
          f"ratio page / baseline {fresh_wall / base:.2f}x")  # fmt: skip


def _answered(page, word: str, pid: int) -> tuple[float, float]:
    """Seconds from entering ``word`` in the WSD page's Word box until its answer shows, and
    the server's CPU seconds meanwhile."""
    box = page.get_by_label("Word", exact=True)
    cpu, t = cpu_seconds(pid), time.perf_counter()
    box.fill(word)
    box.press("Enter")
    page.locator('[data-testid="stAlert"]', has_text=f"{word}%").first.wait_for()
    return time.perf_counter() - t, cpu_seconds(pid) - cpu


def bench_rerun(repeats: int) -> dict:
    from playwright.sync_api import sync_playwright

    print("\n6. a WSD page rerun (another word of the sentence), warm, in headless Chromium")
    results, raw = {}, {}
    for label, options in (
        ("Streamlit's default: gc.collect(2) after every run (baseline)",
         ["--runner.postScriptGC", "true"]),
        ("the project's config: no forced collection", []),
    ):  # fmt: skip
        app = AppServer(REPO, timeout=600, options=options)
        with app as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                         args=CHROMIUM_ARGS)  # fmt: skip
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.set_default_timeout(900_000)
            page.goto(f"{url}/wsd")
            page.locator('[data-testid="stAlert"]', has_text="bank%").first.wait_for()
            _answered(page, "river", app.proc.pid)  # first answers: computed, then memoised
            _answered(page, "bank", app.proc.pid)
            runs = [_answered(page, w, app.proc.pid) for w in ("river", "bank") * repeats]
            browser.close()
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        results[label] = wall
        raw[label] = {"options": options, "median_seconds": wall, "seconds": [r[0] for r in runs],
                      "server_cpu_seconds": [r[1] for r in runs]}  # fmt: skip
        print(f"   {label}: median {wall:.2f} s (max {max(r[0] for r in runs):.2f} s); "
              f"server CPU {cpu:.2f} s")  # fmt: skip
    base, ours = results.values()
    print(f"   RERUN: {ours:.2f} s, baseline / ours {base / ours:.1f}x")
    return {"runs": raw, "ratio_baseline_over_ours": base / ours}


def _pill(name):
    def act(page):
        word = page.get_by_role("radio", name=name)
        if not word.is_visible():  # the words are folded with the text once it is set
            page.get_by_text("Your sentences and the word").click()
        word.click()

    return act


def _choose(label, option):
    def act(page):
        page.get_by_role("combobox", name=label, exact=True).click()
        page.get_by_role("option", name=option, exact=True).click()

    return act


def _segment(name):
    return lambda page: page.get_by_role("radio", name=name, exact=True).click()


def _toggle(label):
    return lambda page: page.get_by_text(label, exact=True).click()


def _typed(label, text):
    def act(page):
        box = page.get_by_label(label, exact=True)
        box.fill(text)
        box.press("Enter")

    return act


#: How part 9's floor of each widget kind (:data:`floor.CHANGE_WIDGETS`) is changed to "beta"
#: and back to "alpha".
FLOOR_ACTS = {
    "radio": (lambda page: page.get_by_text("beta", exact=True).click(),
              lambda page: page.get_by_text("alpha", exact=True).click()),
    "selectbox": (_choose("Word", "beta"), _choose("Word", "alpha")),
    "text": (_typed("Word", "beta"), _typed("Word", "alpha")),
    "toggle": (_toggle("Word"), _toggle("Word")),
}  # fmt: skip


def _interactions():
    """Common interactions per page: name -> (page path, the widget's kind (its floor's, in
    :data:`FLOOR_ACTS`), (what to do, the text that shows it is done) there and back)."""
    pill, choose, segment, toggle, typed = _pill, _choose, _segment, _toggle, _typed
    return {
        "explore: another word": ("/", "radio", (pill("the ×7"), "“the”: similarity"),
                                  (pill("bank ×5"), "“bank”: similarity")),
        "explore: another correction": ("/", "selectbox",
                                        (choose("Correction", "centered"), "centered vectors"),
                                        (choose("Correction", "standardized"),
                                         "standardized vectors")),
        "senses: another word": ("/senses", "selectbox", (choose("Word", "bass"), "“bass”, layers"),
                                 (choose("Word", "bank"), "“bank”, layers")),
        "geometry: another correction": ("/geometry", "radio",
                                         (segment("centered"), "(centered vectors)"),
                                         (segment("standardized"), "(standardized vectors)")),
        "geometry: another corpus": ("/geometry", "selectbox",
                                     (choose("Corpus", "WordNet glosses and examples"),
                                      re.compile(r"^500 sentences, [\d,]+ words")),
                                     (choose("Corpus", "demo texts (170 sentences)"),
                                      re.compile(r"^170 sentences, [\d,]+ words"))),
        "senses: side by side": ("/senses", "toggle",
                                 (toggle("Side by side"), "B: “bank”, layers"),
                                 (toggle("Side by side"), "Find in the map")),
        "corpus map: search": ("/corpus_map", "text",
                               (typed("Search a word or lemma", "bank"), "“bank”:"),
                               (typed("Search a word or lemma", "river"), "“river”:")),
        "corpus map: predicted colours": ("/corpus_map", "selectbox",
                                          (choose("Colour by", "supersense"),
                                           "Supersenses predicted"),
                                          (choose("Colour by", "sense"), "Senses predicted")),
        "wsd: another word": ("/wsd?index=system%3Awordnet", "text",
                              (typed("Word", "river"), "river%"), (typed("Word", "bank"), "bank%")),
    }  # fmt: skip


def _changes(page, url: str, path: str, there, back, repeats: int) -> list[float]:
    """Seconds of ``repeats + 1`` back-and-forth pairs of one interaction (each until its text
    shows and Streamlit's run ends), the page opened first at ``url + path``."""
    page.goto(url + path)
    page.locator(f'[data-testid="stPlotlyChart"], {KEPT_CHART}').first.wait_for()
    wait_run_ended(page, pause_ms=100)
    times = []
    for _ in range(repeats + 1):
        for act, done in (there, back):
            t = time.perf_counter()
            act(page)
            page.get_by_text(done).first.wait_for(timeout=180_000)
            wait_run_ended(page, pause_ms=100)
            times.append(time.perf_counter() - t)
    return times


def _bare_changes(browser, kind: str, repeats: int) -> list[float]:
    """Part 9's floor for one widget kind: the warm back-and-forth changes of
    :func:`floor.bare_change_app` of ``kind``."""
    bare = bare_app(bare_change_app(kind))
    to_beta, to_alpha = FLOOR_ACTS[kind]
    try:
        with AppServer(bare, timeout=600) as url:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.set_default_timeout(600_000)
            there, back = (to_beta, "A heatmap of beta"), (to_alpha, "A heatmap of alpha")
            times = _changes(page, url, "/", there, back, repeats)
            page.close()
    finally:
        shutil.rmtree(bare, ignore_errors=True)
    return times[2:]


def bench_interactions(repeats: int) -> dict:
    """9. Each page's common interactions, warm (the server's preload done, the page opened
    once, every first computation done): seconds from the widget change until the page shows
    the new result and Streamlit's run ends, in headless Chromium at 1280 px; median of
    ``repeats`` back-and-forth pairs, and the first time apart (after the preload, the first
    time is warm too where the preload prepared it: Geometry's WordNet corpus, the demo map's
    predicted senses). The floors (:func:`floor.bare_change_app`: a bare Streamlit app redrawing
    its heatmap when one widget changes, one app per widget kind) are measured before and after
    the pages; each interaction's median is printed beside the floor of its widget's kind (a
    selectbox change beside the selectbox floor: two clicks cost more than one whatever the
    page) and beside the radio floor (the only floor before)."""
    from playwright.sync_api import sync_playwright

    print("\n9. reruns per interaction (warm server, headless Chromium, 1280 px)")
    out: dict = {}
    floors: dict[str, list[float]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=CHROMIUM_ARGS)  # fmt: skip
        for kind in CHANGE_WIDGETS:
            floors[kind] = _bare_changes(browser, kind, repeats)
        with AppServer(REPO, timeout=600) as url:
            t = time.perf_counter()
            wait_preloaded(url, limit=1800)
            out["preload_seconds"] = time.perf_counter() - t
            print(f"   the server's preload done after {out['preload_seconds']:.0f} s")
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.set_default_timeout(600_000)
            for name, (path, kind, there, back) in _interactions().items():
                try:
                    times = _changes(page, url, path, there, back, repeats)
                except Exception as exc:  # noqa: BLE001 - one interaction's failure is reported
                    slug = re.sub(r"\W+", "-", name)
                    shot = REPO / "test-artifacts" / f"bench-failed-{slug}.png"
                    shot.parent.mkdir(exist_ok=True)
                    page.screenshot(path=str(shot), full_page=True)
                    out[name] = {"kind": kind, "screenshot": str(shot),
                                 "error": f"{type(exc).__name__}: {str(exc)[:200]}"}  # fmt: skip
                    print(f"   {name:<32} FAILED: {out[name]['error']}")
                    continue
                first, warm = times[0], times[2:]
                out[name] = {"kind": kind, "first": first, "first_back": times[1], "warm": warm,
                             "median": statistics.median(warm)}  # fmt: skip
        for kind in CHANGE_WIDGETS:
            floors[kind] += _bare_changes(browser, kind, repeats)
        browser.close()
    floor = {kind: statistics.median(times) for kind, times in floors.items()}
    out["floors"] = {kind: {"warm": floors[kind], "median": floor[kind]} for kind in floors}
    out["bare_floor"] = out["floors"]["radio"]  # the radio floor, as runs before the kinds had it
    print("   floors: " + ", ".join(f"{kind} {m:.2f} s" for kind, m in floor.items()))
    for name, row in out.items():
        if isinstance(row, dict) and "median" in row and "kind" in row:
            own = floor[row["kind"]]
            row["floor"], row["ratio"] = own, row["median"] / own
            row["ratio_radio_floor"] = row["median"] / floor["radio"]
            print(f"   {name:<32} median {row['median']:.2f} s (max {max(row['warm']):.2f} s; "
                  f"first time {row['first']:.2f} s); its {row['kind']} floor {own:.2f} s "
                  f"({row['ratio']:.1f}x; {row['ratio_radio_floor']:.1f}x the radio "
                  "floor)")  # fmt: skip
    return out
