"""Benchmark: the app's numbers, each against a plain baseline in this process where there is one
(part 7: the first visit, measured alone).

Run:  python -m bench run app [--points 5000] [--repeats 3] [--only umap|switch|render|rerun ...]
      python -m bench run app --only compare --only separation      # issue 13's two numbers

1. UMAP on 5,000 word vectors at one layer, warm (numba already compiled): the workbench's
   ``Projector`` (``random_state=0``, hence single-threaded and reproducible) against plain
   ``umap.UMAP()`` with its defaults (multi-threaded, not reproducible), same vectors. The cold
   first fit of the process (JIT compilation) is reported too.
2. Layer switch on the Senses page with cached embeddings: the time of an AppTest rerun after
   moving the layer slider to a layer not seen yet (a new projection, embeddings from the memo),
   against the baseline of what that switch costs without cached embeddings (encoding the same
   occurrences from scratch, then the same projection).
3. First page render: ``streamlit run app.py`` started as a fresh process and Debian's
   headless Chromium (Playwright) opening it: seconds from the process start to the server's
   health check, to the page's title and to the first chart (the Explore heatmap), with an
   empty embedding cache (cold) and again with the cache filled (warm). The server runs as a
   user starts it (the project's ``.streamlit/config.toml``: polling file watcher); baseline:
   the same with Streamlit's default watcher (watchdog over the project folder, ``.venv``
   included). The last line, ``FIRST CHART: ...``, is the figure docs/benchmarks.md records.
   The server's CPU time until the chart is printed too: on a shared machine it tells the work
   from the waiting.

4. Side by side (issue 13), in a real browser: the Senses page opened from a link that shows
   300 SemCor occurrences of "play" in two panes (layers 3 and 6, UMAP), warm (model loaded,
   numba compiled, vectors encoded): seconds from opening the link until both panes and the
   separation curve are drawn, with every result cached (the link reopened) and with new
   projections (another seed: two UMAP fits, vectors from the memo). Baseline: the same two
   plain ``umap.UMAP(random_state=seed)`` fits in this process.
5. The separation curve over all 7 hidden states, raw and z-scored, of the same 300 cached
   vectors (``geometry.separation.separation_by_layer``), against a plain scikit-learn loop
   (``silhouette_score(metric="cosine")`` and a leave-one-out 1-NN with ``NearestNeighbors``).

6. A rerun of the WSD page (found by trying the app on an empty cache): seconds from
   entering another word in the "One sentence" tab until its answer shows, warm (model, WordNet
   and the best index loaded, answers memoised after their first time), and the server's CPU
   seconds meanwhile, with the project's ``.streamlit/config.toml`` (no forced garbage
   collection after a script run) against Streamlit's default (``--runner.postScriptGC true``,
   a full ``gc.collect(2)`` after every run and every tick of a page's progress poll).

7. The WSD page on an empty cache (a new user's first visit, ``--only cold``, once): seconds from
   ``streamlit run app.py`` with an empty ``WORKBENCH_CACHE`` until the WSD page, opened as soon
   as the server answers, shows its example sentence's answer with the default system (the
   shipped bi-encoder: the model loads and the word's glosses are encoded meanwhile), and from
   opening the page; the server's CPU seconds.

8. Ready before the first visitor (``--only ready``): ``streamlit run app.py`` with its preload
   (``webapp.startup``), Chromium opening it at once (the first chart's seconds after the process
   start), and a server started 30 s before its first visitor, then a second visitor; once the
   preload has finished, each page's first view for a first and a second visitor (a row per page,
   beside the floor: the bare app's first chart).
9. Reruns per interaction (``--only interactions``): each page's common widget changes (word,
   correction, search; the Senses page's layer switch is part 2), warm, median of back-and-forth
   pairs, the first time apart; beside the floor of the same run, measured before and after the
   pages: a bare Streamlit app whose radio choice redraws its one plotly heatmap.
10. The corpus map in the browser (``--only map --map-sentences 2000 6000 0``): SemCor's first N
   sentences (0 = all), seconds to draw and to answer a search, Chromium's memory, frame
   intervals while panning, per renderer (plotly; Embedding Atlas when installed). Maps made
   before (``python -m bench run corpus_map --keep``) load from ``--map-cache``.

Numbers are medians of ``--repeats``; the machine is shared, so the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
import warnings
from pathlib import Path

import numpy as np

from bench.lib.record import write_json
from workbench import Encoder
from workbench.corpora.occurrences import demo_sentences, encode_occurrences
from workbench.corpora.reference import load_reference_corpus, sample_corpus
from workbench.encoding.cache import encode_cached
from workbench.geometry.corrections import make_postprocessor
from workbench.geometry.separation import separation_by_layer
from workbench.viz.projection import Projector, trustworthiness
from workbench.viz.sense_views import lemma_occurrences

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def word_vectors(n_points: int) -> tuple[np.ndarray, str]:
    """``n_points`` real word vectors at the last layer, from a seeded corpus sample."""

    corpus = load_reference_corpus("auto")
    sample = sample_corpus(corpus, n_points, unit="words", random_state=0)
    emb = encode_cached(Encoder(device="cpu"), sample.words, layers=[6], progress=False)
    return np.asarray(emb.select("6"))[:n_points], corpus.name


def bench_umap(n_points: int, repeats: int) -> None:
    import umap

    x, corpus = word_vectors(n_points)
    print(f"\n1. UMAP, {len(x):,} word vectors of {corpus} at layer 6 ({x.shape[1]} dims)")
    t = time.perf_counter()
    Projector(random_state=0).fit(np.random.default_rng(0).normal(size=(4500, 16)))
    print(f"   cold: first fit of the process (numba compilation) {time.perf_counter() - t:.1f} s")
    ours = _median_time(lambda: Projector(random_state=0).fit(x), repeats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = _median_time(lambda: umap.UMAP().fit(x), repeats)
    coords = Projector(random_state=0).fit_transform(x)
    tw = trustworthiness(x[:2000], coords[:2000], n_neighbors=10)
    print(f"   workbench Projector(random_state=0): {ours:.2f} s (median of {repeats})")
    print(f"   plain umap.UMAP() defaults:          {plain:.2f} s")
    print(f"   ratio plain / ours: {plain / ours:.2f}x; trustworthiness (first 2,000) {tw:.3f}")


def bench_layer_switch(repeats: int) -> None:
    from streamlit.testing.v1 import AppTest

    import webapp.caches  # imports streamlit (heavy); webapp/ is found through REPO on sys.path

    for source, word in (("demo", "bank"), ("semcor", "play")):
        if source == "semcor" and "semcor" not in webapp.caches.available_datasets.__wrapped__():
            continue
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600).run()
        at.switch_page("webapp/pages/senses.py").run()
        at.selectbox(key="senses_source").set_value(source).run()
        if source == "demo":
            at.selectbox(key="senses_demo_word").set_value(word).run()
        else:
            at.text_input(key="senses_lemma").set_value(word).run()
        assert not at.exception, at.exception
        n = int(at.caption[1].value.split()[0])
        times = []
        for layer in ["0", "1", "2", "3", "4", "5", "6"][: max(repeats, 3)]:
            t = time.perf_counter()
            at.select_slider(key="senses_layer").set_value(layer).run()
            times.append(time.perf_counter() - t)
            assert not at.exception and at.get("plotly_chart"), at.exception
        slider = at.select_slider(key="senses_layer")
        again = _median_time(lambda s=slider: s.set_value("3").run(), 3)
        found = webapp.caches.occurrences.__wrapped__(
            source, word, None, 300 if source == "semcor" else None,
            _corpus=webapp.caches.corpus.__wrapped__("semcor") if source == "semcor" else None,
        )  # fmt: skip
        enc = Encoder(device="cpu")

        def baseline(enc=enc, found=found):
            emb = enc.encode([list(o.words) for o in found], keep=[[o.index] for o in found],
                             progress=False)  # fmt: skip
            Projector(random_state=0).fit(emb.select("3"))

        base = _median_time(baseline, repeats)
        med = statistics.median(times)
        print(f"\n2. layer switch, Senses page, {source} '{word}' ({n} occurrences)")
        print(f"   new layer (new projection, cached embeddings): median {med:.2f} s, "
              f"max {max(times):.2f} s over layers {len(times)}")  # fmt: skip
        print(f"   a layer seen before (everything cached): {again:.2f} s")
        print(f"   baseline, embeddings recomputed + projection: {base:.2f} s; "
              f"ratio baseline / switch {base / med:.1f}x")  # fmt: skip


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its reaped children (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _wait_idle(pid: int, quiet: float = 1.5, limit: float = 120.0) -> None:
    """Wait until process ``pid`` has used under 5% of a CPU for ``quiet`` seconds (the app's
    preload thread has loaded the model), at most ``limit`` seconds."""
    end = time.perf_counter() + limit
    last, since = _cpu_seconds(pid), time.perf_counter()
    while time.perf_counter() < end:
        time.sleep(0.25)
        now = _cpu_seconds(pid)
        if now - last > 0.05 * 0.25:
            since = time.perf_counter()
        elif time.perf_counter() - since >= quiet:
            return
        last = now


def first_render(
    cache_dir: str, env: dict[str, str] | None = None, started: bool = False
) -> dict[str, float]:
    """Seconds from ``streamlit run`` to health, title and first chart in a real browser, with
    the project's ``.streamlit/config.toml`` (as a user starts it) and ``env`` on top; with
    ``started``, the page is opened only once the server is idle (a server started ahead, as
    before a demo), and ``chart_after_navigation`` is the figure that counts."""
    from playwright.sync_api import sync_playwright

    # tests/ is not installed: found through REPO on sys.path, set when this script starts
    from tests.appserver import CHROMIUM, CHROMIUM_ARGS, AppServer

    env = {"WORKBENCH_CACHE": cache_dir, **(env or {})}
    app = AppServer(REPO, env=env, timeout=600, watcher=True)
    t0 = time.perf_counter()
    proc = app.start()
    out: dict[str, float] = {}
    try:
        url = app.url
        app.wait_healthy()
        out["health"] = time.perf_counter() - t0
        if started:
            _wait_idle(proc.pid)
        with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
            ctx = pw.chromium.launch_persistent_context(
                profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            page = ctx.new_page()
            page.set_default_timeout(120_000)
            t_nav = time.perf_counter()
            page.goto(url)
            page.get_by_text("Explore a word across layers").wait_for()
            out["title"] = time.perf_counter() - t0
            page.locator('[data-testid="stPlotlyChart"] .heatmaplayer').first.wait_for()
            out["chart"] = time.perf_counter() - t0
            out["server_cpu"] = _cpu_seconds(proc.pid)
            out["chart_after_navigation"] = time.perf_counter() - t_nav
            ctx.close()
    finally:
        app.stop()
    return out


#: Streamlit's own default file watcher (watchdog on the app's folder, recursively, .venv
#: included) instead of the project's ``poll``: the baseline of the first-chart time.
DEFAULT_WATCHER = {"STREAMLIT_SERVER_FILE_WATCHER_TYPE": "auto"}


def bench_first_render(repeats: int) -> None:
    print("\n3. first page render (fresh `streamlit run app.py` process + headless Chromium)")
    venv = (REPO / ".venv").is_dir()
    print(f"   virtual environment inside the project folder: {'yes' if venv else 'no'}")
    results = {}
    for label, env in (("cold cache", None), ("warm cache", None),
                       ("warm cache, Streamlit's default watcher", DEFAULT_WATCHER)):  # fmt: skip
        runs = []
        cache = tempfile.mkdtemp(prefix="wb-bench-cache-")
        try:
            if label.startswith("warm"):
                first_render(cache, env)  # fills the cache
            for _ in range(repeats if label.startswith("warm") else 1):
                if label == "cold cache":
                    shutil.rmtree(cache)
                    os.makedirs(cache)
                runs.append(first_render(cache, env))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        med = results[label] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"   {label}: server healthy {med['health']:.1f} s, page title {med['title']:.1f} s, "
              f"first chart {med['chart']:.1f} s after the process start "
              f"({med['chart_after_navigation']:.1f} s after opening the page; "
              f"median of {len(runs)}); server CPU time until the chart "
              f"{med['server_cpu']:.1f} s")  # fmt: skip
    cache = tempfile.mkdtemp(prefix="wb-bench-cache-")
    try:
        first_render(cache)  # fills the cache
        runs = [first_render(cache, started=True) for _ in range(repeats)]
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    opened = statistics.median(r["chart_after_navigation"] for r in runs)
    print(f"   warm cache, page opened on a started server (idle, model preloaded): first chart "
          f"{opened:.1f} s after opening the page (median of {repeats}; max "
          f"{max(r['chart_after_navigation'] for r in runs):.1f} s)")  # fmt: skip
    ours = results["warm cache"]["chart"]
    base = results["warm cache, Streamlit's default watcher"]["chart"]
    print(f"   FIRST CHART: {ours:.1f} s after `streamlit run app.py` (warm cache, the project's "
          f"config, median of {repeats}; target < 5 s); Streamlit's default watcher {base:.1f} s, "
          f"ratio {base / ours:.2f}x; load average now {os.getloadavg()[0]:.1f}")  # fmt: skip


COMPARE_LINK = {
    "source": "semcor", "word": "play", "limit": "300", "compare": "1", "method": "umap",
    "a_layer": "3", "a_corr": "none", "b_layer": "6", "b_corr": "none",
}  # fmt: skip


def _play_vectors():
    """The 300 SemCor occurrences of "play" the link shows, encoded (through the cache)."""
    found = lemma_occurrences("play", "semcor", limit=300)
    return encode_occurrences(Encoder(device="cpu"), found)


def _drawn(page, url: str, pid: int) -> tuple[float, float]:
    """Seconds from opening ``url`` until both panes' points and the curve are drawn, and the
    server's CPU seconds meanwhile."""
    cpu, t = _cpu_seconds(pid), time.perf_counter()
    page.goto(url)
    charts = page.locator('[data-testid="stPlotlyChart"]')
    charts.nth(2).locator(".scatterlayer .trace").first.wait_for()
    for i in range(2):
        charts.nth(i).locator(".scatterlayer .point").first.wait_for()
    return time.perf_counter() - t, _cpu_seconds(pid) - cpu


