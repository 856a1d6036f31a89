"""Issue 53, class 2: outside text reaches the reader as text, through every channel.

One list of hostile strings goes through each channel (:mod:`workbench.escaping`, and the app's
``webapp.text.plain``) and through what writes it: a report's Markdown (rendered by a CommonMark
parser), its HTML, plotly figures (every string of the figure read as plotly.js reads it: its
tags, its entities, its templates, its MathJax), an exported HTML figure (every ``<script>``
closed where it should be, the settings read back). Each check compares with the same output
made from a harmless string: the markup around the text must not change, and the text must
come out whole.
"""

from __future__ import annotations

import collections
import json
import re
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from markdown_it import MarkdownIt

from webapp.text import markdown_table, plain
from workbench.escaping import html_text, json_script, latex_text, markdown_text, plotly_text
from workbench.geometry.separation import LayerSeparation, Separation
from workbench.reports.tables import Table
from workbench.reports.writers import Report, Section, to_html, to_markdown
from workbench.viz import plotting
from workbench.viz.corpus_figures import corpus_figure
from workbench.viz.corpus_map import CorpusMap, CorpusMapConfig
from workbench.viz.export import ViewSettings, figure_html, figure_json, read_settings
from workbench.viz.sense_figures import separation_figure

HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "![i](http://e.com/p.png)",
    "__emph__",
    "**b**",
    "*i* _j_",
    ":red[x] :material/warning:",
    "<!--<script>",
    "</script>",
    "<script>alert(1)</script>",
    "$x$",
    "$$x^2$$",
    "<a href=//e.com>x</a>",
    "<b onmouseover=alert(1)>b</b>",
    "|",
    "a | b",
    "`code`",
    "```",
    "two\nlines",
    "line\r\n# heading",
    "%{x} %{customdata}",
    "{{x}}",
    "&lt;b&gt; &amp; &#60;s&#62;",
    "http://e.com/bare",
    "www.e.com",
    "m@e.com",
    "- item",
    "1. item",
    "---",
    "    indented",
    "> quote",
    "~~del~~",
    "\\",
    "a\u2028b",
    "[ref]: http://e.com",
    ":smile: :thumbs_up:",
    "bank%1:17:01:: a: b",
]
HARMLESS = "harmless"


def _one_line(text: str) -> str:
    return re.sub(r"[\r\n\u2028\u2029\x0b\x0c\x85]+", " ", text)


# --------------------------------------------------------------------------- Markdown

_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _inline_text(markdown: str) -> str:
    tokens = _MD.parseInline(markdown)[0].children or []
    assert all(t.type in ("text", "text_special", "softbreak") for t in tokens), [
        t.type for t in tokens
    ]
    return "".join(t.content for t in tokens)


def _tags(page: str) -> collections.Counter[str]:
    return collections.Counter(re.findall(r"<(/?[a-zA-Z][a-zA-Z0-9]*)", page))


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_text_shows_every_character_and_no_markup(text):
    escaped = markdown_text(text)
    assert "\n" not in escaped and "://" not in escaped and "www." not in escaped
    assert not re.search(r"(?<!\\):[A-Za-z][\w+-]*:", escaped)  # no emoji code (GitHub's)
    assert _inline_text(escaped) == _one_line(text)
    # and as a paragraph: one <p>, nothing else
    rendered = _MD.render(escaped)
    assert _tags(rendered) == _tags(_MD.render(markdown_text(HARMLESS)))


def _report(text: str) -> Report:
    fig = plotting.layer_lines({text: [0.1, 0.2]}, ["0", "1"], title=text, y_title=text)
    table = Table(columns=("lemma", "sentence", "n"), rows=((text, f"a {text} b", 1),))
    return Report(
        title=text,
        config={"corpus": text},
        sections=(Section(text, text=f"{text}\n\n{text} again", tables=(table,), figures=(fig,)),),
        command=f"workbench wsd eval --data {text}",
        created="2026-01-01T00:00:00+00:00",
    )


@pytest.mark.parametrize("text", HOSTILE)
def test_a_reports_markdown_has_the_markup_of_a_harmless_one(text):
    md, harmless = to_markdown(_report(text)), to_markdown(_report(HARMLESS))
    rendered = _MD.render(md)
    assert _tags(rendered) == _tags(_MD.render(harmless))
    # the title, the section's heading, its paragraphs and the table's cells show the text
    shown = [_inline_text(line.lstrip("#").strip()) for line in md.splitlines()[:1]]
    assert shown == [_one_line(text)]
    cells = [
        line
        for line in md.splitlines()
        if line.startswith("| ")
        and not line.startswith("| lemma")
        and not re.fullmatch(r"(\| -+:? )+\|", line)
    ]
    assert len(cells) == 1  # one row: no cell opened or closed by the text
    row = re.split(r"(?<!\\)\|", cells[0])[1:-1]
    assert [_inline_text(c.strip()) for c in row] == [
        _one_line(text),
        f"a {_one_line(text)} b",
        "1",
    ]


