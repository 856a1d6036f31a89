"""Generic report writers: Markdown tables, a self-contained HTML page, JSON with the full config.

Every analysis (geometry, WSD evaluation, ...) builds one :class:`Report` out of
:class:`Section` objects, each holding prose, :class:`Table` objects and plotly figures, plus the
full configuration that produced the numbers. The writers turn that into

* Markdown (``to_markdown``): tables as GitHub pipe tables, figures listed by title;
* HTML (``to_html``): one offline page, plotly.js inlined exactly once (or, ``compressed``,
  gzip-compressed and unpacked by the browser: a page under 3 MB), every figure interactive;
* JSON (``to_json``): config, tables as lists of records and any extra machine-readable ``data``.

The configuration is folded (``<details>``) at the end of the Markdown and HTML pages, its long
lists summarised as a count and a digest (:func:`summarised`; the full lists are in the JSON).
Titles, prose and cells are text in every format (escaped for HTML and Markdown).

Missing values (``None``, NaN) are printed as ``undefined`` in every format (``null`` in JSON),
so a measure that cannot be computed never crashes a report. Values and tables are formatted by
:mod:`workbench.reports.tables` (re-exported here).

Example::

    from workbench.reports.writers import Report, Section, Table, write_report
    table = Table(columns=("layer", "anisotropy"), rows=((0, 0.41), (6, float("nan"))))
    report = Report(title="Geometry", config={"model": "all-MiniLM-L6-v2", "seed": 0},
                    sections=(Section("Per layer", tables=(table,), figures=(fig,)),))
    paths = write_report(report, "out/", stem="geometry")   # {"md": ..., "html": ..., "json": ...}
"""

from __future__ import annotations

import base64
import datetime as _dt
import gzip
import html
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.errors import InputError
from workbench.escaping import html_text, json_script, markdown_text
from workbench.fileio import sha256_json
from workbench.outputs import output_file
from workbench.reports.tables import Table, jsonable

#: Lists longer than this are shown as a count and a digest in Markdown and HTML.
LIST_LIMIT = 20

FORMATS = ("md", "html", "json")


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Section:
    """One titled part of a report.

    Attributes:
        title: the section heading.
        text: prose; paragraphs separated by blank lines (plain text, Markdown-safe).
        tables: tables shown in order after the text.
        figures: plotly ``Figure`` objects shown after the tables (HTML only; Markdown lists
            their titles).
    """

    title: str
    text: str = ""
    tables: tuple[Table, ...] = ()
    figures: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", tuple(self.tables))
        object.__setattr__(self, "figures", tuple(self.figures))


@dataclass(frozen=True)
class Report:
    """A complete report: title, the full configuration, sections, extra machine-readable data.

    Attributes:
        title: the report title.
        config: everything that changes the numbers (model, fingerprint, layers, pooling,
            corrections, seed, data hashes, ...): a Mapping or a dataclass, JSON-serialisable via
            :func:`jsonable`.
        sections: the report body.
        data: extra results written only to JSON (e.g. full per-dimension arrays).
        command: the command line that produced the report, if any (shown verbatim).
        created: ISO timestamp; filled in at construction when empty.
    """

    title: str
    config: Any
    sections: tuple[Section, ...] = ()
    data: Any = field(default_factory=dict)
    command: str = ""
    created: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "sections", tuple(self.sections))
        if not self.created:
            now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
            object.__setattr__(self, "created", now)


_PLOTLY_TAG = re.compile(r"<[^<>]*>")


def _figure_title(fig: Any, i: int) -> str:
    """The figure's title as plain text: plotly's tags as spaces, its entities decoded (outside
    text in it was escaped by ``plotly_text``; the Markdown escapes it again)."""
    try:
        title = fig.layout.title.text
    except AttributeError:
        title = None
    text = " ".join(html.unescape(_PLOTLY_TAG.sub(" ", title)).split()) if title else ""
    return text or f"Figure {i + 1}"