def bench_compare(repeats: int) -> None:
    import umap
    from playwright.sync_api import sync_playwright

    # tests/ is not installed: found through REPO on sys.path, set when this script starts
    from tests.appserver import CHROMIUM, CHROMIUM_ARGS, AppServer

    ov = _play_vectors()
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
    base = _median_time(plain, repeats)
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


def bench_separation(repeats: int) -> None:
    from sklearn.metrics import silhouette_score
    from sklearn.neighbors import NearestNeighbors

    ov = _play_vectors()
    ref = encode_cached(Encoder(device="cpu"), demo_sentences(), progress=False)
    post = make_postprocessor("zscore").fit(ref.vectors)
    labels = np.asarray(ov.labels)
    keep = np.isin(labels, [k for k, n in zip(*np.unique(labels, return_counts=True)) if n >= 2])
    x_all = np.asarray(ov.vectors)

    def ours():
        return separation_by_layer(x_all, ov.labels, ov.emb.layers, post)

    def plain():
        out = []
        for x in (x_all, post.transform(x_all)):
            for i in range(x.shape[1]):
                v, lab = x[keep, i], labels[keep]
                nn = NearestNeighbors(n_neighbors=2, metric="cosine").fit(v)
                idx = nn.kneighbors(v, return_distance=False)[:, 1]
                out.append((silhouette_score(v, lab, metric="cosine"), (lab[idx] == lab).mean()))
        return out

    curve, check = ours(), plain()
    t_ours, t_plain = _median_time(ours, repeats), _median_time(plain, repeats)
    sil = [r.silhouette for r in curve.rows]
    gap = max(abs(a - b[0]) for a, b in zip(sil, check))
    print(f"\n5. separation curve, 'play' ({len(ov.occurrences)} occurrences, {len(curve.layers)} "
          f"hidden states x raw and z-scored), cached vectors")  # fmt: skip
    print(f"   workbench separation_by_layer: {t_ours * 1000:.0f} ms (median of {repeats})")
    print(f"   baseline, scikit-learn silhouette_score + NearestNeighbors: "
          f"{t_plain * 1000:.0f} ms; ratio baseline / ours {t_plain / t_ours:.1f}x "
          f"(largest silhouette gap {gap:.1e})")  # fmt: skip