# --------------------------------------------------------------------------- HTML


def _scripts(page: str) -> list[str]:
    """What each ``<script>`` element holds, as a browser ends it (the first ``</script``)."""
    return re.findall(r"<script\b[^>]*>(.*?)</script", page, flags=re.DOTALL | re.IGNORECASE)


def _script_safe(page: str) -> None:
    """No script's data may open a comment or a script: in a ``<script>``, ``<!--`` followed by
    ``<script`` keeps it open past its ``</script>`` (HTML's "script data double escaped")."""
    for data in _scripts(page):
        assert "<!--" not in data and not re.search(r"<script", data, flags=re.IGNORECASE)


def test_markdown_text_leaves_a_sense_keys_colons_and_a_number_as_they_are():
    assert markdown_text("bank%1:17:01::") == "bank%1:17:01::"
    assert markdown_text("-0.125") == "-0.125" and markdown_text("0.734") == "0.734"


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_is_text(text):
    assert "<" not in html_text(text) and ">" not in html_text(text) and '"' not in html_text(text)
    assert re.sub(r"&(lt|gt|amp|quot|#x27);", "", html_text(text)).count("&") == 0


@pytest.mark.parametrize("compressed", [False, True])
def test_a_reports_html_has_the_markup_of_a_harmless_one(compressed):
    """Every hostile text in one report (a page is made in about a second)."""
    pages = []
    for texts in (HOSTILE, [HARMLESS] * len(HOSTILE)):
        parts = [_report(t) for t in texts]
        sections = tuple(section for r in parts for section in r.sections)
        report = Report(texts[0], {"corpora": texts}, sections, command=texts[1], created="x")
        pages.append(to_html(report, compressed=compressed))
    outside = [re.sub(r"<script\b.*?</script>", "", p, flags=re.DOTALL) for p in pages]
    assert _tags(outside[0]) == _tags(outside[1])
    _script_safe(pages[0])
    assert len(_scripts(pages[0])) == len(_scripts(pages[1]))
    for text in HOSTILE:  # each text shown, escaped, in its section's heading
        assert f"<h2>{html_text(text)}</h2>" in pages[0]


@pytest.mark.parametrize("text", HOSTILE)
def test_json_script_is_the_same_json_and_safe_in_a_script(text):
    payload = json.dumps({"lemma": text}, ensure_ascii=False)
    safe = json_script(payload)
    assert json.loads(safe) == {"lemma": text}
    assert "<" not in safe and ">" not in safe and "&" not in safe


# --------------------------------------------------------------------------- plotly

#: plotly.js's entities (svg_text_utils.js: entityToUnicode); any other stays as written.
_PLOTLY_ENTITIES = {"mu": "μ", "amp": "&", "lt": "<", "gt": ">", "nbsp": "\xa0", "times": "×"}
_PLOTLY_ENTITIES |= {"plusmn": "±", "deg": "°"}
_OUR_TAGS = {"<br>", "<sup>", "</sup>", "<b>", "</b>", "<i>", "</i>", "<extra>", "</extra>"}
_TEMPLATE_FIELDS = re.compile(r"%\{(x|y|z|text|hovertext|customdata)(:[.0-9a-z%]+)?\}")


def _plotly_shown(value: str) -> str:
    """The characters plotly.js draws for ``value``: tags removed, its entities decoded."""
    parts = re.split(r"(<[^<>]*>)", value)
    text = "".join(p for p in parts if not re.fullmatch(r"<[^<>]*>", p))

    def decode(m: re.Match[str]) -> str:
        ref = m.group(1)
        if ref.startswith("#x"):
            return chr(int(ref[2:], 16))
        if ref.startswith("#"):
            return chr(int(ref[1:]))
        return _PLOTLY_ENTITIES.get(ref, m.group())

    return re.sub(r"&(#\d+|#x[\da-fA-F]+|[a-z]+);", decode, text)


#: Keys of a figure's JSON that plotly never draws: ids, and the template.
_NOT_DRAWN = {"legendgroup", "uid", "template"}


def _strings(obj: Any, key: str = "") -> list[tuple[str, str]]:
    """Every ``(key, string)`` of a figure's JSON that plotly draws."""
    if isinstance(obj, dict):
        return [kv for k, v in obj.items() if k not in _NOT_DRAWN for kv in _strings(v, k)]
    if isinstance(obj, list | tuple | np.ndarray):
        return [kv for v in obj for kv in _strings(v, key)]
    return [(key, obj)] if isinstance(obj, str) else []


