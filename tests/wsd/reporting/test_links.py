"""Links from a report's errors into the app's WSD page: the URL, its checks, the report's files."""

from __future__ import annotations

import csv
import io
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.wsd.reporting.handmade import ROWS, hand_made
from workbench.errors import InputError
from workbench.reports.tables import Link, Table, html_table, markdown_table
from workbench.wsd.reporting.document import eval_report
from workbench.wsd.reporting.files import csv_zip, report_texts
from workbench.wsd.reporting.links import APP_URL, check_app_url, error_link, wsd_link


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_a_wsd_link_opens_the_wsd_page_with_the_sentence_word_and_system():
    url = wsd_link("He sat on the bank & ate", "bank", pos="NOUN", system="biencoder")
    assert url.startswith(f"{APP_URL}/wsd?") and APP_URL == "http://localhost:8501"
    assert _query(url) == {"sentence": "He sat on the bank & ate", "word": "bank",
                           "pos": "NOUN", "system": "biencoder"}  # fmt: skip
    other = wsd_link("a b a", "a", occurrence=2, model="all-mpnet-base-v2",
                     base_url="https://example.org:8600/app/")  # fmt: skip
    assert other.startswith("https://example.org:8600/app/wsd?")
    assert _query(other) == {"sentence": "a b a", "word": "a", "occurrence": "2",
                             "model": "all-mpnet-base-v2"}  # fmt: skip


@pytest.mark.parametrize(
    "bad", ["javascript:alert(1)", "ftp://host", "localhost:8501", "http://a b", "http://x?q=1"]
)
def test_an_app_address_that_is_not_http_is_refused(bad):
    with pytest.raises(InputError, match="app's address"):
        check_app_url(bad)
    if "?" not in bad:  # a link may carry a query; an app's address may not
        with pytest.raises(InputError, match="a link must be"):
            Link("open", bad)


def test_each_error_links_to_its_sentence_word_and_occurrence(tmp_path):
    rows = list(ROWS)  # row 1 is wrong: its word is the second "bank" of the sentence
    rows[1] = (*rows[1][:7], "a bank and a bank loan", 4)
    made = hand_made(tuple(rows))
    doc = eval_report(made.run, made.corpus, made.wordnet, made.facts, {}, n_boot=50,
                      app_url="http://example.org:8600")  # fmt: skip
    examples = {e.id: e for e in doc.errors["sample"]}
    assert len(examples) == 3  # the three wrong answers of the hand-made run
    bank = examples["senseval2.d000.s001.t000"]
    assert (bank.text, bank.word, bank.occurrence, bank.pos) == (
        "a bank and a bank loan", "bank", 2, "NOUN")  # fmt: skip
    assert bank.link == error_link(bank, system="biencoder", base_url="http://example.org:8600")
    assert _query(bank.link) == {
        "sentence": "a bank and a bank loan", "word": "bank", "occurrence": "2", "pos": "NOUN",
        "system": "biencoder",
    }  # fmt: skip
    play = examples["semeval2007.d000.s004.t000"]
    assert _query(play.link)["word"] == "play" and "occurrence" not in _query(play.link)

    texts = report_texts(doc, "wsd-ALL")
    html, md = texts["html"][1], texts["md"][1]
    href = bank.link.replace("&", "&amp;")
    assert f'<a href="{href}">open</a>' in html
    assert f"[open]({bank.link})" in md
    assert bank.link in texts["json"][1]
    sample = list(csv.DictReader(io.StringIO(texts["csv:errors_sample"][1])))
    assert {r["in the app"] for r in sample} == {e.link for e in doc.errors["sample"]}
    assert b"wsd-ALL.errors_sample.csv" in csv_zip(texts)


def test_a_custom_system_links_without_a_system_and_the_model_is_carried():
    made = hand_made()
    facts = made.facts.__class__(**{**made.facts.__dict__, "name": "custom"})
    doc = eval_report(made.run, made.corpus, made.wordnet, facts, {}, n_boot=50,
                      app_model="all-mpnet-base-v2")  # fmt: skip
    (first, *_) = doc.errors["sample"]
    assert "system" not in _query(first.link)
    assert _query(first.link)["model"] == "all-mpnet-base-v2"


def test_only_a_link_cell_becomes_an_anchor():
    table = Table(
        ("a", "b"), (("http://evil.example/x", Link("go", "http://ok.example/?a=1&b=2")),)
    )
    html = html_table(table)
    assert html.count("<a ") == 1 and 'href="http://ok.example/?a=1&amp;b=2"' in html
    assert "[go](http://ok.example/?a=1&b=2)" in markdown_table(table)