def _answered(page, word: str, pid: int) -> tuple[float, float]:
    """Seconds from entering ``word`` in the WSD page's Word box until its answer shows, and
    the server's CPU seconds meanwhile."""
    box = page.get_by_label("Word", exact=True)
    cpu, t = _cpu_seconds(pid), time.perf_counter()
    box.fill(word)
    box.press("Enter")
    page.locator('[data-testid="stAlert"]', has_text=f"{word}%").first.wait_for()
    return time.perf_counter() - t, _cpu_seconds(pid) - cpu


def bench_rerun(repeats: int) -> dict:
    from playwright.sync_api import sync_playwright

    from tests.appserver import CHROMIUM, CHROMIUM_ARGS, AppServer

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


def bench_cold_wsd() -> dict:
    from playwright.sync_api import sync_playwright

    from tests.appserver import CHROMIUM, CHROMIUM_ARGS, AppServer

    print("\n7. the WSD page on an empty cache: the first answer after `streamlit run app.py`")
    with tempfile.TemporaryDirectory(prefix="wb-cold-") as cache:
        app = AppServer(REPO, env={"WORKBENCH_CACHE": cache}, timeout=600)
        start = time.perf_counter()
        with app as url, sync_playwright() as pw:
            healthy = time.perf_counter() - start
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                         args=CHROMIUM_ARGS)  # fmt: skip
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.set_default_timeout(3_600_000)
            opened = time.perf_counter()
            page.goto(f"{url}/wsd")
            page.locator('[data-testid="stAlert"]', has_text="bank%").first.wait_for()
            done = time.perf_counter()
            cpu = _cpu_seconds(app.proc.pid)
            browser.close()
    wall, after_open = done - start, done - opened
    print(f"   COLD WSD PAGE: answered {wall:.1f} s after `streamlit run` (server healthy at "
          f"{healthy:.1f} s; {after_open:.1f} s after the page was opened); server CPU "
          f"{cpu:.0f} s")  # fmt: skip
    return {"seconds_after_start": wall, "seconds_after_open": after_open,
            "healthy_seconds": healthy, "server_cpu_seconds": cpu}  # fmt: skip


