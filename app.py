"""The workbench's browser front end: ``streamlit run app.py``.

Sets the page, draws the sidebar (model, device, pooling, layers, model facts) and runs
``st.navigation`` over every ``webapp/pages/*.py``. A page file's first docstring line is its title;
known pages come first in a fixed order, any other page (e.g. a newly added one) after them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import streamlit as st

import webapp.state

PAGES_DIR = Path(__file__).resolve().parent / "webapp" / "pages"
ORDER = ("explore", "geometry", "senses", "wsd", "finetune")
ICONS = {
    "explore": ":material/search:",
    "geometry": ":material/scatter_plot:",
    "senses": ":material/bubble_chart:",
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
    webapp.state.preload()  # the packaged model, in the background: the first page needs it
    st.set_page_config(page_title="Embedding workbench", page_icon="🔬", layout="wide")
    pages = [
        st.Page(str(p), title=page_title(p), icon=ICONS.get(p.stem), default=i == 0)
        for i, p in enumerate(discover_pages())
    ]
    nav = st.navigation(pages)
    webapp.state.sidebar()
    nav.run()
    webapp.state.sidebar_facts()
    webapp.state.warm_up()


main()
