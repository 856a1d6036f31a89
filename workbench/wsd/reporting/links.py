"""Links from a report into the app: one word of one sentence opened on the WSD page.

The app's WSD page reads its settings from the URL (``webapp/pages/wsd.py``: ``sentence``,
``word``, ``occurrence``, ``pos``, ``system`` and the sidebar's ``model``); :func:`wsd_link`
writes that URL for a server at ``base_url`` (default :data:`APP_URL`, where ``streamlit run
app.py`` listens), :func:`error_link` for one of a report's wrong answers
(:class:`~workbench.wsd.reporting.error_examples.ErrorExample`). Opening it shows the sentence
disambiguated by the same system.

Example::

    wsd_link("He sat on the bank .", "bank", pos="NOUN", system="biencoder")
    # 'http://localhost:8501/wsd?sentence=He+sat+on+the+bank+.&word=bank&pos=NOUN&system=biencoder'
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from workbench.errors import InputError

if TYPE_CHECKING:  # the app's URL code reads APP_URL here without the WSD scoring stack
    from workbench.wsd.reporting.error_examples import ErrorExample

#: Where ``streamlit run app.py`` serves the app by default.
APP_URL = "http://localhost:8501"
#: The WSD page's path under the app's address (its file's name, ``webapp/pages/wsd.py``).
WSD_PAGE = "wsd"
#: Longest sentence a link carries (the page keeps at most this much of a link's text).
MAX_SENTENCE = 1500


def check_app_url(base_url: str) -> str:
    """``base_url`` without a trailing ``/``, checked: an ``http://`` or ``https://`` address.

    Raises:
        InputError: anything else (a link must never carry another scheme).
    """
    url = base_url.strip().rstrip("/")
    if not re.match(r"https?://[^\s/\"'<>?#()\[\]]+(/[^\s\"'<>?#()\[\]]*)?$", url):
        raise InputError(
            f"the app's address must be http://HOST[:PORT][/PATH] or https://..., not {base_url!r}"
        )
    return url


def wsd_link(
    sentence: str,
    word: str,
    *,
    pos: str | None = None,
    occurrence: int = 1,
    system: str | None = None,
    model: str | None = None,
    base_url: str = APP_URL,
) -> str:
    """The app's WSD page showing ``word`` in ``sentence`` disambiguated.

    Args:
        sentence: the sentence as text (longer than :data:`MAX_SENTENCE`: cut there).
        word: the word (or phrase) to disambiguate; occurrence: which of its occurrences
            (1: the first; written only when not 1).
        pos: NOUN, VERB, ADJ or ADV (None: the page's "any").
        system: the system's name (``biencoder``, ``best``, ...; None: the page's default).
        model: the sidebar's model (None: the packaged one).
        base_url: the app's address (:func:`check_app_url`).
    """
    values = {"sentence": sentence[:MAX_SENTENCE], "word": word}
    if occurrence != 1:
        values["occurrence"] = str(int(occurrence))
    if pos:
        values["pos"] = pos
    if system:
        values["system"] = system
    if model:
        values["model"] = model
    return f"{check_app_url(base_url)}/{WSD_PAGE}?{urlencode(values)}"


def error_link(
    example: ErrorExample,
    *,
    system: str | None = None,
    model: str | None = None,
    base_url: str = APP_URL,
) -> str:
    """:func:`wsd_link` of a wrong answer: its sentence, word, occurrence and POS."""
    return wsd_link(
        example.text, example.word, pos=example.pos or None, occurrence=example.occurrence,
        system=system, model=model, base_url=base_url,
    )  # fmt: skip