def _preload_status(url: str) -> dict:
    import json
    import urllib.request

    with urllib.request.urlopen(f"{url}/_workbench/preload", timeout=10) as resp:
        return json.loads(resp.read())


def _view_seconds(browser, url: str, view: str) -> float:
    """Seconds from opening ``url`` in a new browser context until ``view`` (a CSS selector)
    draws."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(300_000)
    t = time.perf_counter()
    page.goto(url)
    page.locator(view).first.wait_for()
    seconds = time.perf_counter() - t
    ctx.close()
    return seconds


def _first_chart(browser, url: str) -> float:
    """Seconds from opening ``url`` in a new browser context until the Explore heatmap draws."""
    return _view_seconds(browser, url, '[data-testid="stPlotlyChart"] .heatmaplayer')


def _page_views(browser, url: str, limit: float = 900.0) -> dict:
    """Once the server's preload is finished (at most ``limit`` s): each page's first view
    (:data:`tests.appserver.FIRST_VIEWS`, in the order a visitor meets them) opened by a first
    and then a second visitor, each in a new browser context; seconds of each, by page path."""
    from tests.appserver import FIRST_VIEWS

    end = time.monotonic() + limit
    while not _preload_status(url)["ready"]:
        if time.monotonic() > end:
            raise TimeoutError(f"the preload did not finish within {limit:.0f} s")
        time.sleep(0.5)
    views = {}
    for path, view in FIRST_VIEWS:
        first = _view_seconds(browser, f"{url}{path}", view)
        views[path] = {"first": first, "second": _view_seconds(browser, f"{url}{path}", view)}
    return views


#: The floor of part 8: Streamlit alone drawing one plotly heatmap, no model, no workbench.
BARE_APP = """import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="bare", layout="wide")
st.title("A heatmap")
st.plotly_chart(go.Figure(go.Heatmap(z=np.arange(42).reshape(6, 7))))
"""


#: The floor of part 9: Streamlit alone redrawing one plotly heatmap when a radio changes.
BARE_CHANGE_APP = """import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="bare", layout="wide")
word = st.radio("Word", ["alpha", "beta"], horizontal=True)
st.title(f"A heatmap of {word}")
z = np.arange(42).reshape(6, 7) * (1 if word == "alpha" else -1)
st.plotly_chart(go.Figure(go.Heatmap(z=z)))
"""


def _bare_app(text: str) -> Path:
    """A temporary folder holding ``text`` as ``app.py`` and the project's Streamlit config."""
    bare = Path(tempfile.mkdtemp(prefix="wb-bench-bare-"))
    (bare / "app.py").write_text(text, encoding="utf-8")
    shutil.copytree(REPO / ".streamlit", bare / ".streamlit")
    return bare


