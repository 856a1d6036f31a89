"""A library report drawn on a page: its sections as headings, text, tables and figures, and a
WSD report's errors in words as sentences with their links into the WSD page.

The report (:class:`workbench.reports.writers.Report`) is the one the library writes to files;
nothing here computes a number: a page shows what the report holds.

Example::

    show_report(doc.report, "wsd_report", open_sections=2, skip=("Errors in words",))
    show_errors(doc.errors["sample"])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from webapp.downloads import CHART_CONFIG
from webapp.text import plain
from workbench.reports.tables import Link, Table
from workbench.reports.writers import Report, Section
from workbench.wsd.reporting.error_examples import ErrorExample


def table_frame(table: Table) -> pd.DataFrame:
    """``table`` as a data frame: numbers rounded to its digits, a link as its address."""
    rows = [[v.url if isinstance(v, Link) else v for v in row] for row in table.rows]
    frame = pd.DataFrame(rows, columns=list(table.columns))
    return frame.round(table.digits)


def show_table(table: Table, key: str) -> None:
    """``table`` as a data frame (links clickable), its caption and notes under it."""
    links = {c: st.column_config.LinkColumn(c, display_text="open")
             for j, c in enumerate(table.columns)
             if any(isinstance(row[j], Link) for row in table.rows)}  # fmt: skip
    st.dataframe(table_frame(table), hide_index=True, width="stretch", column_config=links,
                 key=key)  # fmt: skip
    words = " ".join(x for x in (table.caption, *table.notes) if x)
    if words:
        st.caption(plain(words))


def show_section(section: Section, key: str, title: bool = True) -> None:
    """One section: its title (``title``), paragraphs, tables and figures."""
    if title:
        st.subheader(plain(section.title))
    for paragraph in section.text.split("\n\n"):
        if paragraph.strip():
            st.markdown(plain(paragraph))
    for i, table in enumerate(section.tables):
        show_table(table, f"{key}_t{i}")
    for i, fig in enumerate(section.figures):
        st.plotly_chart(fig, config=CHART_CONFIG, key=f"{key}_f{i}")


def show_report(report: Report, key: str, open_sections: int = 2, skip: Sequence[str] = ()) -> None:
    """Every section of ``report`` but those titled in ``skip``: the first
    ``open_sections`` shown, each other one folded in an expander of its title."""
    for i, section in enumerate(report.sections):
        if section.title in skip:
            continue
        if i < open_sections:
            show_section(section, f"{key}_{i}")
        else:
            with st.expander(section.title):
                show_section(section, f"{key}_{i}", title=False)


def _marked(example: ErrorExample) -> str:
    """The sentence as markdown, the word in bold (every character of it shown as typed)."""
    marked = f"[{example.word}]"
    before, found, after = example.sentence.partition(marked)
    if not found:
        return plain(example.sentence)
    return f"{plain(before)}**{plain(example.word)}**{plain(after)}"


def _margin(value: Any) -> str:
    return "no runner-up" if value is None or math.isnan(value) else f"{value:.3f}"


def show_errors(examples: Sequence[ErrorExample]) -> None:
    """Each wrong answer in words: the lemma and its error count, the sentence with the word
    in bold, the gold and predicted senses with their definitions, the margin, and the link
    that opens it in the WSD page's "One sentence" tab."""
    for e in examples:
        lines = [
            f"**{plain(e.lemma)}** ({e.wrong} of {e.total} wrong) · {_marked(e)}",
            f":green[gold] {plain(e.gold)}: {plain(e.gold_definition)}",
            f":red[predicted] {plain(e.predicted or '-')}: {plain(e.predicted_definition)} "
            f"· margin {_margin(e.margin)}",
        ]
        if e.link:
            lines.append(f"[Open this sentence in the WSD page]({e.link})")
        st.markdown("  \n".join(lines))
