"""The tab-separated tables written beside an embeddings file, for people and other tools.

``v.npz`` (the vectors) comes with ``v.tsv`` (one row per vector: row, sentence, position, word,
subword span) and, from ``workbench embed``, ``v.sentences.tsv`` (sentence number and id). A
cell never breaks the format: a backslash, tab, newline, carriage return and every other control
or line-separator character (Unicode categories Cc, Cs, Zl, Zp) is escaped as ``\\\\``, ``\\t``,
``\\n``, ``\\r`` or ``\\uXXXX``, and :func:`read_table` gives back the exact words. The ``.npz``
records each table's SHA-256, so :func:`read_table` refuses a table that does not belong to the
vectors beside it (a table left by an interrupted or another writer).

Other tools read the tables as plain TSV without quoting or missing values, e.g.
``pandas.read_csv(path, sep="\\t", quoting=csv.QUOTE_NONE, keep_default_na=False)``.

Example:
    >>> escape_cell("a\\tb\\\\c")
    'a\\\\tb\\\\\\\\c'
    >>> unescape_cell(escape_cell("line\\nbreak\\u2028")) == "line\\nbreak\\u2028"
    True
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from workbench.errors import DataError
from workbench.fileio import sha256_bytes

#: Header of the per-vector table (``v.tsv``).
ROW_HEADER = ("row", "sentence", "position", "word", "subword_start", "subword_end")
#: Header of the per-sentence table (``v.sentences.tsv``).
SENTENCE_HEADER = ("sentence", "id")

_SIMPLE = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNSIMPLE = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
_ESCAPE_RE = re.compile(r"\\(?:(?P<simple>[\\tnr])|u(?P<code>[0-9a-fA-F]{4})|(?P<bad>.?))", re.S)


def _needs_escape(ch: str) -> bool:
    return ch in _SIMPLE or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")


def escape_cell(text: str) -> str:
    """``text`` with every character that could break a TSV line escaped (module docstring)."""
    if text.isprintable() and "\\" not in text:  # fast path: nothing to escape
        return text
    return "".join(
        (_SIMPLE.get(ch) or f"\\u{ord(ch):04x}") if _needs_escape(ch) else ch for ch in text
    )


def unescape_cell(text: str) -> str:
    """The inverse of :func:`escape_cell`.

    Raises:
        DataError: a backslash that starts no known escape.
    """
    if "\\" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        if match["simple"]:
            return _UNSIMPLE[match["simple"]]
        if match["code"]:
            return chr(int(match["code"], 16))
        raise DataError(f"bad escape {match[0]!r} in table cell {text[:40]!r}")

    return _ESCAPE_RE.sub(replace, text)


def table_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """The whole table as text: the header line, then one line per row, cells escaped."""
    lines = ["\t".join(header)]
    lines.extend("\t".join(escape_cell(str(cell)) for cell in row) for row in rows)
    return "\n".join(lines) + "\n"


#: The ending of the per-sentence table's stem (``v.sentences.tsv`` beside ``v.npz``); no
#: embeddings stem may end with it.
SENTENCES_SUFFIX = ".sentences"


def vectors_path(table: str | os.PathLike[str]) -> Path:
    """The ``.npz`` a table belongs to (``v.tsv`` and ``v.sentences.tsv`` -> ``v.npz``).

    Unambiguous because no embeddings stem ends in ``.sentences``
    (:func:`~workbench.encoding.embeddings.npz_path` refuses one)."""
    table = Path(table)
    stem = table.name.removesuffix(".tsv").removesuffix(SENTENCES_SUFFIX)
    return table.with_name(stem + ".npz")


def recorded_tables(npz: str | os.PathLike[str]) -> dict[str, str]:
    """Table name -> SHA-256 as recorded in an embeddings ``.npz`` (empty for older files)."""
    try:
        with np.load(npz, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"{npz}: not a readable workbench embeddings file ({exc})") from exc
    tables = meta.get("tables") if isinstance(meta, dict) else None
    return dict(tables) if isinstance(tables, dict) else {}


def read_table(path: str | os.PathLike[str], check: bool = True) -> list[list[str]]:
    """Read a table written beside an embeddings file: the header, then each row's cells
    (unescaped, as strings).

    Args:
        path: the ``.tsv`` file.
        check: refuse a table whose SHA-256 is not the one its ``.npz`` records (or without
            its ``.npz``): it does not describe those vectors.

    Raises:
        DataError: a missing or unreadable file, a row with another number of cells than the
            header, a bad escape, or (``check``) a table that does not match its vectors.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if check:
        npz = vectors_path(path)
        if not npz.is_file():
            raise DataError(f"{path}: its vectors file {npz.name} is missing")
        expected = recorded_tables(npz).get(path.name)
        if expected != sha256_bytes(text):
            raise DataError(
                f"{path} does not match the vectors in {npz.name} (from an interrupted or "
                "another run); write the output again"
            )
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows = [line.split("\t") for line in lines]
    if not rows:
        raise DataError(f"{path}: empty table")
    width = len(rows[0])
    for number, cells in enumerate(rows[1:], start=2):
        if len(cells) != width:
            raise DataError(f"{path}:{number}: {len(cells)} cells, the header has {width}")
    try:
        return [rows[0], *([unescape_cell(c) for c in cells] for cells in rows[1:])]
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None
