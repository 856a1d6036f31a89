"""The pages' shared frame, made for a projector's first screen (1280x800): a compact page (less
padding around the main area, a smaller title) and each page's header row (the title, its
introduction in the title's tooltip, and the place of the "copy link" control beside it), so
that the page's main figure starts high and fills at least half of the first screen
(``tests/webapp/test_first_screen.py`` measures it).

Example::

    share = header("Sense clusters", "Each point is one occurrence of the word ...")
    ...controls, the figure...
    webapp.urlstate.link_control(PARAMS, area=share)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import streamlit as st

import webapp.startup

#: Less padding than Streamlit's wide layout (6rem above, 5rem at each side), a smaller title.
COMPACT_CSS = """<style>
[data-testid="stMainBlockContainer"] {
  padding-top: 3.25rem; padding-left: 1.5rem; padding-right: 1.5rem; padding-bottom: 4rem;
}
[data-testid="stMain"] h1 { font-size: 1.9rem; padding: 0.25rem 0 0 0; }
</style>"""

#: The height of a page's main figure, in pixels: at 1280x800 and at 1920x1080 it fills at least
#: half of the main area's first screen when it starts under two rows of controls.
FIGURE_HEIGHT = 620


def compact_page() -> None:
    """Apply :data:`COMPACT_CSS` to this run's page (a style element only: it takes no room)."""
    st.html(COMPACT_CSS)


def header(title: str, intro: str) -> Any:
    """The page's title with ``intro`` in its tooltip, and beside it an empty container where
    the page draws its "copy link" control once every widget is drawn (returned)."""
    left, right = st.columns([5, 1], vertical_alignment="bottom")
    left.title(title, help=intro, anchor=False)
    return right.container(horizontal_alignment="right")


def fragment(func: Callable[[], None]) -> Callable[[], None]:
    """``func`` as a fragment of its page (``st.fragment``): a widget drawn inside it reruns
    ``func`` alone, not the page's whole script (nor the sidebar), and the browser redraws only
    what ``func`` draws; what it writes into a container made outside it (the header's "copy
    link" control) is redrawn in place. A fragment's run counts as a visitor's run for the
    server's preload (:func:`webapp.startup.visitor_run`). A page's full run calls it as usual;
    every value the fragment reads from the page comes from the page's last full run.

    Example::

        @webapp.layout.fragment
        def view() -> None:
            correction = st.selectbox("Correction", ...)   # reruns view() alone
            st.plotly_chart(figure_of(correction))
            webapp.urlstate.link_control(PARAMS, area=share)   # the URL kept in step

        view()
    """

    @functools.wraps(func)
    def run() -> None:
        with webapp.startup.visitor_run():
            func()

    return st.fragment(run)
