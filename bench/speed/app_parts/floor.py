"""The floor of the app's browser measurements: bare Streamlit apps (no model, no workbench) run
the same way as the workbench's app, to tell what Streamlit's server, its front end and plotly.js
cost on this machine from what the workbench adds.

Example::

    folder = bare_app(BARE_APP)        # then AppServer(folder), and remove the folder after
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bench.speed.app_parts import REPO

#: The floor of part 8: Streamlit alone drawing one plotly heatmap, no model, no workbench.
BARE_APP = """import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="bare", layout="wide")
st.title("A heatmap")
st.plotly_chart(go.Figure(go.Heatmap(z=np.arange(42).reshape(6, 7))))
"""


#: The widget of each kind of part 9's floors, its value ``alpha`` or ``beta``: "radio" is one
#: click on an option (a radio, the pages' pills and segmented controls), "selectbox" two (open
#: the list, pick the option), "text" a text box filled and Enter pressed, "toggle" one click on
#: a toggle.
CHANGE_WIDGETS = {
    "radio": 'st.radio("Word", ["alpha", "beta"], horizontal=True)',
    "selectbox": 'st.selectbox("Word", ["alpha", "beta"])',
    "text": 'st.text_input("Word", "alpha")',
    "toggle": '"beta" if st.toggle("Word") else "alpha"',
}

_CHANGE_APP = """import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="bare", layout="wide")
word = {widget}
st.title(f"A heatmap of {{word}}")
z = np.arange(42).reshape(6, 7) * (1 if word == "alpha" else -1)
st.plotly_chart(go.Figure(go.Heatmap(z=z)))
"""


def bare_change_app(kind: str) -> str:
    """The floor of part 9 for one kind of widget (:data:`CHANGE_WIDGETS`): Streamlit alone
    redrawing one plotly heatmap, titled "A heatmap of alpha" or "... of beta", when that
    widget changes; no model, no workbench."""
    return _CHANGE_APP.format(widget=CHANGE_WIDGETS[kind])


def bare_app(text: str) -> Path:
    """A temporary folder holding ``text`` as ``app.py`` and the project's Streamlit config."""
    bare = Path(tempfile.mkdtemp(prefix="wb-bench-bare-"))
    (bare / "app.py").write_text(text, encoding="utf-8")
    shutil.copytree(REPO / ".streamlit", bare / ".streamlit")
    return bare
