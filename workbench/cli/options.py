"""Option values the commands share, parsed into what the library takes.

Each parser raises :class:`~workbench.errors.InputError` naming the option and the bad value,
so the command line prints one line and exits with code 2.
"""

from __future__ import annotations

from workbench.errors import InputError


def layer_list(text: str | None, option: str = "--layers") -> list[int] | None:
    """``"0,6"`` -> ``[0, 6]`` (negative indices count from the last layer); ``None`` -> None.

    Raises:
        InputError: an empty list (``","``) or an item that is not an integer (``"a"``).
    """
    if text is None:
        return None
    items = [v.strip() for v in text.split(",")]
    if not any(items):
        raise InputError(f"{option} {text!r} names no layer: give indices such as 0,6")
    try:
        return [int(v) for v in items if v]
    except ValueError:
        raise InputError(
            f"{option} must be comma-separated integers such as 0,6, not {text!r}"
        ) from None
