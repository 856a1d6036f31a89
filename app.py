"""The workbench's browser front end: ``streamlit run app.py``.

Two roles in one file. Imported by Streamlit's server (``streamlit run`` finds the ``st.App``
below), it declares the app with a lifespan that starts loading the model, WordNet and the
default views' data in the background before the first visitor comes
(:mod:`webapp.startup`). Run as each visitor's script (``__main__``), it sets the page, draws
the sidebar (model, device, pooling, layers, model facts) and runs ``st.navigation`` over every
``webapp/pages/*.py``. A page file's first docstring line is its title; known pages come first
in a fixed order, any other page (e.g. a newly added one) after them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import streamlit as st

import webapp.startup
import webapp.state

PAGES_DIR = Path(__file__).resolve().parent / "webapp" / "pages"
ORDER = ("explore", "geometry", "senses", "corpus_map", "wsd", "finetune")
ICONS = {
    "explore": ":material/search:",
    "geometry": ":material/scatter_plot:",
    "senses": ":material/bubble_chart:",
    "corpus_map": ":material/map:",
    "wsd": ":material/checklist:",
    "finetune": ":material/model_training:",
}


def page_title(path: Path) -> str:
    """The first line of the page file's docstring, else its name."""
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    except (OSError, SyntaxError, UnicodeDecodeError):
        doc = None
    return doc.strip().splitlines()[0].rstrip(".") if doc else path.stem.replace("_", " ").title()


def discover_pages(directory: Path = PAGES_DIR) -> list[Path]:
    """Every page file, known ones in :data:`ORDER` first, then the rest alphabetically."""
    files = [p for p in directory.glob("*.py") if not p.name.startswith("_")]
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(files, key=lambda p: (rank.get(p.stem, len(ORDER)), p.stem))


def main() -> None:
    """One visitor's script run: the page, the sidebar, the chosen page, the model's facts."""
    webapp.startup.start()  # started by the server already; here for a server without it
    st.set_page_config(page_title="Embedding workbench", page_icon=":material/biotech:",
                       layout="wide")  # fmt: skip
    pages = [
        st.Page(str(p), title=page_title(p), icon=ICONS.get(p.stem), default=i == 0)
        for i, p in enumerate(discover_pages())
    ]
    nav = st.navigation(pages)
    webapp.startup.show_failures()
    webapp.state.sidebar()
    nav.run()
    webapp.state.sidebar_facts()


if __name__ == "__main__":
    main()
else:
    app = st.App("app.py", lifespan=webapp.startup.lifespan, routes=webapp.startup.routes())
