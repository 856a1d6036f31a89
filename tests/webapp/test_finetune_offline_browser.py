"""The Fine-tune page on a machine without the WSD data, in a real browser (Debian's headless
Chromium through Playwright): an app server of its own with an empty ``WORKBENCH_DATA`` offers
three jobs (WordNet's two and your own files) and says which need the WSD data; a WordNet job
trains the tiny BERT at the smallest settings, and the tuned model is a choice on Senses."""

from __future__ import annotations

import json
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.appserver import AppServer
from devtools.browser import EXCEPTION, choose_option, wait_run_ended
from webapp.offered_models import OWNER_LIST, runs_dir

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SLOW_MS = 240_000
RUN = "wordnet-wic-offline"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def offline_server(tiny_model_dir, tmp_path_factory) -> Iterator[str]:
    """An app server whose ``WORKBENCH_DATA`` is an empty folder (the session's cache; the tiny
    BERT offered by its owner's list)."""
    empty = tmp_path_factory.mktemp("no-wsd-data")
    ARTIFACTS.mkdir(exist_ok=True)
    env = {"WORKBENCH_DATA": str(empty), OWNER_LIST: str(tiny_model_dir)}
    with open(ARTIFACTS / "streamlit-offline.log", "w") as log, AppServer(REPO, env, log) as url:
        yield url


def _open(page, url: str, path: str, query: dict[str, str], heading: str) -> None:
    page.goto(f"{url}/{path}?{urllib.parse.urlencode(query)}")
    page.get_by_text(heading).first.wait_for()
    wait_run_ended(page, SLOW_MS)
    assert page.locator(EXCEPTION).count() == 0, "a traceback is shown"


def test_offline_jobs_train_and_their_model_opens_in_senses(
    offline_server, browser, tiny_model_dir
):
    shutil.rmtree(runs_dir() / RUN, ignore_errors=True)  # the session's own runs folder
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(SLOW_MS)
    try:
        smallest = {"model": str(tiny_model_dir), "data": "wordnet-wic", "train": "32",
                    "dev": "16", "test": "16", "epochs": "1", "batch": "16",
                    "max_length": "32", "baselines": "0", "run": RUN}  # fmt: skip
        _open(page, offline_server, "finetune", smallest, "Fine-tune an encoder")
        main = page.locator('[data-testid="stMain"]')
        for job in ("word in context · WordNet", "supersenses · WordNet", "my own files"):
            assert main.get_by_role("radio", name=job, exact=True).count() == 1, job
        assert main.get_by_role("radio", name="word in context · SemCor").count() == 0
        assert "workbench data download" in main.inner_text()  # which jobs need it, and how
        page.get_by_role("button", name="Fine-tune", exact=True).click()
        page.get_by_role("heading", name="Result").wait_for()
        wait_run_ended(page, SLOW_MS)
        assert page.locator(EXCEPTION).count() == 0, "a traceback is shown"
        card = json.loads((runs_dir() / RUN / "training_card.json").read_text())
        assert card["builtin"]["name"] == "wordnet-wic" and card["data"]["train"]["n"] == 32
        page.screenshot(path=str(ARTIFACTS / "finetune-offline.png"), full_page=True)
        # the tuned model is one of the models a pane of Senses offers; chosen, it draws
        senses = {"model": str(tiny_model_dir), "source": "demo", "demo_word": "bass",
                  "compare": "1", "method": "pca"}  # fmt: skip
        _open(page, offline_server, "senses", senses, "Sense clusters")
        models = page.locator('[data-testid="stSelectbox"]').filter(has_text="Model")
        choose_option(models.nth(1), f"finetuned/{RUN}", SLOW_MS)  # pane B's
        # the run that draws it has ended once the page's link names it and nothing is stale
        page.wait_for_url(lambda link: "b_model=" in link and RUN in link)
        wait_run_ended(page, SLOW_MS)
        page.wait_for_function("() => !document.querySelector('[data-stale=\"true\"]')")
        assert page.locator(EXCEPTION).count() == 0, "a traceback is shown"
        chosen = page.locator('[data-testid="stSelectbox"] input[aria-label="Model"]').nth(1)
        assert chosen.input_value().strip() == f"finetuned/{RUN}"
        charts = page.locator('[data-testid="stPlotlyChart"]')
        charts.nth(1).locator(".scatterlayer .point").first.wait_for()  # plotly draws it last
        assert charts.count() == 2  # pane A, pane B (the tuned model); the curve is folded
        assert charts.nth(1).locator(".scatterlayer .point").count() >= 3
        page.screenshot(path=str(ARTIFACTS / "senses-offline-tuned.png"), full_page=True)
    finally:
        page.close()
