"""Parts 3, 7 and 8 of ``python -m bench run app``: a freshly started ``streamlit run app.py``
and its first visitors in headless Chromium. 3: seconds from the process start to the first
chart, cold and warm cache, against Streamlit's default file watcher; 7: the WSD page's first
answer on an empty cache; 8: ready before the first visitor (the preload), a first and a second
visitor, and every page's first view, beside the floor (:data:`floor.BARE_APP`).
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.lib.measure import cpu_seconds, wait_idle
from bench.speed.app_parts import REPO
from bench.speed.app_parts.floor import BARE_APP, bare_app
from devtools.appserver import AppServer, preload_status, wait_preloaded
from devtools.browser import CHROMIUM, CHROMIUM_ARGS, FIRST_VIEWS


def first_render(
    cache_dir: str, env: dict[str, str] | None = None, started: bool = False
) -> dict[str, float]:
    """Seconds from ``streamlit run`` to health, title and first chart in a real browser, with
    the project's ``.streamlit/config.toml`` (as a user starts it) and ``env`` on top; with
    ``started``, the page is opened only once the server is idle (a server started ahead, as
    before a demo), and ``chart_after_navigation`` is the figure that counts."""
    from playwright.sync_api import sync_playwright

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
            wait_idle(proc.pid)
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
            out["server_cpu"] = cpu_seconds(proc.pid)
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
          f"config, median of {repeats}); Streamlit's default watcher {base:.1f} s, "
          f"ratio {base / ours:.2f}x; load average now {os.getloadavg()[0]:.1f}")  # fmt: skip


def bench_cold_wsd() -> dict:
    from playwright.sync_api import sync_playwright

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
            cpu = cpu_seconds(app.proc.pid)
            browser.close()
    wall, after_open = done - start, done - opened
    print(f"   COLD WSD PAGE: answered {wall:.1f} s after `streamlit run` (server healthy at "
          f"{healthy:.1f} s; {after_open:.1f} s after the page was opened); server CPU "
          f"{cpu:.0f} s")  # fmt: skip
    return {"seconds_after_start": wall, "seconds_after_open": after_open,
            "healthy_seconds": healthy, "server_cpu_seconds": cpu}  # fmt: skip


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
    (:data:`devtools.browser.FIRST_VIEWS`, in the order a visitor meets them) opened by a first
    and then a second visitor, each in a new browser context; seconds of each, by page path."""
    wait_preloaded(url, limit=limit)
    views = {}
    for path, view in FIRST_VIEWS:
        first = _view_seconds(browser, f"{url}{path}", view)
        views[path] = {"first": first, "second": _view_seconds(browser, f"{url}{path}", view)}
    return views


def _ready_run(browser, repo: Path, env: dict, label: str) -> dict:
    """One server of part 8: started, a first visitor (at once, or 30 s after the start when
    ``label`` is ``ahead``) and for ``ahead`` a second visitor; seconds of each."""
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
        if label == "cold" and repo == REPO:
            wait_preloaded(app.url, limit=900.0)  # untimed: the disk cache of an earlier run
        steps = preload_status(app.url)["steps"] if repo == REPO else []
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
    visitor after it (each a new browser context). Warm disk cache: filled by the first run
    (the cold cache, timed once), which is left to finish its preload before it stops, as on a
    machine that ran the app before (a run stopped at its first chart would leave the later
    pages' caches empty, and every warm run would make them while its first chart draws). On
    each server started ahead, once its preload has finished, every page's first view opened by
    a first and a second visitor (a row per page beside the floor).

    The floor, interleaved with each warm and ahead run: the same measures of a bare Streamlit
    app (:data:`BARE_APP`, the project's ``.streamlit/config.toml``) that draws one plotly
    heatmap and nothing else: what Streamlit's server, its front end and plotly.js cost in this
    browser on this machine before the workbench does anything."""
    from playwright.sync_api import sync_playwright

    print("\n8. ready before the first visitor (`streamlit run app.py`, preload at start)")
    out: dict = {"at_once": [], "started_30s_before": [], "cold_at_once": None,
                 "bare_at_once": [], "bare_started_30s_before": []}  # fmt: skip
    cache = tempfile.mkdtemp(prefix="wb-bench-cache-")
    bare = bare_app(BARE_APP)
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
