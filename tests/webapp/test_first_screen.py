"""The picture on a projector's first screen: on every page with a figure, opened with its
defaults at 1280x800 and at 1920x1080, the main figure's visible part fills at least half of the
main area's first screen (the window less the sidebar), measured from the element's box in a
real browser (Debian's headless Chromium, driven by Playwright).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.browser import EXCEPTION, FIRST_VIEWS, KEPT_CHART, wait_run_ended

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SLOW_MS = 240_000
#: The windows: a projector's and an ordinary monitor's.
WINDOWS = ((1280, 800), (1920, 1080))
#: Each page with a figure and its main figure (the first plotly chart of the page, drawn by
#: Streamlit or in a kept chart's frame).
MAIN_FIGURE = f'[data-testid="stPlotlyChart"], {KEPT_CHART}'
PAGES = tuple(path for path, _ in FIRST_VIEWS)
#: The share of the main area's first screen that the main figure's visible part must fill.
MIN_SHARE = 0.5

#: The main figure's visible area over the main area's visible area (both clipped to the window).
SHARE_JS = """([main, figure]) => {
  const clip = (r) => ({left: Math.max(r.left, 0), top: Math.max(r.top, 0),
                        right: Math.min(r.right, window.innerWidth),
                        bottom: Math.min(r.bottom, window.innerHeight)});
  const area = (r) => Math.max(0, r.right - r.left) * Math.max(0, r.bottom - r.top);
  const m = clip(document.querySelector(main).getBoundingClientRect());
  const f = clip(document.querySelector(figure).getBoundingClientRect());
  const both = {left: Math.max(m.left, f.left), top: Math.max(m.top, f.top),
                right: Math.min(m.right, f.right), bottom: Math.min(m.bottom, f.bottom)};
  return {share: area(both) / area(m), main: [m.left, m.top, m.right, m.bottom],
          figure: [f.left, f.top, f.right, f.bottom]};
}"""

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize("path", PAGES, ids=[p.strip("/") or "explore" for p in PAGES])
def test_the_main_figure_fills_half_the_first_screen(browser, server, path):
    """The page opened at the first window, then the window made the second: nothing on a
    page is sized from the window at load (the figures' heights are fixed, their widths follow
    the page's by CSS and plotly's ``responsive``), so the second measure is the one a page
    opened at that size gets, without a second load."""
    name = path.strip("/") or "explore"
    width, height = WINDOWS[0]
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(SLOW_MS)
    boxes = {}
    try:
        page.goto(f"{server}{path}")
        page.locator(dict(FIRST_VIEWS)[path]).first.wait_for()
        page.locator(MAIN_FIGURE).first.wait_for()
        wait_run_ended(page, SLOW_MS)
        assert page.locator(EXCEPTION).count() == 0, f"{path}: a traceback is shown"
        ARTIFACTS.mkdir(exist_ok=True)
        for at, size in enumerate(WINDOWS):
            if at:  # the next window: the same page resized
                page.set_viewport_size({"width": size[0], "height": size[1]})
            page.wait_for_timeout(500)  # plotly's last layout pass after the run or the resize
            assert page.evaluate("() => window.scrollY") == 0
            assert page.evaluate("() => [innerWidth, innerHeight]") == list(size)
            boxes[size] = page.evaluate(SHARE_JS, ['[data-testid="stMain"]', MAIN_FIGURE])
            page.screenshot(path=str(ARTIFACTS / f"first-screen-{name}-{size[0]}x{size[1]}.png"))
    finally:
        page.close()
    for (w, h), box in boxes.items():
        assert box["share"] >= MIN_SHARE, f"{path} at {w}x{h}: {box}"
    assert len(boxes) == len(WINDOWS)


def test_the_geometry_table_fits_1280_px_with_whole_headers(browser, server):
    """Geometry's per-layer table at 1280x800: no column cut off (the table is no wider than
    its box), no header cell clipped, and a rogue-dimensions cell on at most three lines."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(SLOW_MS)
    try:
        page.goto(f"{server}/geometry")
        table = page.locator('[data-testid="stTable"]').first
        table.wait_for()
        wait_run_ended(page, SLOW_MS)
        table.scroll_into_view_if_needed()
        width = table.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert width[0] <= width[1] + 1, width
        clipped = table.locator("th").evaluate_all(
            "els => els.filter(e => e.scrollHeight > e.clientHeight + 1 "
            "|| e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"
        )
        assert clipped == []
        header = table.locator("thead tr").last.locator("th").all_inner_texts()
        at = [h.strip() for h in header].index("top-3 (share)")
        cell = table.locator("tbody tr").first.locator("th, td").nth(at)
        lines = cell.evaluate(
            "e => Math.round(e.getBoundingClientRect().height / "
            "parseFloat(getComputedStyle(e).lineHeight))"
        )
        assert lines <= 4, lines  # three dimensions, one a line at most (with the padding)
        page.screenshot(path=str(ARTIFACTS / "geometry-table-1280.png"), full_page=True)
    finally:
        page.close()
