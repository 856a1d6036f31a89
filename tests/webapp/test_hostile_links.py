"""Every page opened by a hostile link: each setting the page keeps in its URL (and ``upload=``)
set to markdown that would put a link or a remote image into the page. Nothing of it may reach
a markdown element unescaped (``webapp.text.plain``), and no page may fail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = ("explore", "geometry", "senses", "wsd", "corpus_map")
LINK = "[LOG IN AGAIN](http://example.invalid)"
IMAGE = "![](http://example.invalid/p.png)"
#: Text elements Streamlit renders as markdown.
MARKDOWN = ("markdown", "caption", "warning", "info", "error", "success", "title", "subheader")

pytestmark = pytest.mark.slow


def url_names(page: str) -> set[str]:
    """The URL names of the settings a page (its file, the panes and the sidebar) keeps."""
    files = [REPO / "webapp" / "pages" / f"{page}.py", REPO / "webapp" / "panes.py",
             REPO / "webapp" / "senses_panes.py", REPO / "webapp" / "explore_panes.py",
             REPO / "webapp" / "sidebar.py"]  # fmt: skip
    text = "\n".join(f.read_text(encoding="utf-8") for f in files)
    return set(re.findall(r'Param\(\s*"[a-z_]+",\s*"([a-z_]+)"', text))


def shown_texts(at) -> list[str]:
    texts = []
    for kind in MARKDOWN:
        texts += [str(e.value) for e in at.get(kind)]
        texts += [str(e.value) for e in at.sidebar.get(kind)]
    return texts


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("payload", [LINK, IMAGE])
def test_a_hostile_link_writes_nothing_into_the_page(page, payload):
    from streamlit.testing.v1 import AppTest

    names = url_names(page)
    assert names, page
    query = {name: payload for name in names}
    if "source" in names:
        query.update(source="upload", upload=payload)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    at.query_params.update(query)
    at.switch_page(f"webapp/pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    for text in shown_texts(at):
        assert payload not in text and "](http" not in text and "![" not in text, text