def summarised(obj: Any, limit: int = LIST_LIMIT) -> Any:
    """A JSON-safe copy of ``obj`` (:func:`jsonable`) for reading: every list longer than
    ``limit`` replaced by ``"<n> items, sha256 <first 16 hex digits> (the full list in the
    JSON)"``."""
    value = jsonable(obj)
    if isinstance(value, dict):
        return {k: summarised(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) > limit:
            digest = sha256_json(value)[:16]
            return f"{len(value)} items, sha256 {digest} (the full list in the JSON)"
        return [summarised(v, limit) for v in value]
    return value


def fenced(text: str, info: str = "") -> list[str]:
    """``text`` as a Markdown code block whose fence is longer than any run of backticks in
    it (so nothing in it ends the block)."""
    runs = [len(r) for r in "".join(c if c == "`" else " " for c in text).split()]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return [fence + info, text, fence]


def _config_text(report: Report) -> str:
    return json.dumps(summarised(report.config), indent=2, sort_keys=True)


def to_markdown(report: Report, heading_level: int = 1) -> str:
    """The report as Markdown; sections become headings one level below the title; the
    configuration folded at the end (long lists summarised)."""
    h = "#" * heading_level
    parts = [f"{h} {markdown_text(report.title)}", ""]
    if report.command:
        parts += [*fenced(report.command), ""]
    for section in report.sections:
        parts += [f"{h}# {markdown_text(section.title)}", ""]
        if section.text:
            paras = [p.strip() for p in section.text.strip().split("\n\n") if p.strip()]
            for para in paras:
                parts += [markdown_text(para), ""]
        for table in section.tables:
            parts += [table.to_markdown()]
        for i, fig in enumerate(section.figures):
            title = markdown_text(_figure_title(fig, i))
            parts += [f"*Figure: {title} (interactive in the HTML report).*", ""]
    parts += [
        f"{h}# Configuration",
        "",
        "<details><summary>The full configuration (long lists summarised; all of it in the "
        "JSON)</summary>",
        "",
        *fenced(_config_text(report), "json"),
        "",
        "</details>",
        "",
    ]
    parts += [f"*workbench {__version__}, {report.created}*", ""]
    return "\n".join(parts)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:1em 0;font-size:0.92em}
