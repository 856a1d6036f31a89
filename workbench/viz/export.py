"""Tables and figures as files that carry their settings: CSV / JSON for numbers, self-contained
HTML, plotly JSON, PNG or SVG for figures.

Every file names what made it, as a :class:`ViewSettings` (model, fingerprint, pooling, layer,
correction and its reference corpus, projection settings, seed, and what was shown), or a list of
them for a figure that compares panes (``{"panes": [...]}``):

* CSV: the first line is ``# workbench settings: {json}``, then the table
  (``pandas.read_csv(path, skiprows=1)`` reads the numbers); or, as the app downloads it, the
  plain table (:func:`plain_csv`) with its settings in a ``NAME.settings.json`` sidecar
  (:func:`settings_sidecar`);
* JSON (tables): ``{"settings": ..., "columns": [...], "rows": [{...}, ...]}``;
* HTML: one offline page (plotly.js inlined), the settings in the figure's ``layout.meta``, in a
  ``<script type="application/json" id="workbench-settings">`` element and shown under the figure;
* plotly JSON (``.json`` for a figure): the figure, settings in ``layout.meta``;
* PNG (an ``iTXt`` chunk named ``workbench-settings``) and SVG (a ``<metadata>`` element): drawn
  by kaleido, which needs the ``export`` extra (``pip install 'embedding-workbench[export]'``) and
  a Chrome or Chromium on the machine; without them :func:`figure_image` says so and HTML or JSON
  remain.

:func:`read_settings` gets the settings back from any of these files::

    settings = ViewSettings.of(emb, view="senses", layer="6", correction="zscore", ...)
    export_figure(fig, settings, "bank-layer6.html")
    export_table(table_records, settings, "bank-layer6.csv")
    read_settings(Path("bank-layer6.csv").read_bytes())["model"]
"""

from __future__ import annotations

import csv
import html
import importlib.util
import io
import json
import os
import re
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from workbench import __version__
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import DataError, InputError
from workbench.escaping import html_text, json_script
from workbench.outputs import output_file
from workbench.reports.tables import jsonable
from workbench.viz.projection import ProjectionConfig

TABLE_FORMATS: tuple[str, ...] = ("csv", "json")
FIGURE_FORMATS: tuple[str, ...] = ("html", "json", "png", "svg")
MIME_TYPES: dict[str, str] = {
    "csv": "text/csv",
    "json": "application/json",
    "html": "text/html",
    "png": "image/png",
    "svg": "image/svg+xml",
}
CSV_PREFIX = "# workbench settings: "
SETTINGS_ID = "workbench-settings"  # HTML element id, PNG chunk keyword, SVG metadata id
_SCRIPT = re.compile(
    r'<script type="application/json" id="workbench-settings">(.*?)</script>', re.DOTALL
)
_SVG_META = re.compile(r'<metadata id="workbench-settings">(.*?)</metadata>', re.DOTALL)


