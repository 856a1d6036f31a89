"""Outside text shown in a page as the text it is, never as markdown.

Streamlit renders the strings of ``st.markdown``, ``st.warning``, ``st.info``, ``st.error``,
``st.caption``, ``st.subheader`` and the like as markdown (links, images, HTML-like emphasis,
``:material/...:`` icons, colours, LaTeX). Whatever came from a URL, an upload, a model's files,
a cache or an error message that may quote them goes through :func:`plain` before it is put
into such a string: every ASCII punctuation character is backslash-escaped (CommonMark shows an
escaped character as itself, so ``[text](url)``, ``![](img)``, ``<b>``, ``**``, ``$x$`` and a
bare ``http://...`` are shown as typed) and line breaks become spaces (no heading, list or
table can start).

Example::

    st.warning(f"The link's value {plain(value)} does not apply here.")
    plain("[LOG IN](http://x)")    # '\\[LOG IN\\]\\(http\\:\\/\\/x\\)'
"""

from __future__ import annotations

import re
import string
from collections.abc import Collection, Mapping, Sequence

_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")


def plain(text: object) -> str:
    """``text`` (``str()`` of anything) as markdown that shows exactly its characters, on one
    line: every ASCII punctuation character escaped with a backslash, line breaks as spaces."""
    return _PUNCTUATION.sub(r"\\\1", _BREAKS.sub(" ", str(text)))


def short(text: str, width: int = 80) -> str:
    """``text`` cut to ``width`` characters (a visitor's long input is never echoed whole)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def markdown_table(rows: Sequence[Mapping[str, object]], right: Collection[str] = ()) -> str:
    """``rows`` (one mapping per row, the first row's keys as the columns) as a markdown table
    whose cells show exactly their characters (:func:`plain`; a ``|`` in a cell is escaped
    too); the columns named in ``right`` are right-aligned. No pandas or pyarrow is imported
    (``st.table`` imports both), so a page's first table costs no import.

    Example::

        st.markdown(markdown_table([{"word": "bank", "cosine": "0.912"}], right={"cosine"}))
    """
    if not rows:
        return ""
    columns = list(rows[0])
    head = "| " + " | ".join(plain(c) for c in columns) + " |"
    rule = "| " + " | ".join("---:" if c in right else "---" for c in columns) + " |"
    body = ["| " + " | ".join(plain(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join([head, rule, *body])
