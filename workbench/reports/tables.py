"""Values and tables of a report (:mod:`workbench.reports.writers`): formatting, JSON conversion,
and :class:`Table` rendered as a Markdown pipe table, an HTML table, CSV or a LaTeX (booktabs)
table.

Missing values (``None``, NaN) print as ``undefined`` (``null`` in JSON, empty in CSV, ``--``
in LaTeX). Text is shown as text in every format: HTML is escaped, Markdown's markup characters
are backslash-escaped, LaTeX's special characters too (:mod:`workbench.escaping`). A cell is a
link only when the code made it a :class:`Link` (an ``http`` or ``https`` address): an ``<a>``
in HTML, ``[text](url)`` in Markdown, the address in CSV and JSON, its text in LaTeX; text from
outside never becomes one.

Example:
    >>> print(markdown_table(Table(columns=("layer", "anisotropy"), rows=((0, 0.41),))).strip())
    | layer | anisotropy |
    | ---: | ---: |
    | 0 | 0.410 |
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import InputError
from workbench.escaping import html_text, latex_text, markdown_text

UNDEFINED = "undefined"


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Link:
    """A table cell that links somewhere: ``text`` shown, ``url`` (``http://`` or
    ``https://`` only) followed; ``str(link)`` is its text.

    Example::

        Link("open", "http://localhost:8501/wsd?word=bank")
    """

    text: str
    url: str

    def __post_init__(self) -> None:
        if not re.match(r"https?://[^\s\"'<>]+$", self.url):
            raise InputError(f"a link must be an http(s) address without spaces, not {self.url!r}")

    def __str__(self) -> str:
        return self.text


def is_missing(value: Any) -> bool:
    """True for ``None`` and for float NaN (numpy floats included)."""
    if value is None:
        return True
    if isinstance(value, str | bool):
        return False
    try:
        return math.isnan(value)
    except TypeError:
        return False


def format_value(value: Any, digits: int = 3) -> str:
    """One table cell as text: floats with ``digits`` decimals, ``None``/NaN as ``undefined``.

    Args:
        value: a number, string, bool or ``None``.
        digits: decimals for floats.

    Returns:
        The cell text, e.g. ``format_value(0.12345) == "0.123"``, ``format_value(None) ==
        "undefined"``.
    """
    if is_missing(value):
        return UNDEFINED
    if isinstance(value, Link):
        return value.text
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or (hasattr(value, "dtype") and value.dtype.kind in "iu"):
        return str(int(value))
    if isinstance(value, float) or (hasattr(value, "dtype") and value.dtype.kind == "f"):
        v = float(value)
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        text = f"{v:.{digits}f}"
        return "0." + "0" * digits if text == "-0." + "0" * digits else text
    return str(value)


def jsonable(obj: Any) -> Any:
    """A JSON-safe copy of ``obj``: dataclasses, numpy, paths, tuples; NaN and inf -> ``None``.

    float32/float16 values are written with the digits they actually carry (0.41, not
    0.4099999964237213).
    """
    if isinstance(obj, Link):
        return obj.url
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, str | bool) or obj is None:
        return obj
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist") and hasattr(obj, "dtype"):  # numpy array or scalar
        if obj.dtype.kind == "f" and obj.dtype.itemsize < 8:
            digits = 8 if obj.dtype.itemsize == 4 else 4
            short = np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[object])
            return jsonable(short(obj).tolist())
        return jsonable(obj.tolist())
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Sequence | set | frozenset):
        return [jsonable(v) for v in obj]
    return str(obj)


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class Table:
    """A rectangular table of values.

    Attributes:
        columns: column headers.
        rows: one tuple per row, as long as ``columns``; cells are numbers, strings or ``None``.
        caption: one line shown above the table.
        digits: decimals used for float cells.
        notes: footnotes shown under the table (e.g. what ``undefined`` means here).
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    caption: str = ""
    digits: int = 3
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "rows", tuple(tuple(r) for r in self.rows))
        object.__setattr__(self, "notes", tuple(self.notes))
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise InputError(
                    f"table row {i} has {len(row)} cells but there are {len(self.columns)} columns"
                )

    def cells(self) -> list[list[str]]:
        """Every row formatted as text (see :func:`format_value`)."""
        return [[format_value(v, self.digits) for v in row] for row in self.rows]

    def to_markdown(self) -> str:
        """The table as a GitHub pipe table (numbers right-aligned), caption and notes around it."""
        return markdown_table(self)

    def to_html(self) -> str:
        """The table as an HTML ``<table>`` (escaped)."""
        return html_table(self)

    def to_records(self) -> list[dict[str, Any]]:
        """Rows as JSON-safe dicts keyed by column (NaN -> ``None``)."""
        return [dict(zip(self.columns, jsonable(list(row)), strict=True)) for row in self.rows]