def _ready_run(browser, repo: Path, env: dict, label: str) -> dict:
    """One server of part 8: started, a first visitor (at once, or 30 s after the start when
    ``label`` is ``ahead``) and for ``ahead`` a second visitor; seconds of each."""
    from tests.appserver import AppServer

    app = AppServer(repo, env=env, timeout=600, watcher=True)
    t0 = time.perf_counter()
    app.start()
    try:
        app.wait_healthy()
        health = time.perf_counter() - t0
        if label == "ahead":
            time.sleep(max(0.0, 30.0 - health))
        first = _first_chart(browser, app.url)
        from_start = time.perf_counter() - t0
        second = _first_chart(browser, app.url) if label == "ahead" else None
        pages = _page_views(browser, app.url) if label == "ahead" and repo == REPO else {}
        steps = _preload_status(app.url)["steps"] if repo == REPO else []
    finally:
        app.stop()
    return {"health": health, "first_chart_after_navigation": first,
            "first_chart_after_start": from_start, "second_visitor": second, "pages": pages,
            "load_average": os.getloadavg()[0],
            "preload": {s["name"]: round(s["seconds"], 2) for s in steps}}  # fmt: skip


def bench_ready(repeats: int) -> dict:
    """8. Ready before the first visitor: ``streamlit run app.py`` (the project's config, the
    preload of ``webapp.startup``) and Chromium opening it at once, the first chart's seconds
    from the process start; then a server started 30 s before the first visitor, and a second
    visitor after it (each a new browser context). Warm embedding cache (filled by a first
    run), as on a machine that ran the app before; the cold cache once. On each server started
    ahead, once its preload has finished, every page's first view opened by a first and a second
    visitor (a row per page beside the floor).

    The floor, interleaved with each warm and ahead run: the same measures of a bare Streamlit
    app (:data:`BARE_APP`, the project's ``.streamlit/config.toml``) that draws one plotly
    heatmap and nothing else: what Streamlit's server, its front end and plotly.js cost in this
    browser on this machine before the workbench does anything."""
    from playwright.sync_api import sync_playwright

    from tests.appserver import CHROMIUM, CHROMIUM_ARGS

    print("\n8. ready before the first visitor (`streamlit run app.py`, preload at start)")
    out: dict = {"at_once": [], "started_30s_before": [], "cold_at_once": None,
                 "bare_at_once": [], "bare_started_30s_before": []}  # fmt: skip
    cache = tempfile.mkdtemp(prefix="wb-bench-cache-")
    bare = _bare_app(BARE_APP)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                         args=CHROMIUM_ARGS)  # fmt: skip
            for label in ("cold", *["warm"] * repeats, *["ahead"] * repeats):
                for repo, kind in ((REPO, "workbench"), (bare, "bare")):
                    if kind == "bare" and label == "cold":
                        continue
                    run = _ready_run(browser, repo, {"WORKBENCH_CACHE": cache}, label)
                    key = {"cold": "cold_at_once", "warm": "at_once",
                           "ahead": "started_30s_before"}[label]  # fmt: skip
                    if kind == "bare":
                        out["bare_" + key].append(run)
                    elif label == "cold":
                        out[key] = run
                    else:
                        out[key].append(run)
                    second = run["second_visitor"]
                    print(f"   {kind}, {label}: healthy {run['health']:.1f} s; first chart "
                          f"{run['first_chart_after_start']:.1f} s after the start "
                          f"({run['first_chart_after_navigation']:.1f} s after opening)"
                          + (f"; second visitor {second:.1f} s" if second is not None else "")
                          + f"; load {run['load_average']:.1f}")  # fmt: skip
            browser.close()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(bare, ignore_errors=True)

    def median(key: str, field: str) -> float:
        return statistics.median(r[field] for r in out[key])

    for prefix, name in (("", "workbench"), ("bare_", "bare Streamlit + one plotly heatmap")):
        at_once = median(prefix + "at_once", "first_chart_after_start")
        ahead = median(prefix + "started_30s_before", "first_chart_after_navigation")
        second = median(prefix + "started_30s_before", "second_visitor")
        print(f"   READY, {name}: first chart {at_once:.1f} s after `streamlit run` (median of "
              f"{repeats}); on a server started 30 s before {ahead:.1f} s; a second visitor "
              f"{second:.1f} s")  # fmt: skip
    floor = median("bare_started_30s_before", "first_chart_after_navigation")
    for path in out["started_30s_before"][0]["pages"]:
        first = statistics.median(r["pages"][path]["first"] for r in out["started_30s_before"])
        again = statistics.median(r["pages"][path]["second"] for r in out["started_30s_before"])
        print(
            f"   PAGE {path}: first view {first:.1f} s once the preload finished, a second "
            f"visitor {again:.1f} s; the bare floor {floor:.1f} s ({first / floor:.1f}x)"
        )
    return out


