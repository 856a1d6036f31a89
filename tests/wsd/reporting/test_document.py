"""The evaluation report of a hand-made run: first screen, escaping, LaTeX, files, JSON."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from tests.wsd.reporting import handmade
from tests.wsd.reporting.handmade import ROWS, hand_made
from workbench.reports.tables import Table, latex_table
from workbench.reports.writers import to_html, to_markdown
from workbench.wsd.levers import LEVERS_FILE, NO_LEVERS, TestTimeLevers
from workbench.wsd.reporting.document import eval_report, system_facts
from workbench.wsd.reporting.error_examples import readable_definition
from workbench.wsd.reporting.files import report_files, write_eval_report
from workbench.wsd.reporting.instances import table_from_json
from workbench.wsd.reporting.published import PUBLISHED, SETS

LEMMAS = [f"lemma{i:04d}.NOUN" for i in range(300)]
CONFIG = {"index": {"training": {"corpus": "semcor", "restricted_to": LEMMAS}}, "seed": 0}


def _doc(made, **kw):
    return eval_report(made.run, made.corpus, made.wordnet, made.facts, CONFIG, n_boot=200, **kw)


def test_the_title_and_first_section_say_system_model_training_and_f1_with_interval(made):
    doc = _doc(made)
    title = doc.report.title
    assert title.startswith("WSD on ALL: biencoder (tiny-model; trained on hand-made), F1 50.0 [")
    first = doc.report.sections[0]
    assert first.title == "Summary"
    assert "WordNet 1st sense scores" in first.text and "SemCor MFS scores" in first.text
    assert "200 resamples, seed 0" in first.text
    (summary,) = first.tables
    assert [r[0] for r in summary.rows] == ["this system", "WordNet 1st sense", "SemCor MFS"]
    assert doc.report.data["method"]["seed"] == 0 and doc.report.data["method"]["n_boot"] == 200


def test_the_report_holds_no_training_lemma_list_but_the_json_does(made, tmp_path):
    doc = _doc(made)
    paths = write_eval_report(doc, tmp_path, "wsd-ALL")
    for kind in ("md", "html"):
        text = paths[kind].read_text()
        assert "lemma0150.NOUN" not in text
        assert "300 items, sha256 " in text
        assert "<details>" in text
    saved = json.loads(paths["json"].read_text())
    assert saved["config"]["index"]["training"]["restricted_to"] == LEMMAS


def test_markup_in_a_sentence_or_sense_key_is_shown_as_text(tmp_path):
    rows = list(ROWS)
    bad_key = "bank%1:<b>x</b>_*y*::"
    rows[1] = (*rows[1][:3], bad_key, rows[1][4], *rows[1][5:7], "a <script>alert(1)</script>", 1)
    made = hand_made(tuple(rows))
    doc = _doc(made)
    html = to_html(doc.report, compressed=True)
    md = to_markdown(doc.report)
    assert "<script>alert" not in html and "<b>x</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "bank%1:&lt;b&gt;x&lt;/b&gt;_*y*::" in html
    assert "<script>" not in md and "<b>" not in md
    assert r"\[\<script\>alert(1)\</script\>\]" in md
    assert r"bank%1:\<b\>x\</b\>\_\*y\*::" in md


def test_latex_table_is_booktabs_with_escaped_percent_and_underscore():
    rows = (("best_run", "say%2:32:15::", 73.51), ("a & b #1", "[x]", None))
    table = Table(("system", "key", "F1"), rows, caption="F1 (%) per run", digits=1)
    text = latex_table(table, label="tab:x")
    lines = text.splitlines()
    assert lines[0] == r"\begin{table}[t]" and lines[-1] == r"\end{table}"
    assert r"\begin{tabular}{llr}" in lines
    rules = [line for line in lines if line in (r"\toprule", r"\midrule", r"\bottomrule")]
    assert rules == [r"\toprule", r"\midrule", r"\bottomrule"]
    assert r"best\_run & say\%2:32:15:: & 73.5 \\" in lines
    assert r"a \& b \#1 & {[}x{]} & -- \\" in lines
    assert r"\caption{F1 (\%) per run}" in lines
    body = text.replace(r"\%", "").replace(r"\_", "")
    assert "%" not in body and "_" not in body.replace("tab:x", "")


def test_the_main_results_latex_has_a_row_per_dataset_with_intervals(made):
    doc = _doc(made)
    rows = [line for line in doc.latex.splitlines() if line.endswith(r"\\")]
    assert rows[0].startswith("Dataset & n & F1 {[}95\\% CI{]}")
    assert [r.split(" & ")[0] for r in rows[1:]] == ["senseval2", "semeval2007", "ALL"]
    assert re.match(r"ALL & 6 & 50\.0 \{\[\}\d+\.\d, \d+\.\d\{\]\} & 50\.0 & 50\.0 \\\\", rows[-1])


def test_the_files_are_the_named_ones_and_read_back(made, tmp_path):
    doc = _doc(made)
    paths = write_eval_report(doc, tmp_path, "wsd-ALL")
    names = {p.name for p in paths.values()}
    assert names <= set(report_files("wsd-ALL"))
    assert {"wsd-ALL.seen.csv", "wsd-ALL.tex", "wsd-ALL.calibration.csv"} <= names
    with open(tmp_path / "wsd-ALL.datasets.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["group"] for r in rows] == ["senseval2", "semeval2007", "ALL"]
    assert float(rows[-1]["F1"]) == 50.0 and float(rows[-1]["95% low"]) <= 50.0
    saved = json.loads(paths["json"].read_text())
    assert saved["summary"]["F1"] == 50.0
    assert saved["datasets"]["ALL"]["system"]["F1_low"] <= 50.0
    assert {s["split"] for s in saved["splits"]} >= {"WordNet first sense", "seen in training"}
    table = table_from_json(saved)
    assert table.ids == made.run.instances.ids
    assert list(table.credit) == [1, 0, 1, 0, 0, 1]
    assert list(table.seen) == [20, 0, 2, 5, 0, 1]
    errors = saved["errors"]["by_lemma"]
    # play: two errors of two; bank: one of three
    assert [(e["lemma"], e["wrong"], e["total"]) for e in errors] == [
        ("play.VERB", 2, 2), ("play.VERB", 2, 2), ("bank.NOUN", 1, 3)]  # fmt: skip
    wrong = errors[2]
    assert (wrong["sentence"], wrong["gold_definition"], wrong["predicted_definition"]) == (
        "a [bank] loan", "a financial institution", "sloping land")  # fmt: skip
    assert wrong["margin"] == pytest.approx(0.1)


def test_calibration_puts_answers_without_a_runner_up_apart(made):
    doc = _doc(made)
    rows = doc.tables["calibration"].rows
    assert rows[-1][0] == "no runner-up or back-off" and rows[-1][3] == 1
    assert sum(r[3] for r in rows) == 6


def test_published_figures_stand_only_beside_the_frameworks_sets(made):
    doc = _doc(made)
    published = doc.tables["published"]
    assert published.columns == ("system", "source", "figures", "checked here",
                                 "senseval2", "semeval2007", "ALL")  # fmt: skip
    assert all(row[2] == "reported" for row in published.rows[:-1])
    assert published.rows[-1][:3] == ("this system", "this run", "measured here")
    bem = next(row for row in published.rows if row[0] == "BEM")
    assert bem[1] == "Blevins and Zettlemoyer (2020)"  # the CSV names each figure's source too
    assert bem[3:] == ("all", 79.4, 74.5, 79.0)
    # GlossBERT's reported ALL leaves SemEval-2007 out: not in the framework's ALL column
    glossbert = next(row for row in published.rows if row[0] == "GlossBERT")
    assert glossbert[3:] == ("all", 77.7, 72.5, None)
    metric = next(row for row in published.rows if row[0] == "MetricWSD")
    assert metric[3:] == ("all", None, None, 75.1)
    assert any("Blevins and Zettlemoyer (2020)" in note for note in published.notes)
    note = next(n for n in published.notes if n.startswith("GlossBERT:"))
    assert "ALL (4 test sets)" in note and "76.9 on the framework's ALL" in note
    rows = tuple(("mine", *r[1:]) for r in ROWS)  # a corpus of no framework set
    other = _doc(hand_made(rows, name="mine"))
    assert "published" not in other.tables
    assert other.report.title.startswith("WSD on mine: ")


def test_every_published_figure_shown_was_checked_against_a_named_source():
    for system in PUBLISHED:
        shown = {k for k, v in system.f1.items() if v is not None}
        assert shown, system.name
        assert shown <= set(system.checked), system.name
        assert set(system.f1) == set(SETS)
        assert "github.com" in system.checked_against or "aclanthology" in system.checked_against


def test_a_run_with_levers_says_them_in_its_title_and_tables(made):
    facts = replace(made.facts, settings="smoothing 0.5")
    made = replace(made, facts=facts)
    doc = _doc(made)
    assert doc.report.title.startswith(
        "WSD on ALL: biencoder, smoothing 0.5 (tiny-model; trained on hand-made), F1 50.0 ["
    )
    assert doc.tables["summary"].rows[0][1] == "biencoder, smoothing 0.5"
    assert r"WSD F1 (\%) of biencoder, smoothing 0.5 (tiny-model)" in doc.latex
    assert doc.report.data["system"]["settings"] == "smoothing 0.5"


class _Index:
    """What system_facts reads of a sense index: its training, counts and settings."""

    training_ = SimpleNamespace(corpus="semcor, as centroids", n_occurrences=10)
    counts_ = np.array([3, 0])
    config = SimpleNamespace(label="L6 zscore")

    def __len__(self):
        return 2


def test_system_facts_name_the_levers_and_a_custom_index_s_settings():
    index = _Index()
    opened = SimpleNamespace(biencoder=None, encoder=SimpleNamespace(name="m"), levers=None)
    plain = system_facts(opened, index, "best", "d")
    assert (plain.label, plain.training, plain.knows_counts) == ("best", "semcor", True)
    opened.levers = TestTimeLevers(smoothing=0.5)
    assert system_facts(opened, index, "biencoder", "d").label == "biencoder, smoothing 0.5"
    opened.levers = TestTimeLevers()
    assert system_facts(opened, index, "biencoder", "d").settings == ""
    assert system_facts(opened, index, "custom", "d").label == "custom, L6 zscore"


def test_a_bi_encoders_own_levers_are_its_default_and_not_named_in_the_title(tmp_path):
    (tmp_path / LEVERS_FILE).write_text('{"smoothing": 0.25}')
    bi = SimpleNamespace(directory=tmp_path, card={"base_model": "b"}, name="x")
    opened = SimpleNamespace(biencoder=bi, encoder=None, levers=TestTimeLevers(0.25, 0.0))
    assert system_facts(opened, _Index(), "biencoder", "d").label == "biencoder"
    opened.levers = NO_LEVERS
    assert system_facts(opened, _Index(), "biencoder", "d").label == "biencoder, smoothing 0"
    opened.levers = TestTimeLevers(0.25, 0.1)
    assert system_facts(opened, _Index(), "biencoder", "d").label == "biencoder, prior 0.1"


def test_definitions_are_shown_without_the_leftovers_of_removed_examples(monkeypatch):
    # WordNet's reader gives a definition as NLTK does: examples dropped, their "; -" kept
    monkeypatch.setitem(handmade.GLOSSES, handmade.B2, "a financial institution; ; - A. Smith")
    doc = _doc(hand_made())
    bank = next(e for e in doc.errors["by_lemma"] if e.lemma == "bank.NOUN")
    assert bank.gold_definition == "a financial institution"
    assert readable_definition("in the habit; ; ; - H. D. Thoreau") == "in the habit"
    assert readable_definition("wrong; not agreeing; ; the side") == "wrong; not agreeing; the side"
