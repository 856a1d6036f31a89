"""A plotly chart the browser keeps between reruns, for the maps whose every change redraws
hundreds of points.

``st.plotly_chart`` makes its element's identity from the figure, so a changed figure is a new
element: the browser removes the old chart and plotly draws the new one from nothing, each
point a new SVG node. :func:`kept_chart` shows the figure in a Streamlit component (v1) with a
fixed key instead: the same frame stays in the page and each new figure goes to
``Plotly.react``, which changes only what differs (the points' colours, say). The layout's
shapes and title travel apart from the rest (:data:`OVERLAY`): when only they changed (a corpus
map's search rings and their count) the frame gives them to ``Plotly.relayout``, which draws
the shapes and the title and leaves the traces' points as they are. The frame is
``webapp/frontend/kept_chart.html`` beside the plotly package's own ``plotly.min.js``, both
copied once into the cache (:func:`component_folder`), complete or absent; where that folder
cannot be made, the chart is an ``st.plotly_chart`` as before.

Example::

    event = kept_chart(fig, "map_chart", select=True)   # None, or {"selection": {"points": ...}}
    rows = selected_rows(event)                         # workbench.viz.plotting
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go
import streamlit as st
from plotly.io.json import to_json_plotly

from workbench.encoding.models import default_cache_dir
from workbench.fileio import sha256_bytes

#: The frame's page, in the package.
PAGE = Path(__file__).resolve().parent / "frontend" / "kept_chart.html"
#: plotly's default height, used when the figure sets none.
DEFAULT_HEIGHT = 450
#: The layout's parts sent apart from the figure: a change to them alone is drawn without
#: redrawing the traces.
OVERLAY = ("shapes", "title")


def _plotly_js() -> bytes:
    """The plotly package's ``plotly.min.js`` (the version the figures are made for)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs().encode("utf-8")


def component_folder(cache: Path | None = None) -> Path | None:
    """The frame's folder: ``kept_chart.html`` as ``index.html`` and ``plotly.min.js``, in
    ``<cache>/webapp/kept-chart-<digest>`` (the digest of the page and plotly's version), made
    on first use in a temporary folder renamed into place; None where it cannot be made (a
    read-only cache)."""
    page = PAGE.read_bytes()
    digest = sha256_bytes(page + plotly.__version__.encode())[:16]
    folder = (cache or default_cache_dir()) / "webapp" / f"kept-chart-{digest}"
    if (folder / "index.html").is_file() and (folder / "plotly.min.js").is_file():
        return folder
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".kept-chart-", dir=folder.parent))
        try:
            (tmp / "plotly.min.js").write_bytes(_plotly_js())
            (tmp / "index.html").write_bytes(page)
            tmp.rename(folder)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not (folder / "index.html").is_file():  # not another process's folder either
                raise
    except OSError:
        return None
    return folder


def _component() -> Callable[..., Any] | None:
    """The declared component, or None without its folder (made again if the cache was
    cleared while the server runs: its name, and so its path, stays the same)."""
    folder = component_folder()
    return None if folder is None else _declared(folder)


@functools.cache
def _declared(folder: Path) -> Callable[..., Any]:
    """The component of ``folder``, declared once per server."""
    import streamlit.components.v1 as components

    return components.declare_component("kept_chart", path=folder)


def figure_args(fig: go.Figure) -> tuple[str, str, str, str]:
    """The figure as JSON text without the layout's :data:`OVERLAY` parts, those parts as JSON
    text of their own (``{"shapes": [...], "title": {...}}``, an absent part ``null``), and two
    digests: ``base``, of the first alone (the frame redraws the traces only when it changes),
    and ``revision``, of both (the figure shown: a selection is tagged with it). JSON text
    crosses into the frame as one copy, where a nested object is cloned node by node; the frame
    parses it only when a digest is new.

    Example: a figure whose search rings (its shapes) changed keeps ``base`` and gets a new
    ``revision``.
    """
    whole = fig.to_plotly_json()
    layout = whole["layout"]
    overlay = to_json_plotly({part: layout.get(part) for part in OVERLAY})
    rest = {key: value for key, value in layout.items() if key not in OVERLAY}
    text = to_json_plotly({"data": whole["data"], "layout": rest})
    base = sha256_bytes(text)[:16]
    return text, overlay, base, sha256_bytes(base + overlay)[:16]


def kept_chart(
    fig: go.Figure,
    key: str,
    *,
    config: dict | None = None,
    select: bool = False,
    area: Any = None,
) -> dict | None:
    """Show ``fig`` (in ``area``, default the page) in a chart the browser keeps between
    reruns under ``key``; with ``select``, clicking a point, a box or a lasso reruns the page
    and the selection comes back as ``{"selection": {"points": [{"customdata": ...}, ...]}}``
    (what :func:`workbench.viz.plotting.selected_rows` reads), only while the figure it was
    made on is the one shown; None before any selection. ``config``: plotly's (the mode bar's
    buttons). Without the frame's folder it is ``st.plotly_chart`` with the same arguments."""
    component = _component()
    if component is None:
        place = area or st
        if select:
            return place.plotly_chart(fig, config=config, key=key, on_select="rerun",
                                     selection_mode=("points", "box", "lasso"))  # fmt: skip
        place.plotly_chart(fig, config=config, key=key)
        return None
    figure, overlay, base, revision = figure_args(fig)
    height = int(fig.layout.height or DEFAULT_HEIGHT)
    args = {"figure": figure, "overlay": overlay, "config": config or {}, "height": height,
            "select": select, "base": base, "revision": revision, "key": key,
            "default": None}  # fmt: skip
    if area is None:
        value = component(**args)
    else:
        with area:
            value = component(**args)
    if isinstance(value, dict) and value.get("revision") == revision:
        return value
    return None