#: Common interactions per page: (page path, what to do, the text that shows it is done).
def _interactions():
    def pill(name):
        return lambda page: page.get_by_role("radio", name=name).click()

    def choose(label, option):
        def act(page):
            page.get_by_role("combobox", name=label, exact=True).click()
            page.get_by_role("option", name=option, exact=True).click()

        return act

    def segment(name):
        return lambda page: page.get_by_role("radio", name=name, exact=True).click()

    def typed(label, text):
        def act(page):
            box = page.get_by_label(label, exact=True)
            box.fill(text)
            box.press("Enter")

        return act

    return {
        "explore: another word": ("/", (pill("the ×7"), "“the”: similarity"),
                                  (pill("bank ×5"), "“bank”: similarity")),
        "explore: another correction": ("/", (choose("Correction", "centered"), "centered vectors"),
                                        (choose("Correction", "standardized"),
                                         "standardized vectors")),
        "senses: another word": ("/senses", (choose("Word", "bass"), "“bass”, layers"),
                                 (choose("Word", "bank"), "“bank”, layers")),
        "geometry: another correction": ("/geometry",
                                         (segment("centered"), "(centered vectors)"),
                                         (segment("standardized"), "(standardized vectors)")),
        "corpus map: search": ("/corpus_map", (typed("Search a word or lemma", "bank"), "“bank”:"),
                               (typed("Search a word or lemma", "river"), "“river”:")),
        "wsd: another word": ("/wsd?index=system%3Awordnet",
                              (typed("Word", "river"), "river%"), (typed("Word", "bank"), "bank%")),
    }  # fmt: skip


def _changes(page, url: str, path: str, there, back, repeats: int) -> list[float]:
    """Seconds of ``repeats + 1`` back-and-forth pairs of one interaction (each until its text
    shows and Streamlit's run ends), the page opened first at ``url + path``."""
    page.goto(url + path)
    page.locator('[data-testid="stPlotlyChart"]').first.wait_for()

    def settle() -> None:
        page.wait_for_timeout(100)
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden")

    settle()
    times = []
    for _ in range(repeats + 1):
        for act, done in (there, back):
            t = time.perf_counter()
            act(page)
            page.get_by_text(done).first.wait_for(timeout=180_000)
            settle()
            times.append(time.perf_counter() - t)
    return times


