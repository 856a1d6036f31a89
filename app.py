"""The workbench's browser front end: ``streamlit run app.py``.

Two roles in one file. Imported by Streamlit's server (``streamlit run`` finds the ``st.App``
below), it declares the app with a lifespan that starts loading the model, WordNet and the
default views' data in the background before the first visitor comes (:mod:`webapp.startup`;
:func:`preload_plan` says what). Run as each visitor's script (``__main__``), it sets the page,
draws the sidebar (model, device, pooling, layers, model facts) and runs ``st.navigation`` over the
pages :func:`pages` lists: each page's file in ``webapp/pages/``, its title and icon, in the
navigation's order, Explore the default. A new page is one more ``st.Page`` line there.
"""

from __future__ import annotations

import streamlit as st

import webapp.layout
import webapp.loaded_model
import webapp.sidebar
import webapp.startup


def pages() -> list[st.Page]:
    """The app's pages in the navigation's order (paths relative to this file)."""
    return [
        st.Page("webapp/pages/explore.py", title="Explore", icon=":material/search:", default=True),
        st.Page("webapp/pages/geometry.py", title="Geometry", icon=":material/scatter_plot:"),
        st.Page("webapp/pages/senses.py", title="Senses", icon=":material/bubble_chart:"),
        st.Page("webapp/pages/corpus_map.py", title="Corpus map", icon=":material/map:"),
        st.Page("webapp/pages/wsd.py", title="WSD", icon=":material/checklist:"),
        st.Page("webapp/pages/finetune.py", title="Fine-tune", icon=":material/model_training:"),
    ]


def preload_plan() -> tuple[webapp.startup.Steps, int | None]:
    """The preload's steps and the first of them that stands aside for visitors
    (:mod:`webapp.preload`), imported when the preload's thread calls this: the library and
    torch are imported there, after the server answers."""
    from webapp.preload import FIRST_VIEW_STEPS, STEPS

    return STEPS, FIRST_VIEW_STEPS


def main() -> None:
    """One visitor's script run (marked as one, :func:`webapp.startup.visitor_run`)."""
    webapp.startup.start(preload_plan)  # started by the server already; here without it
    with webapp.startup.visitor_run():  # the preload's later steps wait meanwhile
        run_page()


def run_page() -> None:
    """The page's settings, the sidebar, the chosen page and the model's facts."""
    st.set_page_config(page_title="Embedding workbench", page_icon=":material/biotech:",
                       layout="wide")  # fmt: skip
    webapp.layout.compact_page()  # the main figure on a projector's first screen
    nav = st.navigation(pages())
    webapp.startup.show_failures()
    settings = webapp.sidebar.sidebar()
    if webapp.loaded_model.is_loaded(settings):  # a page may stop early: the facts come first
        webapp.sidebar.sidebar_facts()
        nav.run()
    else:  # the page draws at once; the facts come once it has loaded the model
        nav.run()
        webapp.sidebar.sidebar_facts()


if __name__ == "__main__":
    main()
else:
    app = st.App(
        "app.py", lifespan=webapp.startup.lifespan(preload_plan), routes=webapp.startup.routes()
    )
