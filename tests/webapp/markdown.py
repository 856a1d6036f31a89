"""What a visitor sees of an element's markdown: outside text in a page is backslash-escaped
(``webapp.text.plain``), and the page shows each escaped character as itself."""

from __future__ import annotations

import re


def shown(value: str) -> str:
    """``value`` with CommonMark's backslash escapes of ASCII punctuation undone."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", value)
