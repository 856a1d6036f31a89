"""Part 10 of ``python -m bench run app``: the corpus map in headless Chromium. SemCor's first N
sentences (0 = all) at layer 6: seconds to draw the map and to answer a search, the JavaScript
heap and Chromium's memory, and frame intervals while panning, per renderer (plotly; Embedding
Atlas when installed).
"""

from __future__ import annotations

import importlib.util
import os
import time
import urllib.parse

import numpy as np

from bench.lib.measure import chromium_rss
from bench.speed.app_parts import REPO
from devtools.appserver import AppServer
from devtools.browser import CHROMIUM, CHROMIUM_ARGS, KEPT_CHART, in_kept_chart, wait_run_ended

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
    from playwright.sync_api import sync_playwright

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
                    page.locator(in_kept_chart(".gl-container canvas, .scatterlayer .point")
                                 ).first.wait_for()  # fmt: skip
                else:
                    frame = page.frame_locator('iframe[title*="embedding_atlas"]').first
                    frame.locator("canvas").first.wait_for()
                wait_run_ended(page, pause_ms=0)
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
                wait_run_ended(page, pause_ms=0)
                search = time.perf_counter() - t
                print(f"   search answered after {search:.1f} s", flush=True)
                heap = page.evaluate(
                    "() => performance.memory ? performance.memory.usedJSHeapSize / 1048576 : null"
                )
                frames = None
                target = (page.locator(in_kept_chart(".nsewdrag")).first
                          if renderer == "plotly" else
                          page.frame_locator('iframe[title*="embedding_atlas"]').first
                          .locator("canvas").first)  # fmt: skip
                area = target.bounding_box()
                if area:
                    if renderer == "plotly":
                        page.locator(KEPT_CHART).first.hover()
                        page.locator(in_kept_chart('.modebar-btn[data-val="pan"]')).first.click()
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
                            "js_heap_mb": heap, "chromium_rss_mb": chromium_rss(),
                            "frames_while_panning": frames, "graphics": gl,
                            "load_average": os.getloadavg()[0]}  # fmt: skip
                print(f"   {key}: drawn {drawn:.1f} s after opening, search {search:.2f} s, "
                      f"JS heap {heap or 0:.0f} MB, Chromium RSS {chromium_rss():.0f} MB, "
                      f"frames while panning {frames}; {gl}")  # fmt: skip
                page.close()
        browser.close()
    return out
