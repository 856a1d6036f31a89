"""Download buttons for every table and figure the app shows; each file carries its settings
(:mod:`workbench.viz.export`): a plain CSV with a settings sidecar and JSON for numbers,
self-contained HTML, PNG and SVG (when kaleido is installed) for figures.

Each figure's and each table's buttons are in a popover ("Download the figure", "Download the
table"): the browser mounts a popover's buttons only when it is opened, so a page's reruns do not
redraw a row of buttons per figure. Files are made when their button is clicked (a callable
passed to ``st.download_button``), so drawing a page never pays for an export; a click does not
rerun the page.

Example::

    # the two popovers side by side; keys senses_a_fig_html, senses_a_table_csv, ...
    downloads.figure_and_table(fig, table, view.settings, "senses-bank-6", "senses_a")
    downloads.table_buttons(table, view.settings, "senses-bank-6", "senses_t")  # a table alone
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


def row(area: Any = None) -> Any:
    """A row (in ``area``, default the page) for a figure's and a table's download popovers side
    by side: pass it as their ``area``."""
    return (area if area is not None else st).container(horizontal=True, gap="small")


def _menu(area: Any, label: str) -> Any:
    """A popover of download buttons in ``area`` (default the page)."""
    return (area if area is not None else st).popover(label, icon=":material/download:")


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
    """A "Download the figure" popover (in ``area``, default the page) with buttons for the
    figure as HTML, and PNG and SVG when kaleido is installed (else the HTML button's help says
    how to get them, and beside it the popover says that the figure's own camera button saves a
    PNG in the browser: :data:`CHART_CONFIG`)."""
    menu = _menu(area, "Download the figure")
    name = _safe(stem)
    images = image_export_available()
    _button(menu, "HTML", lambda: figure_html(fig, settings), f"{name}.html",
            f"{key}_html", help="The figure: a self-contained page with its settings (its "
            "toolbar's camera button saves a PNG).")  # fmt: skip
    if images:
        _button(menu, "PNG", lambda: figure_image(fig, settings, "png"), f"{name}.png",
                f"{key}_png")  # fmt: skip
        _button(menu, "SVG", lambda: figure_image(fig, settings, "svg"), f"{name}.svg",
                f"{key}_svg")  # fmt: skip
    else:
        menu.caption(CAMERA_NOTE, help="The figure's toolbar (top right) saves what is on "
                     "screen as a PNG in the browser. " + KALEIDO_NOTE)  # fmt: skip


Rows = Any  # a DataFrame, a list of row mappings, or a callable returning one (made on click)


def _rows(rows: Rows) -> Any:
    return rows() if callable(rows) else rows


def table_buttons(rows: Rows, settings: Settings, stem: str, key: str, area: Any = None) -> None:
    """A "Download the table" popover (in ``area``, default the page) with buttons for a
    plain CSV (the header first, which any CSV reader reads), its settings as a
    ``NAME.settings.json`` sidecar, and JSON (settings and rows together)."""
    menu = _menu(area, "Download the table")
    name = _safe(stem)
    _button(menu, "CSV", lambda: plain_csv(_rows(rows)), f"{name}.csv",
            f"{key}_csv", help="The table alone: `pandas.read_csv` reads it as is. Its settings "
            f"are in {name}.settings.json (the Settings button).")  # fmt: skip
    _button(menu, "Settings", lambda: settings_sidecar(settings), f"{name}.settings.json",
            f"{key}_settings", help="What made the table (model, layer, correction, ...), to "
            "keep beside the CSV.")  # fmt: skip
    _button(menu, "JSON", lambda: table_json(_rows(rows), settings), f"{name}.json",
            f"{key}_json", help="The settings and the rows in one file.")  # fmt: skip


def figure_and_table(
    fig: go.Figure | None, rows: Rows, settings: Settings, stem: str, key: str, area: Any = None
) -> None:
    """A figure's and its table's download popovers side by side in one row (in ``area``,
    default the page), the same settings and file names for both: :func:`figure_buttons` with
    key ``{key}_fig`` (none where ``fig`` is None: a figure drawn elsewhere) and
    :func:`table_buttons` with key ``{key}_table``. ``rows`` may be a callable, so the table is
    made only when a button is clicked."""
    together = row(area)
    if fig is not None:
        figure_buttons(fig, settings, stem, f"{key}_fig", together)
    table_buttons(rows, settings, stem, f"{key}_table", together)


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
