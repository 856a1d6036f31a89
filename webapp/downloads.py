"""Download buttons for every table and figure the app shows; each file carries its settings
(:mod:`workbench.viz.export`): a plain CSV with a settings sidecar and JSON for numbers,
self-contained HTML, PNG and SVG (when kaleido is installed) for figures.

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

from webapp.loaded_model import encoder
from workbench.viz.export import (
    MIME_TYPES,
    Settings,
    ViewSettings,
    figure_html,
    figure_image,
    image_export_available,
    plain_csv,
    settings_sidecar,
    table_json,
)
from workbench.viz.projection import ProjectionConfig


def _safe(stem: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem)
    return keep.strip("-") or "workbench"


def _button(
    area: Any, label: str, make: Callable[[], str | bytes], name: str, key: str, help: str = ""
) -> None:
    fmt = name.rsplit(".", 1)[-1]
    area.download_button(label, make, name, MIME_TYPES[fmt], key=key, on_click="ignore",
                         icon=":material/download:", help=help or None)  # fmt: skip


KALEIDO_NOTE = "PNG and SVG need kaleido: `pip install 'embedding-workbench[export]'`."
#: Every figure's plotly configuration: the toolbar (the modebar) always shown, its camera
#: button saving the figure as a PNG in the browser (twice the screen's resolution), no kaleido
#: needed; no plotly logo.
CHART_CONFIG = {
    "displayModeBar": True,
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},
}
#: What the page says beside a figure's download buttons where kaleido is missing.
CAMERA_NOTE = ":material/photo_camera: PNG: the camera button at the figure's top right"


def figure_buttons(
    fig: go.Figure, settings: Settings, stem: str, key: str, area: Any = None
) -> None:
    """Buttons for the figure as HTML, and PNG and SVG when kaleido is installed (else the
    HTML button's help says how to get them, and beside it the page says that the figure's own
    camera button saves a PNG in the browser: :data:`CHART_CONFIG`)."""
    where = area if area is not None else st
    name = _safe(stem)
    images = image_export_available()
    cols = where.columns(3, vertical_alignment="center")
    if not images:
        cols[1].caption(CAMERA_NOTE, help="The figure's toolbar (top right) saves what is on "
                        "screen as a PNG in the browser. " + KALEIDO_NOTE)  # fmt: skip
    _button(cols[0], "HTML", lambda: figure_html(fig, settings), f"{name}.html",
            f"{key}_html", help="The figure: a self-contained page with its settings (its "
            "toolbar's camera button saves a PNG).")  # fmt: skip
    if images:
        _button(cols[1], "PNG", lambda: figure_image(fig, settings, "png"), f"{name}.png",
                f"{key}_png")  # fmt: skip
        _button(cols[2], "SVG", lambda: figure_image(fig, settings, "svg"), f"{name}.svg",
                f"{key}_svg")  # fmt: skip


Rows = Any  # a DataFrame, a list of row mappings, or a callable returning one (made on click)


def _rows(rows: Rows) -> Any:
    return rows() if callable(rows) else rows


def table_buttons(rows: Rows, settings: Settings, stem: str, key: str, area: Any = None) -> None:
    """Buttons for a table: a plain CSV (the header first, which any CSV reader reads) with
    its settings as a ``NAME.settings.json`` sidecar, and JSON (settings and rows together)."""
    where = area if area is not None else st
    name = _safe(stem)
    cols = where.columns(3)
    _button(cols[0], "CSV", lambda: plain_csv(_rows(rows)), f"{name}.csv",
            f"{key}_csv", help="The table alone: `pandas.read_csv` reads it as is. Its settings "
            f"are in {name}.settings.json (the Settings button).")  # fmt: skip
    _button(cols[1], "Settings", lambda: settings_sidecar(settings), f"{name}.settings.json",
            f"{key}_settings", help="What made the table (model, layer, correction, ...), to "
            "keep beside the CSV.")  # fmt: skip
    _button(cols[2], "JSON", lambda: table_json(_rows(rows), settings), f"{name}.json",
            f"{key}_json", help="The settings and the rows in one file.")  # fmt: skip


def view_settings(
    view: str,
    layer: str,
    correction: str = "none",
    reference: str = "",
    data: dict | None = None,
    projection: ProjectionConfig | None = None,
) -> ViewSettings:
    """The settings an export of a view made with the sidebar's model carries (model,
    fingerprint, pooling and dtype from the loaded encoder)."""
    enc = encoder()
    return ViewSettings(
        view=view, model=str(enc.name), fingerprint=str(enc.fingerprint), pooling=enc.pooling,
        layer=str(layer), correction=correction,
        reference=reference if correction != "none" else "", projection=projection,
        seed=projection.random_state if projection is not None else None, data=dict(data or {}),
        dtype=enc.dtype_name,
    )  # fmt: skip


#: The files of a report offered for download: kind -> (button label, MIME type).
REPORT_FILES = {
    "html": ("HTML", "text/html"),
    "md": ("Markdown", "text/markdown"),
    "json": ("JSON", "application/json"),
    "tex": ("LaTeX", "application/x-tex"),
}


def report_buttons(
    texts: Callable[[], dict[str, tuple[str, str]]],
    zipped: Callable[[], bytes],
    stem: str,
    key: str,
    area: Any = None,
) -> None:
    """Download buttons for a report's files, as its writers make them: ``texts()`` gives kind
    -> ``(file name, text)`` (:func:`workbench.wsd.reporting.files.report_texts`), one button
    per kind of :data:`REPORT_FILES`; ``zipped()`` the CSV tables in one zip
    (:func:`workbench.wsd.reporting.files.csv_zip`). Both are called when a button is
    clicked."""
    where = area if area is not None else st
    columns = where.columns(len(REPORT_FILES) + 1)
    for column, (kind, (label, mime)) in zip(columns, REPORT_FILES.items()):
        column.download_button(
            label, lambda kind=kind: texts()[kind][1], f"{_safe(stem)}.{kind}", mime,
            key=f"{key}_{kind}", on_click="ignore", icon=":material/download:",
        )  # fmt: skip
    columns[-1].download_button(
        "CSV (zip)", zipped, f"{_safe(stem)}-csv.zip", "application/zip", key=f"{key}_csv",
        on_click="ignore", icon=":material/download:", help="every table of the report as CSV",
    )  # fmt: skip