def _is_numeric_column(table: Table, j: int) -> bool:
    values = [row[j] for row in table.rows if not is_missing(row[j])]
    return bool(values) and all(
        isinstance(v, int | float) or hasattr(v, "dtype") for v in values if not isinstance(v, bool)
    )


def markdown_table(table: Table) -> str:
    """``table`` as Markdown; see :class:`Table`."""
    lines = []
    if table.caption:
        lines += [f"**{markdown_text(table.caption)}**", ""]
    lines.append("| " + " | ".join(markdown_text(c) for c in table.columns) + " |")
    align = ["---:" if _is_numeric_column(table, j) else "---" for j in range(len(table.columns))]
    lines.append("| " + " | ".join(align) + " |")
    for values, row in zip(table.rows, table.cells()):
        shown = [
            f"[{markdown_text(c)}]({v.url})" if isinstance(v, Link) else markdown_text(c)
            for v, c in zip(values, row)
        ]
        lines.append("| " + " | ".join(shown) + " |")
    for note in table.notes:
        lines += ["", f"*{markdown_text(note)}*"]
    return "\n".join(lines) + "\n"


def html_table(table: Table) -> str:
    """``table`` as an HTML fragment; see :class:`Table`."""
    esc = html_text
    numeric = [_is_numeric_column(table, j) for j in range(len(table.columns))]
    out = ["<table>"]
    if table.caption:
        out.append(f"<caption>{esc(table.caption)}</caption>")
    head = "".join(f"<th>{esc(c)}</th>" for c in table.columns)
    out.append(f"<thead><tr>{head}</tr></thead>")
    out.append("<tbody>")
    for values, row in zip(table.rows, table.cells()):
        tds = "".join(
            f'<td class="{"num" if numeric[j] else "txt"}'
            f'{" undef" if c == UNDEFINED else ""}">'
            + (f'<a href="{esc(v.url)}">{esc(c)}</a>' if isinstance(v, Link) else esc(c))
            + "</td>"
            for j, (v, c) in enumerate(zip(values, row))
        )
        out.append(f"<tr>{tds}</tr>")
    out.append("</tbody></table>")
    for note in table.notes:
        out.append(f'<p class="note">{esc(note)}</p>')
    return "\n".join(out)


def csv_table(table: Table) -> str:
    """``table`` as CSV text: a header row, then the rows with their full values (numbers
    unrounded; missing values empty)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow(["" if is_missing(v) else v for v in jsonable(list(row))])
    return out.getvalue()


def latex_table(table: Table, label: str = "") -> str:
    """``table`` as a LaTeX ``table`` float with a booktabs ``tabular`` (``\\toprule``,
    ``\\midrule``, ``\\bottomrule``; needs ``\\usepackage{booktabs}``): numeric columns
    right-aligned, text left; the caption and notes escaped; cells as :meth:`Table.cells`
    prints them, ``undefined`` as ``--``."""
    align = "".join("r" if _is_numeric_column(table, j) else "l" for j in range(len(table.columns)))
    lines = ["\\begin{table}[t]", "\\centering"]
    if table.caption:
        lines.append(f"\\caption{{{latex_text(table.caption)}}}")
    if label:
        lines.append(f"\\label{{{latex_text(label)}}}")
    lines += [f"\\begin{{tabular}}{{{align}}}", "\\toprule"]
    lines.append(" & ".join(latex_text(c) for c in table.columns) + " \\\\")
    lines.append("\\midrule")
    for row in table.cells():
        cells = ["--" if c == UNDEFINED else latex_text(c) for c in row]
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    for note in table.notes:
        lines.append(f"\\par\\smallskip{{\\footnotesize {latex_text(note)}}}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"