@dataclass(frozen=True)
class ViewSettings:
    """What made a table or figure; written into every exported file.

    Build it with :meth:`of` from the embeddings shown, so that model, fingerprint and pooling
    are the ones that made the vectors.
    """

    view: str  # what is shown: "senses", "separation", "words", "explore", ...
    model: str  # the encoder's name
    fingerprint: str  # the encoder's fingerprint (identity including a hash of the weights)
    pooling: str  # subword -> word pooling
    layer: str  # layer spec ("6", "last4-sum"); "all" for a curve over every layer
    correction: str = "none"  # geometry.corrections name applied before measuring/projecting
    reference: str = ""  # the corpus the correction was fitted on ("" for none)
    projection: ProjectionConfig | None = None  # projection settings, None without a projection
    seed: int | None = None  # random_state of the projection (None: none or not seeded)
    data: Mapping[str, Any] = field(default_factory=dict)  # lemma, source, counts, hashes...
    dtype: str = ""  # the model's compute dtype ("float32", "bfloat16"; "" when not recorded)

    @classmethod
    def of(
        cls,
        emb: LayerwiseEmbeddings,
        view: str,
        layer: str,
        correction: str = "none",
        reference: str = "",
        projection: ProjectionConfig | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> ViewSettings:
        """Settings of a view of ``emb`` (model, fingerprint, pooling and compute dtype taken
        from it)."""
        return cls(
            view=view, model=str(emb.model_name), fingerprint=str(emb.fingerprint),
            pooling=str(emb.pooling), layer=str(layer), correction=correction,
            reference=reference if correction != "none" else "", projection=projection,
            seed=projection.random_state if projection is not None else None,
            data=dict(data or {}), dtype=emb.compute_dtype,
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values, plus the workbench version."""
        out = jsonable(self)
        out["workbench_version"] = __version__
        return out


Settings = ViewSettings | Sequence[ViewSettings]


def settings_dict(settings: Settings) -> dict[str, Any]:
    """One view's settings as a dict, or ``{"panes": [...]}`` for several."""
    if isinstance(settings, ViewSettings):
        return settings.to_dict()
    panes = list(settings)
    if not panes or not all(isinstance(p, ViewSettings) for p in panes):
        raise InputError("settings must be a ViewSettings or a non-empty list of them")
    return {"panes": [p.to_dict() for p in panes], "workbench_version": __version__}


def _settings_json(settings: Settings) -> str:
    return json.dumps(settings_dict(settings), sort_keys=True, ensure_ascii=False, allow_nan=False)


# --------------------------------------------------------------------------- tables


def table_records(rows: Any) -> list[dict[str, Any]]:
    """A ``pandas.DataFrame`` or a sequence of mappings as a list of JSON-able dicts."""
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
        rows = rows.to_dict("records")
    records = [dict(r) for r in rows]
    return [jsonable(r) for r in records]


def _columns(records: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for r in records for k in r))


def table_csv(rows: Any, settings: Settings) -> str:
    """CSV text: a ``# workbench settings: {json}`` line, then the header and rows.

    Args:
        rows: a ``pandas.DataFrame`` or a sequence of mappings (one per row).
        settings: what made the table.
    """
    return CSV_PREFIX + _settings_json(settings) + "\n" + plain_csv(rows)


#: First characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A table cell as a CSV writer should get it: a text that a spreadsheet would run as a
    formula (it begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a
    leading ``'``, as OWASP recommends against CSV injection; numbers, and texts that are just a
    number (``-0.5``), are kept as they are; ``None`` is an empty cell.

    Example:
        >>> csv_cell("=HYPERLINK(\"http://x\")"), csv_cell(-0.5), csv_cell("-0.5")
        ('\'=HYPERLINK("http://x")', -0.5, '-0.5')
    """
    if value is None:
        return ""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


def plain_csv(rows: Any) -> str:
    """CSV text of the table alone, the header first: what any CSV reader reads as is
    (``pandas.read_csv(path)``). Its settings travel beside it (:func:`settings_sidecar`).
    Every cell goes through :func:`csv_cell`: no cell is a formula a spreadsheet runs."""
    records = table_records(rows)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=_columns(records), lineterminator="\n")
    writer.writerow({k: csv_cell(k) for k in writer.fieldnames})
    for r in records:
        writer.writerow({k: csv_cell(v) for k, v in r.items()})
    return out.getvalue()


def settings_sidecar(settings: Settings) -> str:
    """JSON text ``{"settings": ...}``: the settings of a file exported without them (a plain
    CSV), saved beside it as ``NAME.settings.json``; :func:`read_settings` reads it."""
    return json.dumps({"settings": settings_dict(settings)}, indent=1, ensure_ascii=False,
                      allow_nan=False) + "\n"  # fmt: skip


def table_json(rows: Any, settings: Settings) -> str:
    """JSON text ``{"settings", "columns", "rows"}`` (NaN written as ``null``)."""
    records = table_records(rows)
    doc = {"settings": settings_dict(settings), "columns": _columns(records), "rows": records}
    return json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


# --------------------------------------------------------------------------- figures


def _with_meta(fig: go.Figure, settings: Settings) -> go.Figure:
    out = go.Figure(fig)
    out.update_layout(meta={SETTINGS_ID: settings_dict(settings)})
    return out


def figure_json(fig: go.Figure, settings: Settings) -> str:
    """The figure as plotly JSON, its settings in ``layout.meta["workbench-settings"]``."""
    return str(_with_meta(fig, settings).to_json())


def figure_html(fig: go.Figure, settings: Settings) -> str:
    """The figure as one self-contained HTML page (plotly.js inlined: works offline), with the
    settings in ``layout.meta``, in a JSON script element and shown under the figure (the JSON's
    ``<`` written ``\\u003c``: no ``</script>`` or ``<!--`` in a label ends or hides what
    follows)."""
    page = str(_with_meta(fig, settings).to_html(include_plotlyjs=True, full_html=True))
    text = json.dumps(settings_dict(settings), indent=2, sort_keys=True, ensure_ascii=False)
    block = (
        f'<script type="application/json" id="{SETTINGS_ID}">'
        f"{json_script(_settings_json(settings))}</script>\n"
        "<details><summary>Settings (workbench)</summary><pre>"
        f"{html_text(text)}</pre></details>\n"
    )
    head, sep, tail = page.rpartition("</body>")
    return head + block + sep + tail if sep else page + block


def image_export_available() -> bool:
    """Whether kaleido (PNG and SVG export) is installed; it also needs Chrome or Chromium."""
    return importlib.util.find_spec("kaleido") is not None


def _png_with_text(png: bytes, keyword: str, text: str) -> bytes:
    """``png`` with an ``iTXt`` chunk (UTF-8 text) inserted right after ``IHDR``."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise DataError("the image renderer returned something that is not a PNG")
    ihdr_end = 8 + 8 + struct.unpack(">I", png[8:12])[0] + 4
    data = keyword.encode("latin-1") + b"\x00\x00\x00\x00\x00" + text.encode("utf-8")
    chunk = struct.pack(">I", len(data)) + b"iTXt" + data
    chunk += struct.pack(">I", zlib.crc32(b"iTXt" + data) & 0xFFFFFFFF)
    return png[:ihdr_end] + chunk + png[ihdr_end:]


def _png_text(png: bytes, keyword: str) -> str | None:
    pos = 8
    while pos + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data = png[pos + 8 : pos + 8 + length]
        if kind == b"iTXt" and data.startswith(keyword.encode("latin-1") + b"\x00"):
            rest = data[len(keyword) + 3 :]  # flag, method
            _, _, rest = rest.partition(b"\x00")  # language tag
            _, _, rest = rest.partition(b"\x00")  # translated keyword
            return rest.decode("utf-8")
        pos += 12 + length
    return None


def figure_image(
    fig: go.Figure, settings: Settings, fmt: str = "png", width: int = 1100, height: int = 700
) -> bytes:
    """The figure as PNG or SVG bytes (kaleido), carrying its settings.

    Raises:
        InputError: another format, or kaleido (or the browser it drives) is missing; the
            message says to export HTML or JSON instead.
    """
    if fmt not in ("png", "svg"):
        raise InputError(f"image format must be png or svg, got {fmt!r}")
    if not image_export_available():
        raise InputError(
            f"{fmt.upper()} export needs kaleido: pip install 'embedding-workbench[export]' "
            "(it also needs Chrome or Chromium); export HTML or JSON instead"
        )
    try:
        image = _with_meta(fig, settings).to_image(format=fmt, width=width, height=height)
    except Exception as exc:  # noqa: BLE001 - kaleido's errors (no browser, ...) vary by version
        raise InputError(
            f"{fmt.upper()} export failed ({type(exc).__name__}: {exc}); kaleido needs Chrome or "
            "Chromium; export HTML or JSON instead"
        ) from exc
    payload = _settings_json(settings)
    if fmt == "png":
        return _png_with_text(image, SETTINGS_ID, payload)
    svg = image.decode("utf-8")
    meta = f'<metadata id="{SETTINGS_ID}">{html_text(payload)}</metadata>'
    end = svg.index(">", svg.index("<svg")) + 1
    return (svg[:end] + meta + svg[end:]).encode("utf-8")


# --------------------------------------------------------------------------- files


def _format_of(path: Path, allowed: tuple[str, ...], what: str) -> str:
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in allowed:
        raise InputError(
            f"cannot tell the {what} format from {path.name!r}: end the name with "
            + " or ".join(f".{f}" for f in allowed)
        )
    return fmt


def figure_format(path: str | os.PathLike[str]) -> str:
    """The figure format of an output path by its suffix (check it before any work).

    Raises:
        InputError: a suffix other than ``.html``, ``.json``, ``.png``, ``.svg``.
    """
    return _format_of(Path(path), FIGURE_FORMATS, "figure")


def table_format(path: str | os.PathLike[str]) -> str:
    """The table format of an output path by its suffix (``csv`` or ``json``).

    Raises:
        InputError: another suffix.
    """
    return _format_of(Path(path), TABLE_FORMATS, "table")


def _write(path: Path, content: str | bytes, overwrite: bool) -> Path:
    with output_file(path, overwrite=overwrite) as tmp:
        if isinstance(content, bytes):
            tmp.write_bytes(content)
        else:
            tmp.write_text(content, encoding="utf-8")
    return path


def export_figure(
    fig: go.Figure, settings: Settings, path: str | os.PathLike[str], overwrite: bool = False
) -> Path:
    """Write the figure to ``path`` (``.html``, ``.json``, ``.png`` or ``.svg``), whole or not
    at all; a file there that the workbench did not write is replaced only with ``overwrite``
    (:mod:`workbench.outputs`). Returns the path."""
    path = Path(path)
    fmt = figure_format(path)
    if fmt == "html":
        return _write(path, figure_html(fig, settings), overwrite)
    if fmt == "json":
        return _write(path, figure_json(fig, settings), overwrite)
    return _write(path, figure_image(fig, settings, fmt), overwrite)


def export_table(
    rows: Any, settings: Settings, path: str | os.PathLike[str], overwrite: bool = False
) -> Path:
    """Write a table to ``path`` (``.csv`` or ``.json``), whole or not at all; a file there that
    the workbench did not write is replaced only with ``overwrite``."""
    path = Path(path)
    fmt = table_format(path)
    text = table_csv(rows, settings) if fmt == "csv" else table_json(rows, settings)
    return _write(path, text, overwrite)


def read_settings(content: bytes | str) -> dict[str, Any]:
    """The settings carried by an exported file's content (any format of this module).

    Raises:
        DataError: the content carries no workbench settings, or settings that cannot be read
            (damaged, not UTF-8, not a JSON object, nested too deeply): one message, whatever
            the content.
    """
    try:
        found = _carried_settings(content)
    except DataError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
            struct.error, zlib.error, MemoryError) as exc:  # fmt: skip
        reason = str(exc).splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise DataError(f"this file's workbench settings cannot be read ({reason})") from None
    if not isinstance(found, dict) or not all(isinstance(k, str) for k in found):
        raise DataError("this file's workbench settings are not a JSON object")
    return found


def _carried_settings(content: bytes | str) -> Any:
    """The settings' JSON value from any format of this module (see :func:`read_settings`)."""
    if isinstance(content, bytes) and content.startswith(b"\x89PNG"):
        text = _png_text(content, SETTINGS_ID)
        if text is None:
            raise DataError("this PNG carries no workbench settings")
        return json.loads(text)
    try:
        text = content.decode("utf-8") if isinstance(content, bytes) else content
    except UnicodeDecodeError:
        raise DataError("this file carries no workbench settings (binary, not an export)") from None
    if text.startswith(CSV_PREFIX):
        return json.loads(text.splitlines()[0][len(CSV_PREFIX) :])
    if m := _SCRIPT.search(text):
        return json.loads(m.group(1).replace("<\\/", "</"))
    if m := _SVG_META.search(text):
        return json.loads(html.unescape(m.group(1)))
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        if isinstance(doc.get("settings"), dict):
            return doc["settings"]
        layout = doc.get("layout")
        meta = layout.get("meta") if isinstance(layout, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get(SETTINGS_ID), dict):
            return meta[SETTINGS_ID]
    raise DataError("this file carries no workbench settings (not a workbench export)")


def settings_fields(settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-view settings in a :func:`read_settings` result: the panes, or the one view."""
    panes = settings.get("panes")
    return [dict(p) for p in panes] if isinstance(panes, list) else [dict(settings)]