def _bare_changes(browser, repeats: int) -> list[float]:
    """The floor of part 9: the warm back-and-forth changes of :data:`BARE_CHANGE_APP`."""
    from tests.appserver import AppServer

    bare = _bare_app(BARE_CHANGE_APP)
    try:
        with AppServer(bare, timeout=600) as url:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.set_default_timeout(600_000)
            there = (lambda pg: pg.get_by_text("beta", exact=True).click(), "A heatmap of beta")
            back = (lambda pg: pg.get_by_text("alpha", exact=True).click(), "A heatmap of alpha")
            times = _changes(page, url, "/", there, back, repeats)
            page.close()
    finally:
        shutil.rmtree(bare, ignore_errors=True)
    return times[2:]


def bench_interactions(repeats: int) -> dict:
    """9. Each page's common interactions, warm (the page opened once, every first computation
    done): seconds from the widget change until the page shows the new result and Streamlit's
    run ends, in headless Chromium at 1280 px; median of ``repeats`` back-and-forth pairs,
    and the first time (new results computed) apart. The floor (:data:`BARE_CHANGE_APP`'s
    radio change redrawing its heatmap) is measured before and after the pages, and each
    interaction's median is printed beside the floor's median over both."""
    from playwright.sync_api import sync_playwright

    from tests.appserver import CHROMIUM, CHROMIUM_ARGS, AppServer

    print("\n9. reruns per interaction (warm server, headless Chromium, 1280 px)")
    out: dict = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=CHROMIUM_ARGS)  # fmt: skip
        floor = _bare_changes(browser, repeats)
        with AppServer(REPO, timeout=600) as url:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.set_default_timeout(600_000)
            for name, (path, there, back) in _interactions().items():
                try:
                    times = _changes(page, url, path, there, back, repeats)
                except Exception as exc:  # noqa: BLE001 - one interaction's failure is reported
                    out[name] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
                    print(f"   {name:<32} FAILED: {out[name]['error']}")
                    continue
                first, warm = times[0], times[2:]
                out[name] = {"first": first, "first_back": times[1], "warm": warm,
                             "median": statistics.median(warm)}  # fmt: skip
        floor += _bare_changes(browser, repeats)
        browser.close()
    bare = statistics.median(floor)
    out["bare_floor"] = {"warm": floor, "median": bare}
    for name, row in out.items():
        if name != "bare_floor" and "median" in row:
            print(f"   {name:<32} median {row['median']:.2f} s (max {max(row['warm']):.2f} s; "
                  f"first time {row['first']:.2f} s); the bare floor {bare:.2f} s "
                  f"({row['median'] / bare:.1f}x)")  # fmt: skip
    return out


def _chromium_rss() -> float:
    """Resident memory of every Chromium process on this machine, in MB (Linux /proc)."""
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"chromium" not in (proc / "cmdline").read_bytes():
                continue
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


_FRAMES_JS = """
() => new Promise(done => {
  const stamps = []; const end = performance.now() + 2000;
  function tick(t) { stamps.push(t); if (t < end) requestAnimationFrame(tick); else done(stamps); }
  requestAnimationFrame(tick);
})
"""


