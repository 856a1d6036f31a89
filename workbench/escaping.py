"""Outside text shown as the text it is: one escaping function per channel it reaches a reader by.

A lemma, a sentence, a file's name, a corpus's name or a label from a saved file may hold markup
(``<img src=x onerror=...>``, ``[x](javascript:...)``, ``**b**``, ``$x$``, ``<a href=...>``).
Wherever such text enters a report or a figure it goes through the function of that channel,
which makes the reader show its characters and nothing else:

* :func:`markdown_text`: Markdown (the reports' ``.md``; CommonMark with GitHub's tables,
  strikethrough, autolinks and math): markup characters backslash-escaped, on one line;
* :func:`html_text`: HTML text and attribute values (the reports' ``.html``, the settings shown
  under an exported figure);
* :func:`plotly_text`: plotly's text (titles, legend names, axis and tick labels, hover text):
  plotly draws a subset of HTML there (``<a href>``, ``<b>``, ``<br>``), decodes entities,
  fills ``%{...}`` templates and hands ``$...$`` to MathJax;
* :func:`json_script`: JSON put inside an HTML ``<script>`` element (no ``</script>`` or
  ``<!--`` can end or hide what follows);
* :func:`latex_text`: LaTeX (tables written for a paper).

Streamlit's labels and messages (rendered as Markdown with its own extensions, ``:red[...]``,
``:material/...:``) are the fourth channel of the app, escaped by ``webapp.text.plain`` (the
library never imports streamlit; that function is as pure as these).

Example::

    markdown_text("<b>a_b</b>")        # '\\\\<b\\\\>a\\\\_b\\\\</b\\\\>'
    plotly_text("<a href=//e.com>x</a>")   # '&lt;a href=//e.com&gt;x&lt;/a&gt;'
"""

from __future__ import annotations

import html
import re

# --------------------------------------------------------------------------- Markdown

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|&#!~$@]|:(?=//|[A-Za-z][\w+-]*:))")
_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
_WWW = re.compile(r"(?i)(\bwww)\.")
#: A block marker at the start of a paragraph: a bullet (``- ``, ``+ ``), a thematic break
#: (``--``...) or an ordered item (``1. ``, ``2) ``).
_BLOCK_START = re.compile(r"^(\s*)(?:([-+])(?=\s|$|-)|(\d{1,9})([.)])(?=\s|$))")
_LEADING_SPACE = re.compile(r"^[ \t]+")


def _block_start(m: re.Match[str]) -> str:
    if m.group(2):
        return f"{m.group(1)}\\{m.group(2)}"
    return f"{m.group(1)}{m.group(3)}\\{m.group(4)}"


def markdown_text(text: object) -> str:
    """``text`` (``str()`` of anything) as Markdown that shows exactly its characters, on one
    line, in a paragraph, heading or table cell: ``\\ ` * _ [ ] < > | & # ! ~ $ @``
    backslash-escaped (no emphasis, link, image, HTML, entity, code, table cell, math, email
    autolink), and so are the ``://`` of a URL and the ``.`` of ``www.`` (no autolink), a ``:``
    that opens an emoji code (``:smile:``), a list marker or thematic break at its start; line
    breaks as spaces, leading spaces as ``&#32;`` (no code block). A sense key's colons stay
    as they are (``bank%1:17:01::``).

    >>> markdown_text("<b>a_b</b>")
    '\\\\<b\\\\>a\\\\_b\\\\</b\\\\>'
    >>> markdown_text("- 0.5 at http://e.com")
    '\\\\- 0.5 at http\\\\:\\\\/\\\\/e.com'
    """
    out = _MARKDOWN_SPECIAL.sub(r"\\\1", _BREAKS.sub(" ", str(text)))
    out = out.replace("\\://", "\\:\\/\\/")  # nor "//" after an escaped ":"
    out = _BLOCK_START.sub(_block_start, _WWW.sub(r"\1\\.", out), count=1)
    return _LEADING_SPACE.sub(lambda m: "&#32;" * len(m.group()), out, count=1)


# --------------------------------------------------------------------------- HTML


def html_text(text: object) -> str:
    """``text`` (``str()`` of anything) as HTML text or a quoted attribute value: ``& < > " '``
    as character references. ``html_text('<a href="x">') == '&lt;a href=&quot;x&quot;&gt;'``."""
    return html.escape(str(text), quote=True)


def json_script(json_text: str) -> str:
    """JSON text made safe inside an HTML ``<script>`` element, and still the same JSON:
    ``<``, ``>``, ``&`` and the JavaScript line separators written as ``\\uXXXX`` escapes (valid
    only inside JSON strings, where alone they can occur), so neither ``</script>`` nor
    ``<!--<script>`` (which keeps a script open past its end tag) can appear.

    >>> json_script('{"a": "<!--<script>"}')
    '{"a": "\\\\u003c!--\\\\u003cscript\\\\u003e"}'
    """
    return (
        json_text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


# --------------------------------------------------------------------------- plotly

_PLOTLY_SPECIAL = {
    "&": "&amp;",  # plotly decodes &amp; &lt; &gt; and numeric references, no others
    "<": "&lt;",
    ">": "&gt;",
    "$": "&#36;",  # a text between $...$ goes to MathJax
    "{": "&#123;",  # %{...} is a template where the text is part of one
    "}": "&#125;",
}
_PLOTLY_PATTERN = re.compile("[&<>${}]")


def plotly_text(text: object) -> str:
    """``text`` (``str()`` of anything) as plotly text that draws exactly its characters: no
    tag (plotly draws ``<a href>``, ``<b>``, ``<i>``, ``<span style>``, ``<br>`` and more), no
    entity, no ``%{...}`` template field, no MathJax (``$...$``); line breaks are plotly's own
    (drawn as breaks). For titles, legend names, axis and tick labels, annotations, hover text.

    >>> plotly_text("<a href=//e.com>x</a> $1")
    '&lt;a href=//e.com&gt;x&lt;/a&gt; &#36;1'
    """
    return _PLOTLY_PATTERN.sub(lambda m: _PLOTLY_SPECIAL[m.group()], str(text))


# --------------------------------------------------------------------------- LaTeX

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "[": "{[}",  # a row starting with [ would be the optional argument of the \\ before it
    "]": "{]}",
}
_LATEX_PATTERN = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIAL))


def latex_text(text: object) -> str:
    """``text`` shown as itself in LaTeX: ``\\ & % $ # _ { } ~ ^ < > [ ]`` escaped in one pass;
    ``latex_text("50% of a_b") == "50\\% of a\\_b"``."""
    return _LATEX_PATTERN.sub(lambda m: _LATEX_SPECIAL[m.group()], str(text))