def _figures(text: str) -> dict[str, go.Figure]:
    coords = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]], np.float32)
    labels = [text, text, "other"]
    hover = [plotting.hover_text(["a", text, "b"], 1, gloss=text, label=text)] * 3
    sep = Separation("0", "none", 0.1, 0.5, 0.3, 3, 0, ())
    table = pd.DataFrame(
        {"word": [text, "w"], "lemma": [text, "l"], "pos": ["NOUN", "VERB"], "sense": [text, ""]}
    )
    cmap = CorpusMap(np.zeros((2, 2), np.float32), table, [(text,), ("w",)], CorpusMapConfig())
    return {
        "sense_scatter": plotting.sense_scatter(
            coords, labels, hover, title=text, names={text: text}, subtitle=text
        ),
        "small_multiples": plotting.small_multiples(
            coords[None], labels, hover, [text], names={"other": text}
        ),
        "candidate_bars": plotting.candidate_bars(
            [text, "b%2"],
            [0.4, 0.2],
            [text, text],
            chosen=text,
            title=text,
            x_title=text,
            set_aside=["b%2"],
            set_aside_reason=text,
        ),  # fmt: skip
        "layer_lines": plotting.layer_lines({text: [1.0]}, [text], title=text, y_title=text),
        "similarity_heatmaps": plotting.similarity_heatmaps(
            [(text, np.ones((1, 1)))], [text], [text]
        ),
        "ring_points": plotting.ring_points(go.Figure(), coords, [0], text),
        "separation_figure": separation_figure(
            {text: LayerSeparation(("0",), ("none",), (sep,))}, title=text
        ),
        "corpus_figure": corpus_figure(cmap, colour="sense", found=[0], title=text),
    }


@pytest.mark.parametrize("text", HOSTILE)
def test_plotly_text_draws_exactly_the_text(text):
    escaped = plotly_text(text)
    assert not re.search(r"<[^<>]*>", escaped) and "$" not in escaped and "%{" not in escaped
    assert _plotly_shown(escaped) == text


@pytest.mark.parametrize("text", HOSTILE)
def test_every_figure_draws_outside_text_as_text(text):
    for name, fig in _figures(text).items():
        found = False
        for key, value in _strings(fig.to_plotly_json()):
            tags = set(re.findall(r"<[^<>]*>", value))
            assert tags <= _OUR_TAGS, (name, key, value)
            assert "$" not in value, (name, key, value)  # no MathJax
            if key in ("hovertemplate", "texttemplate"):
                assert "%{" not in _TEMPLATE_FIELDS.sub("", value), (name, key, value)
            else:
                assert "%{" not in value, (name, key, value)
            found = found or text in _plotly_shown(value)
        assert found, f"{name} never shows {text!r}"


@pytest.mark.parametrize("text", HOSTILE)
def test_an_exported_html_figure_keeps_its_settings_block(text):
    fig = plotting.layer_lines({text: [1.0]}, ["0"], title=text)
    settings = ViewSettings("senses", text, "fp", "mean", "0", data={"lemma": text})
    page = figure_html(fig, settings)
    _script_safe(page)
    # the settings block follows every script, whole, and reads back
    last_script_end = page.rfind("</script>")
    assert page.index("<details><summary>Settings (workbench)</summary>") > last_script_end
    assert read_settings(page)["data"] == {"lemma": text}
    assert read_settings(figure_json(fig, settings))["model"] == text


# --------------------------------------------------------------------------- Streamlit, LaTeX


@pytest.mark.parametrize("text", HOSTILE)
def test_streamlit_labels_show_every_character(text):
    label = plain(text)  # pills, captions, warnings: Markdown with Streamlit's extensions
    assert "://" not in label and "www." not in label
    assert not re.search(r"(?<!\\):", label) and not re.search(r"(?<!\\)\$", label)
    assert _inline_text(label) == _one_line(text)


@pytest.mark.parametrize("text", HOSTILE + ["a | b", "|", "x\\|y"])
def test_a_streamlit_markdown_table_shows_every_cell_as_text(text):
    """Explore's neighbour table (``webapp.text.markdown_table``): the table a harmless one
    makes (one header row, two body rows, three columns), each cell exactly its text."""
    rows = [
        {"word": text, "n": 1, "context": f"a {text} b"},
        {"word": "x", "n": 2, "context": text},
    ]
    table = markdown_table(rows, right={"n"})
    harmless = markdown_table([{**r, "word": HARMLESS, "context": HARMLESS} for r in rows])
    assert _tags(_MD.render(table)) == _tags(_MD.render(harmless))
    cells = [t.content for t in _MD.parse(table) if t.type == "inline"]
    assert len(cells) == 9, cells
    shown = [_inline_text(cell) for cell in cells]
    one = _one_line(text).strip()  # a cell's outer spaces are not shown
    assert shown == ["word", "n", "context", one, "1", f"a {_one_line(text)} b", "x", "2", one]
    assert 'style="text-align:right"' in _MD.render(table)


@pytest.mark.parametrize("text", HOSTILE)
def test_latex_text_leaves_no_special_character_bare(text):
    bare = re.sub(r"\\(textbackslash|textasciitilde|textasciicircum|textless|textgreater)\{\}", "",
                  latex_text(text))  # fmt: skip
    bare = re.sub(r"\\[&%$#_{}]|\{\[\}|\{\]\}", "", bare)
    assert not re.search(r"[\\&%$#_{}~^<>\[\]]", bare), bare
