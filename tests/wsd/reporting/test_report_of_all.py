"""The report of ALL as a user gets it: ``workbench wsd eval --out DIR`` with the shipped
bi-encoder on the framework's ALL (real data, the real model): the page's size, its title, no
training-lemma list on the page (only in the JSON), and the files it names."""

from __future__ import annotations

import html
import json
import re

import pytest

from workbench.cli.main import main

pytestmark = pytest.mark.slow

#: The issue's bound on the HTML report of ALL.
MAX_HTML_BYTES = 3_000_000


@pytest.fixture(scope="module")
def report_of_all(wsd_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("report-of-all")
    # without the default's smoothing: its neighbours' glosses (about 28,000 for ALL) would be
    # encoded on this session's empty cache, minutes of the suite for a test of the report; the
    # title then names the lever set apart from the folder's (tested below)
    assert main(["wsd", "eval", "--smoothing", "0", "--out", str(out)]) == 0
    return out


def test_the_html_of_all_is_under_3_mb_and_lists_no_training_lemmas(report_of_all):
    page = (report_of_all / "wsd-ALL.html").read_text(encoding="utf-8")
    assert len(page.encode()) < MAX_HTML_BYTES
    saved = json.loads((report_of_all / "wsd-ALL.json").read_text(encoding="utf-8"))
    lemmas = saved["config"]["index"]["training"]["restricted_to"]
    assert isinstance(lemmas, list) and len(lemmas) > 1000  # the full list is in the JSON
    assert f"{len(lemmas)} items, sha256 " in page  # the page says its count and digest
    listed = [w for w in lemmas if f'"{w}"' in page or f"&quot;{w}&quot;" in page]
    assert listed == []  # no lemma of it as an item of a list on the page
    assert page.count("<details") >= 1  # the configuration folded
    assert page.count('id="plotly-gz"') == 1 and "src=" not in page  # plotly.js inlined once


def test_the_title_names_system_model_training_and_f1_with_its_interval(report_of_all):
    saved = json.loads((report_of_all / "wsd-ALL.json").read_text(encoding="utf-8"))
    summary, system = saved["summary"], saved["system"]
    title = saved["title"]
    assert system["settings"] == "smoothing 0"  # the folder's own smoothing turned off, named
    expected = (
        f"WSD on ALL: {system['name']}, {system['settings']} ({system['model']}; trained on "
        f"{system['training']}), "
        f"F1 {summary['F1']:.1f} [{summary['F1_low']:.1f}, {summary['F1_high']:.1f}]"
    )
    assert title == expected
    assert system["name"] == "biencoder" and system["model"].startswith("minilm-wsd on ")
    assert summary["F1_low"] < summary["F1"] < summary["F1_high"] and summary["n"] == 7253
    page = (report_of_all / "wsd-ALL.html").read_text(encoding="utf-8")
    heading = re.search(r"<h1>(.*?)</h1>", page, re.S)
    assert heading is not None and html.unescape(heading.group(1)) == title
    markdown = (report_of_all / "wsd-ALL.md").read_text(encoding="utf-8")
    assert markdown.startswith("# WSD on ALL: biencoder, smoothing 0 (")


def test_the_files_are_there_with_every_table_as_csv_and_the_latex_table(report_of_all):
    names = {p.name for p in report_of_all.iterdir()}
    assert {"wsd-ALL.html", "wsd-ALL.md", "wsd-ALL.json", "wsd-ALL.tex", "ALL.key.txt"} <= names
    tables = (
        "summary",
        "datasets",
        "published",
        "mfs",
        "seen",
        "pos",
        "dataset_pos",
        "candidates",
        "calibration",
        "errors_by_lemma",
        "errors_sample",
        "sources",
    )
    assert {f"wsd-ALL.{t}.csv" for t in tables} <= names
    latex = (report_of_all / "wsd-ALL.tex").read_text(encoding="utf-8")
    assert r"\toprule" in latex and r"\bottomrule" in latex
    assert len([line for line in latex.splitlines() if line.endswith(r"\\")]) == 1 + 6


def test_the_errors_in_words_carry_sentences_and_clean_definitions(report_of_all):
    saved = json.loads((report_of_all / "wsd-ALL.json").read_text(encoding="utf-8"))
    shown = saved["errors"]["by_lemma"] + saved["errors"]["sample"]
    assert len(saved["errors"]["sample"]) == 25
    for error in shown:
        assert re.search(r"\[[^\]]+\]", error["sentence"]), error["id"]  # the word marked
        assert error["gold_definition"] and error["link"].startswith("http://localhost:8501/wsd?")
        for definition in (error["gold_definition"], error["predicted_definition"]):
            assert not re.search(r";\s*(;|-|$)", definition), (error["id"], definition)
