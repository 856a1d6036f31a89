"""Download buttons for every table and figure the app shows; each file carries its settings
(:mod:`workbench.viz.export`): CSV and JSON for numbers, self-contained HTML, PNG and SVG (when
kaleido is installed) for figures.

Files are made when their button is clicked (a callable passed to ``st.download_button``), so
drawing a page never pays for an export; a click does not rerun the page.

Example::

    downloads.figure_buttons(fig, view.settings, "senses-bank-6", key="senses_a")
    downloads.table_buttons(table, view.settings, "senses-bank-6", key="senses_a")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from workbench.viz.export import (
    MIME_TYPES,
    Settings,
    figure_html,
    figure_image,
    image_export_available,
    table_csv,
    table_json,
)


def _safe(stem: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem)
    return keep.strip("-") or "workbench"


def _button(area: Any, label: str, make: Callable[[], str | bytes], name: str, key: str) -> None:
    fmt = name.rsplit(".", 1)[-1]
    area.download_button(label, make, name, MIME_TYPES[fmt], key=key, on_click="ignore",
                         icon=":material/download:")  # fmt: skip


def figure_buttons(
    fig: go.Figure, settings: Settings, stem: str, key: str, area: Any = None
) -> None:
    """Buttons for the figure as HTML, and PNG and SVG when kaleido is installed (else a note
    that says so)."""
    where = area if area is not None else st
    name = _safe(stem)
    cols = where.columns(3)
    _button(cols[0], "Figure (HTML)", lambda: figure_html(fig, settings), f"{name}.html",
            f"{key}_html")  # fmt: skip
    if image_export_available():
        _button(cols[1], "PNG", lambda: figure_image(fig, settings, "png"), f"{name}.png",
                f"{key}_png")  # fmt: skip
        _button(cols[2], "SVG", lambda: figure_image(fig, settings, "svg"), f"{name}.svg",
                f"{key}_svg")  # fmt: skip
    else:
        cols[1].caption("PNG/SVG need kaleido: `pip install 'embedding-workbench[export]'`")


def table_buttons(rows: Any, settings: Settings, stem: str, key: str, area: Any = None) -> None:
    """Buttons for a table (a DataFrame or a list of row mappings) as CSV and JSON."""
    where = area if area is not None else st
    name = _safe(stem)
    cols = where.columns(2)
    _button(cols[0], "Numbers (CSV)", lambda: table_csv(rows, settings), f"{name}.csv",
            f"{key}_csv")  # fmt: skip
    _button(cols[1], "Numbers (JSON)", lambda: table_json(rows, settings), f"{name}.json",
            f"{key}_json")  # fmt: skip
