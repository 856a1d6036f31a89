"""Every page's settings in the URL (``st.query_params``), so that a link reopens the same view.

A page lists its settings as :class:`Param` objects (widget key, name in the URL, kind, allowed
values). :func:`restore`, called before the widgets are drawn, gives every widget that has no
value yet in this session the link's value (a value that is not allowed is ignored and
reported); :func:`publish`, called after them, writes the current values into the URL;
:func:`link_control` draws the "copy link" control, which says what the link reopens and what it
cannot carry (an uploaded file: its name goes into the link, and the page asks for the file
again).

Example::

    PARAMS = (Param("senses_lemma", "word"), Param("senses_limit", "limit", "int"))
    urlstate.restore(PARAMS)        # before the widgets
    ...widgets with those keys...
    urlstate.publish(PARAMS)        # after them
    urlstate.link_control(PARAMS)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn
from urllib.parse import urlencode

import streamlit as st

from webapp.text import plain
from workbench.wsd.reporting.links import APP_URL

Kind = Literal["str", "int", "float", "bool", "optional"]
#: The URL's spelling of ``None`` for an ``optional`` setting (e.g. "any part of speech").
NONE = "any"
#: Longest text value kept in a link (a typed text longer than this is left out, and said so).
MAX_TEXT = 1500


@dataclass(frozen=True)
class Param:
    """One setting of a page kept in the URL.

    Attributes:
        key: the widget's key in ``st.session_state``.
        name: its name in the URL (short, stable: links depend on it).
        kind: how the value is written: ``str``, ``int``, ``float``, ``bool`` (``1``/``0``) or
            ``optional`` (a string or ``None``, written :data:`NONE`).
        choices: the allowed values (after decoding: a sequence, a :class:`Between` range), or
            a callable giving them; None = any.
        refusal: the message shown when a link's value is not allowed (default: the setting
            and its value are listed as not applying here).
        formerly: its name in older links, read when a link does not have :attr:`name`.
        upgrade: an older link's text as today's (applied to every value a link carries, under
            :attr:`name` or :attr:`formerly`; today's text is left as it is).
    """

    key: str
    name: str
    kind: Kind = "str"
    choices: Container[Any] | Callable[[], Container[Any]] | None = None
    refusal: str = ""
    formerly: str = ""
    upgrade: Callable[[str], str] | None = None

    def link_text(self, query: Mapping[str, str]) -> str | None:
        """This setting's text in a link's ``query`` (under an older name, upgraded, if need
        be); None when the link does not carry it."""
        if self.name in query:
            text = query[self.name]
        elif self.formerly and self.formerly in query:
            text = query[self.formerly]
        else:
            return None
        return self.upgrade(text) if self.upgrade is not None else text

    def allowed(self) -> Container[Any] | None:
        return self.choices() if callable(self.choices) else self.choices


@dataclass(frozen=True)
class Between:
    """The numbers from ``low`` to ``high`` (both included), as a :class:`Param`'s choices."""

    low: float
    high: float

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int | float) and self.low <= value <= self.high


def encode(value: Any, kind: Kind) -> str | None:
    """A setting's value as URL text (None: not written)."""
    if kind == "optional" and value is None:
        return NONE
    if value is None:
        return None
    if kind == "bool":
        return "1" if value else "0"
    if kind == "float":
        return f"{float(value):g}"
    text = str(value)
    return text if len(text) <= MAX_TEXT else None


def decode(text: str, kind: Kind) -> Any:
    """URL text as a value of ``kind``; raises ValueError when it is not one."""
    if kind == "int":
        return int(text)
    if kind == "float":
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(text)
        return value
    if kind == "bool":
        if text not in ("0", "1"):
            raise ValueError(text)
        return text == "1"
    if kind == "optional":
        return None if text == NONE else text
    return text


#: Session-state key of the link values already restored in this session (a link's settings
#: are taken, and judged, once: later reruns after the visitor's own edits say nothing).
_RESTORED = "_urlstate_restored"
#: Session-state key of the values this session's pages wrote into the URL themselves.
_PUBLISHED = "_urlstate_published"
#: Longest value echoed in a message about a link.
ECHO = 60


def _echo(name: str, text: str) -> str:
    shown = text if len(text) <= ECHO else text[: ECHO - 1] + "…"
    return plain(f"{name}={shown}")


