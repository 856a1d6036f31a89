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


#: The floor of part 9: Streamlit alone redrawing one plotly heatmap when a radio changes.
BARE_CHANGE_APP = """import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="bare", layout="wide")
word = st.radio("Word", ["alpha", "beta"], horizontal=True)
st.title(f"A heatmap of {word}")
z = np.arange(42).reshape(6, 7) * (1 if word == "alpha" else -1)
st.plotly_chart(go.Figure(go.Heatmap(z=z)))
"""


def bare_app(text: str) -> Path:
    """A temporary folder holding ``text`` as ``app.py`` and the project's Streamlit config."""
    bare = Path(tempfile.mkdtemp(prefix="wb-bench-bare-"))
    (bare / "app.py").write_text(text, encoding="utf-8")
    shutil.copytree(REPO / ".streamlit", bare / ".streamlit")
    return bare