caption{font-weight:600;text-align:left;padding:0.3em 0}
th,td{border:1px solid #ccc;padding:0.25em 0.6em}th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.undef{color:#999;font-style:italic}
p.note{font-size:0.85em;color:#555;margin:0.2em 0}
pre{background:#f6f6f6;padding:0.8em;overflow-x:auto;font-size:0.85em}
.figure{margin:1em 0}
details{margin:1em 0}summary{cursor:pointer;font-weight:600}h1{font-size:1.6em}
"""

#: Draws the figures of a page whose plotly.js is gzip-compressed (``to_html(compressed=True)``).
_UNPACK = """
(async function () {
  const packed = document.getElementById("plotly-gz").textContent.trim();
  const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const code = await new Response(stream).text();
  const script = document.createElement("script");
  script.textContent = code;
  document.head.appendChild(script);
  for (const div of document.querySelectorAll("div.plotly-figure")) {
    const spec = JSON.parse(document.getElementById(div.id + "-spec").textContent);
    Plotly.newPlot(div.id, spec.data, spec.layout, {responsive: true});
  }
})().catch((e) => {
  for (const div of document.querySelectorAll("div.plotly-figure")) {
    div.textContent = "This browser cannot unpack the figures (" + e + ").";
  }
});
"""


def _text_html(text: str) -> str:
    paras = [p.strip() for p in text.strip().split("\n\n") if p.strip()]
    return "\n".join(f"<p>{html_text(p)}</p>" for p in paras)


def _figure_html(fig: Any, div_id: str, compressed: bool) -> str:
    if not compressed:
        return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id)
    spec = json_script(fig.to_json())
    return (
        f'<div id="{div_id}" class="plotly-figure" style="height:450px"></div>'
        f'<script type="application/json" id="{div_id}-spec">{spec}</script>'
    )


def _plotly_script(compressed: bool) -> str:
    from plotly.offline import get_plotlyjs

    if not compressed:
        return f'<script type="text/javascript">{get_plotlyjs()}</script>'
    packed = base64.b64encode(gzip.compress(get_plotlyjs().encode("utf-8"), 6, mtime=0))
    return (
        f'<script type="application/octet-stream" id="plotly-gz">{packed.decode("ascii")}'
        f"</script><script>{_UNPACK}</script>"
    )


def to_html(report: Report, compressed: bool = False) -> str:
    """The report as one self-contained HTML page (plotly.js inlined once; works offline).

    Args:
        compressed: plotly.js inlined gzip-compressed (base64, 2 MB instead of 4.8 MB) and
            unpacked by the browser (``DecompressionStream``, in every current browser), which
            then draws the figures from their JSON; False: plotly.js as is.
    """
    esc = html_text
    body: list[str] = [f"<h1>{esc(report.title)}</h1>"]
    if report.command:
        body.append(f"<pre>{esc(report.command)}</pre>")
    n_fig = 0
    for section in report.sections:
        body.append(f"<h2>{esc(section.title)}</h2>")
        if section.text:
            body.append(_text_html(section.text))
        body += [t.to_html() for t in section.tables]
        for fig in section.figures:
            div = _figure_html(fig, f"figure-{n_fig}", compressed)
            body.append(f'<div class="figure">{div}</div>')
            n_fig += 1
    body += [
        "<h2>Configuration</h2>",
        "<details><summary>The full configuration (long lists summarised; all of it in the "
        "JSON)</summary>",
        f"<pre>{esc(_config_text(report))}</pre>",
        "</details>",
        f'<p class="note">workbench {esc(__version__)}, {esc(report.created)}</p>',
    ]
    script = _plotly_script(compressed) if n_fig else ""
    head, tail = ("", script) if compressed else (script, "")  # unpacked after the figures' divs
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(report.title)}</title><style>{_CSS}</style>{head}</head>\n<body>\n"
        + "\n".join(body)
        + f"\n{tail}</body></html>\n"
    )


def to_dict(report: Report) -> dict[str, Any]:
    """The report's machine-readable content (what :func:`to_json` writes)."""
    return {
        "title": report.title,
        "workbench_version": __version__,
        "created": report.created,
        "command": report.command,
        "config": jsonable(report.config),
        "sections": [
            {
                "title": s.title,
                "text": s.text,
                "tables": [
                    {
                        "caption": t.caption,
                        "columns": list(t.columns),
                        "rows": t.to_records(),
                        "notes": list(t.notes),
                    }
                    for t in s.tables
                ],
                "figures": [_figure_title(f, i) for i, f in enumerate(s.figures)],
            }
            for s in report.sections
        ],
        "data": jsonable(report.data),
    }


def to_json(report: Report) -> str:
    """The report as JSON text (strict: NaN and inf written as ``null``)."""
    return json.dumps(to_dict(report), indent=2, allow_nan=False) + "\n"


def write_text_atomic(path: str | os.PathLike[str], text: str, overwrite: bool = False) -> Path:
    """Write ``text`` to ``path`` via a temporary file and a rename (never a half-written file);
    a file there that the workbench did not write is replaced only with ``overwrite``
    (:func:`workbench.outputs.output_file`)."""
    path = Path(path)
    with output_file(path, overwrite=overwrite) as tmp:
        tmp.write_text(text, encoding="utf-8")  # an ordinary file: the umask's permissions
    return path


def write_report(
    report: Report,
    out_dir: str | os.PathLike[str],
    stem: str = "report",
    formats: Sequence[str] = FORMATS,
    overwrite: bool = False,
) -> dict[str, Path]:
    """Write ``report`` as ``<out_dir>/<stem>.md``, ``.html`` and ``.json`` (or a subset); a
    file of those names that the workbench did not write is replaced only with ``overwrite``.

    Returns:
        The written paths keyed by format.

    Raises:
        InputError: an unknown format name.
    """
    writers = {"md": to_markdown, "html": to_html, "json": to_json}
    unknown = [f for f in formats if f not in writers]
    if unknown:
        raise InputError(f"unknown report format(s) {unknown}; choose from {list(FORMATS)}")
    out = Path(out_dir)
    return {
        f: write_text_atomic(out / f"{stem}.{f}", writers[f](report), overwrite) for f in formats
    }