def restore(params: Iterable[Param]) -> list[str]:
    """Give every widget of ``params`` that has no value yet in this session the link's value.

    A link's value is judged once per session (the first time its page runs): a value that is
    not allowed is ignored and said so once, in one note (or the setting's own
    :attr:`Param.refusal`); the visitor's later edits never bring the note back. Returns the
    settings ignored in this call.
    """
    seen = st.session_state.setdefault(_RESTORED, set())
    own = st.session_state.get(_PUBLISHED, {})
    ignored: list[str] = []
    plain: list[str] = []
    refusals: list[str] = []
    query = st.query_params.to_dict()
    for p in params:
        text = p.link_text(query)
        if p.key in st.session_state or text is None:
            continue
        if (p.name, text) in seen:
            continue
        seen.add((p.name, text))
        try:
            value = decode(text, p.kind)
            allowed = p.allowed()
            if allowed is not None and value not in allowed:
                raise ValueError(text)
        except ValueError:
            if own.get(p.name) == text:
                continue  # the page's own value, for a widget that has other choices now
            ignored.append(_echo(p.name, text))
            (refusals if p.refusal else plain).append(p.refusal or ignored[-1])
            continue
        st.session_state[p.key] = value
    if plain:
        st.warning(
            "This link's settings " + ", ".join(plain) + " do not apply here (not values this "
            "page offers); the defaults are used instead.",
            icon=":material/link_off:",
        )
    for message in dict.fromkeys(refusals):
        st.warning(message, icon=":material/link_off:")
    return ignored


def current(params: Iterable[Param], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The URL values of the widgets of ``params`` that exist now, plus ``extra``."""
    out: dict[str, str] = {}
    for p in params:
        if p.key in st.session_state:
            text = encode(st.session_state[p.key], p.kind)
            if text is not None:
                out[p.name] = text
    out.update(extra or {})
    return out


def publish(params: Iterable[Param], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Write the current settings (and ``extra`` values) into the URL; returns them."""
    values = current(params, extra)
    st.session_state[_PUBLISHED] = values
    if st.query_params.to_dict() != values:
        st.query_params.from_dict(values)
    return values


def ask_for_upload(params: Iterable[Param], what: str, asks: str) -> NoReturn:
    """No file is uploaded yet: ask for one with ``asks``, or, opened from a link whose
    ``what`` (a view, a map) used an upload, name that file (a link cannot carry it); keep the
    link's settings in the URL and stop the page."""
    wanted = st.query_params.get("upload")
    st.info(
        f"This link's {what} used the uploaded file “{plain(wanted)}”, which a link cannot carry: "
        "upload it again."
        if wanted
        else asks
    )
    publish(params, {"upload": wanted} if wanted else None)
    st.stop()


def app_url(page: str) -> str:
    """The app's own address as the browser sees it: this page's URL less its path ``page``
    (e.g. ``http://localhost:8501`` on ``/wsd``); :data:`workbench.wsd.reporting.links.APP_URL`
    outside a browser."""
    base = (st.context.url or "").split("?", 1)[0].rstrip("/")
    if base.endswith(f"/{page}"):
        base = base[: -len(page) - 1]
    return base if base.startswith(("http://", "https://")) else APP_URL


def link(values: Mapping[str, str]) -> str:
    """The page's URL with ``values`` as its query (the path alone outside a browser)."""
    base = st.context.url or ""
    return f"{base}?{urlencode(values)}" if values else base


def link_control(
    params: Sequence[Param],
    extra: Mapping[str, str] | None = None,
    what: str = "this view",
    missing: Sequence[str] = (),
    area: Any = None,
) -> str:
    """A "copy link" popover: the link to this view and what it does and does not carry.

    Args:
        params: the page's settings.
        extra: more URL values (e.g. an upload's file name).
        what: what the link reopens, in words ("this word at these layers ...").
        missing: what the link cannot carry (e.g. "the uploaded file banks.txt").
        area: where to draw (default: the page).

    Returns:
        The link.
    """
    url = link(publish(params, extra))
    where = area if area is not None else st
    with where.popover("Copy link", icon=":material/link:",
                       help="A link that reopens this view with its settings"):  # fmt: skip
        st.code(url, language=None, wrap_lines=True)
        st.caption(
            f"Copy it with the button at the right of the box: it reopens {what}, with every "
            "setting of the page and the sidebar (model, layers, correction, projection, seed)."
        )
        for thing in missing:
            st.warning(
                f"The link cannot carry {plain(thing)}: whoever opens it is asked for it again."
            )
    return url
