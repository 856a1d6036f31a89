"""Tables as CSV and LaTeX, outside text escaped, the configuration folded and summarised, and
plotly.js compressed once."""

from __future__ import annotations

import base64
import csv
import gzip
import io

import plotly.graph_objects as go

from workbench.escaping import latex_text, markdown_text
from workbench.reports.tables import Table, csv_table
from workbench.reports.writers import Report, Section, summarised, to_html, to_markdown


def test_markdown_text_shows_markup_as_text():
    assert markdown_text("<b>a_b</b> *x* [l](u) | & #") == (
        r"\<b\>a\_b\</b\> \*x\* \[l\](u) \| \& \#"
    )
    assert markdown_text("two\nlines") == "two lines"


def test_latex_text_escapes_every_special_character_once():
    assert latex_text(r"50% a_b & $1 #2 {x} ~ ^ \ [y]") == (
        r"50\% a\_b \& \$1 \#2 \{x\} \textasciitilde{} \textasciicircum{} "
        r"\textbackslash{} {[}y{]}"
    )


def test_csv_keeps_full_numbers_and_leaves_missing_values_empty():
    table = Table(("key", "F1"), (("say%2:32:15::", 73.51234), ('a "q", b', float("nan"))))
    rows = list(csv.reader(io.StringIO(csv_table(table))))
    assert rows == [["key", "F1"], ["say%2:32:15::", "73.51234"], ['a "q", b', ""]]


def test_long_lists_are_summarised_for_reading_and_kept_whole_in_json():
    config = {"training": {"restricted_to": [f"w{i}" for i in range(50)], "few": [1, 2]}}
    shown = summarised(config)
    assert shown["training"]["few"] == [1, 2]
    assert shown["training"]["restricted_to"].startswith("50 items, sha256 ")
    report = Report("t", config, sections=(Section("s"),))
    md, page = to_markdown(report), to_html(report)
    for text in (md, page):
        assert "w49" not in text and "50 items, sha256" in text
        assert "<details><summary>" in text


def test_compressed_html_carries_plotly_once_and_draws_each_figure():
    figs = (go.Figure(go.Bar(x=[1], y=[2])), go.Figure(go.Scatter(x=[1], y=[2], name="</script>")))
    report = Report("t", {}, sections=(Section("s", figures=figs),))
    page = to_html(report, compressed=True)
    assert page.count('id="plotly-gz"') == 1 and page.count("DecompressionStream") == 1
    packed = page.split('id="plotly-gz">', 1)[1].split("</script>", 1)[0]
    from plotly.offline import get_plotlyjs

    assert gzip.decompress(base64.b64decode(packed)).decode() == get_plotlyjs()
    assert 'id="figure-0"' in page and 'id="figure-1-spec"' in page
    # a figure's text cannot end its script element: every </script> closes a <script
    assert page.count("</script>") == page.count("<script")
    assert len(page) < len(to_html(report)) / 2
