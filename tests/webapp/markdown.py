"""What a visitor sees of an element's markdown: outside text in a page is backslash-escaped
(``webapp.text.plain``), and the page shows each escaped character as itself."""

from __future__ import annotations

import re


def shown(value: str) -> str:
    """``value`` with CommonMark's backslash escapes of ASCII punctuation undone."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", value)


def table_rows(value: str) -> list[dict[str, str]]:
    """The rows of a markdown table (``webapp.text.markdown_table``) as a visitor reads them:
    one mapping per body row, header -> cell, escapes undone; [] when ``value`` is no table."""
    lines = [line for line in value.splitlines() if line.startswith("| ")]
    if len(lines) < 2 or not set(lines[1]) <= set("|-: "):
        return []
    cells = [[shown(c.strip()) for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]
    return [dict(zip(cells[0], row)) for row in cells[2:]]