def bench_map_browser(sentences: list[int], cache: str | None) -> dict:
    """10. The corpus map in the browser: SemCor's first N sentences (0 = all 778,587 words;
    maps made before, e.g. by ``python -m bench run corpus_map --keep``, are loaded from ``cache``):
    seconds from opening the page until the map is drawn, to answer a search, Chromium's
    memory, and frame intervals while panning (plotly) for each renderer available."""
    import importlib.util

    from playwright.sync_api import sync_playwright

    from tests.appserver import CHROMIUM, CHROMIUM_ARGS, AppServer

    renderers = ["plotly"]
    if importlib.util.find_spec("embedding_atlas") is not None:
        renderers.append("Embedding Atlas")
    print(f"\n10. the corpus map in headless Chromium ({', '.join(renderers)})")
    out: dict = {}
    env = {"WORKBENCH_CACHE": cache} if cache else {}
    app = AppServer(REPO, env=env, timeout=600)
    with app as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=CHROMIUM_ARGS)  # fmt: skip
        for n in sentences:
            for renderer in renderers:
                page = browser.new_page(viewport={"width": 1280, "height": 1200})
                page.set_default_timeout(3_600_000)  # the first map of a corpus is made here
                gl = page.evaluate(
                    "() => { const c = document.createElement('canvas'); "
                    "return {webgl: !!c.getContext('webgl'), "
                    "webgl2: !!c.getContext('webgl2'), webgpu: !!navigator.gpu}; }"
                )
                query = urllib.parse.urlencode(
                    {
                        "source": "semcor",
                        "sentences": n,
                        "layer": "6",
                        "correction": "none",
                        "renderer": renderer,
                    }
                )
                t = time.perf_counter()
                page.goto(f"{url}/corpus_map?{query}")
                if renderer == "plotly":
                    page.locator('[data-testid="stPlotlyChart"] .gl-container canvas, '
                                 '[data-testid="stPlotlyChart"] .scatterlayer .point'
                                 ).first.wait_for()  # fmt: skip
                else:
                    frame = page.frame_locator('iframe[title*="embedding_atlas"]').first
                    frame.locator("canvas").first.wait_for()
                page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden")
                drawn = time.perf_counter() - t
                print(f"   drawn after {drawn:.1f} s", flush=True)
                page.set_default_timeout(300_000)  # the rest works on the map made
                caption = page.get_by_text("words of semcor").first.inner_text()
                n_words = int(caption.split()[0].replace(",", ""))
                box = page.get_by_label("Search a word or lemma")
                t = time.perf_counter()
                box.fill("bank")
                box.press("Enter")
                page.get_by_text("“bank”:").first.wait_for()
                page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden")
                search = time.perf_counter() - t
                print(f"   search answered after {search:.1f} s", flush=True)
                heap = page.evaluate(
                    "() => performance.memory ? performance.memory.usedJSHeapSize / 1048576 : null"
                )
                frames = None
                target = (page.locator('[data-testid="stPlotlyChart"] .nsewdrag').first
                          if renderer == "plotly" else
                          page.frame_locator('iframe[title*="embedding_atlas"]').first
                          .locator("canvas").first)  # fmt: skip
                area = target.bounding_box()
                if area:
                    if renderer == "plotly":
                        page.locator('[data-testid="stPlotlyChart"]').first.hover()
                        page.locator('.modebar-btn[data-val="pan"]').first.click()
                    cx, cy = area["x"] + area["width"] / 2, area["y"] + area["height"] / 2
                    page.mouse.move(cx, cy)
                    page.mouse.down()
                    stamps = page.evaluate_handle(_FRAMES_JS)
                    for i in range(40):
                        page.mouse.move(cx + 150 * np.sin(i / 6), cy + 100 * np.cos(i / 6))
                        page.wait_for_timeout(45)
                    page.mouse.up()
                    times = np.diff(np.asarray(stamps.json_value(), dtype=float))
                    if len(times):
                        frames = {"median_ms": float(np.median(times)),
                                  "p95_ms": float(np.percentile(times, 95)),
                                  "n_frames": int(len(times) + 1)}  # fmt: skip
                key = f"{renderer}, {n_words:,} words"
                out[key] = {"sentences": n, "n_words": n_words, "renderer": renderer,
                            "drawn_seconds": drawn, "search_seconds": search,
                            "js_heap_mb": heap, "chromium_rss_mb": _chromium_rss(),
                            "frames_while_panning": frames, "graphics": gl,
                            "load_average": os.getloadavg()[0]}  # fmt: skip
                print(f"   {key}: drawn {drawn:.1f} s after opening, search {search:.2f} s, "
                      f"JS heap {heap or 0:.0f} MB, Chromium RSS {_chromium_rss():.0f} MB, "
                      f"frames while panning {frames}; {gl}")  # fmt: skip
                page.close()
        browser.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", action="append",
                    choices=("umap", "switch", "render", "compare", "separation", "rerun", "cold",
                             "ready", "interactions", "map"),
                    help="run only these parts (repeatable); default all")  # fmt: skip
    ap.add_argument("--json", help="write the raw figures of the parts that give them here")
    ap.add_argument(
        "--map-sentences",
        type=int,
        nargs="*",
        default=[2000, 6000, 0],
        help="SemCor's first N sentences for the corpus map part (0 = all)",
    )
    ap.add_argument(
        "--map-cache", help="the WORKBENCH_CACHE holding the maps (default: the environment's)"
    )
    args = ap.parse_args()
    parts = set(args.only or ("umap", "switch", "render", "compare", "separation", "rerun"))
    os.chdir(REPO)
    raw = {"load_average_start": os.getloadavg()[0], "cpus": os.cpu_count()}
    print(f"load average at start: {raw['load_average_start']:.1f} on {raw['cpus']} CPUs")
    if "umap" in parts:
        bench_umap(args.points, args.repeats)
    if "switch" in parts:
        bench_layer_switch(args.repeats)
    if "render" in parts:
        bench_first_render(args.repeats)
    if "compare" in parts:
        bench_compare(args.repeats)
    if "separation" in parts:
        bench_separation(args.repeats)
    if "rerun" in parts:
        raw["rerun"] = bench_rerun(args.repeats)
    if "cold" in parts:
        raw["cold"] = bench_cold_wsd()
    if "ready" in parts:
        raw["ready"] = bench_ready(args.repeats)
    if "interactions" in parts:
        raw["interactions"] = bench_interactions(args.repeats)
    if "map" in parts:
        raw["map"] = bench_map_browser(args.map_sentences, args.map_cache)
    write_json(args.json, raw)
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
