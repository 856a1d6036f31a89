"""The files of a WSD evaluation report: HTML, Markdown, JSON, a CSV per table and LaTeX.

For the stem ``wsd-ALL``: ``wsd-ALL.html`` (self-contained, plotly.js compressed once:
:func:`workbench.reports.writers.to_html`), ``wsd-ALL.md``, ``wsd-ALL.json`` (the report's
content with its ``data`` entries also at the top level: ``datasets``, ``summary``, ``splits``,
``calibration``, ``errors``, ``published``, ``instances``, ...; the schema is in
docs/reports.md), ``wsd-ALL.<table>.csv`` for each table of
:data:`~workbench.wsd.reporting.document.TABLE_NAMES` the report has, and ``wsd-ALL.tex``
(the main results, booktabs). :func:`report_files` names them all before any work, so a command
can claim them (:func:`workbench.outputs.claim_files`).

Example::

    paths = write_eval_report(doc, "out/", "wsd-ALL")
    paths["html"], paths["tex"], paths["csv:datasets"]
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from workbench.reports.tables import csv_table
from workbench.reports.writers import to_dict, to_html, to_markdown, write_text_atomic
from workbench.wsd.reporting.document import TABLE_NAMES, EvalReport


def report_files(stem: str) -> tuple[str, ...]:
    """Every file :func:`write_eval_report` may write for ``stem`` (names only)."""
    return (
        f"{stem}.md",
        f"{stem}.html",
        f"{stem}.json",
        f"{stem}.tex",
        *(f"{stem}.{name}.csv" for name in TABLE_NAMES),
    )


def report_json(doc: EvalReport) -> dict[str, Any]:
    """The report's JSON content: :func:`workbench.reports.writers.to_dict` with each entry
    of its ``data`` also at the top level (``datasets``, ``summary``, ...); the per-instance
    table, ``instances``, only there, as :meth:`InstanceTable.to_json` made it (JSON-ready
    already: not walked value by value again, the longest part of writing the report)."""
    data = dict(doc.report.data)
    instances = data.pop("instances", None)
    content = to_dict(replace(doc.report, data=data))
    for key, value in content["data"].items():
        content.setdefault(key, value)
    if instances is not None:
        content["instances"] = instances
    return content


def json_text(content: dict[str, Any]) -> str:
    """``content`` as strict JSON, indented, with each per-instance row on one line."""
    content = dict(content)
    instances = content.pop("instances", None)
    text = json.dumps(content, indent=1, allow_nan=False)
    if instances is None:
        return text + "\n"
    rows = ",\n".join(json.dumps(r, allow_nan=False) for r in instances["rows"])
    table = f'{{"columns": {json.dumps(instances["columns"])}, "rows": [\n{rows}\n]}}'
    return text[: text.rstrip().rindex("}")].rstrip() + f',\n "instances": {table}\n}}\n'


def report_texts(doc: EvalReport, stem: str) -> dict[str, tuple[str, str]]:
    """Each file of the report by kind (``md``, ``html``, ``json``, ``tex``,
    ``csv:<table>``): ``(file name, text)``, as :func:`write_eval_report` writes them (the app
    offers them as downloads)."""
    texts = {
        "md": (f"{stem}.md", to_markdown(doc.report)),
        "html": (f"{stem}.html", to_html(doc.report, compressed=True)),
        "json": (f"{stem}.json", json_text(report_json(doc))),
        "tex": (f"{stem}.tex", doc.latex),
    }
    for name, table in doc.tables.items():
        texts[f"csv:{name}"] = (f"{stem}.{name}.csv", csv_table(table))
    return texts


def csv_zip(texts: dict[str, tuple[str, str]]) -> bytes:
    """The CSV files of :func:`report_texts` in one zip archive (one file per table)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for kind, (name, text) in texts.items():
            if kind.startswith("csv:"):
                archive.writestr(name, text)
    return buffer.getvalue()


def write_eval_report(
    doc: EvalReport, out_dir: str | Path, stem: str, overwrite: bool = False
) -> dict[str, Path]:
    """Write the report's files (:func:`report_texts`) into ``out_dir``; returns their paths
    by kind (``md``, ``html``, ``json``, ``tex``, ``csv:<table>``). A file of those names that
    the workbench did not write is replaced only with ``overwrite``."""
    out = Path(out_dir)
    return {
        kind: write_text_atomic(out / name, text, overwrite)
        for kind, (name, text) in report_texts(doc, stem).items()
    }
