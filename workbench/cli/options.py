"""Option values the commands share, parsed into what the library takes.

Each parser raises :class:`~workbench.errors.InputError` naming the option and the bad value,
so the command line prints one line and exits with code 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.errors import InputError

#: ``--dtype``'s choices: the compute dtypes an encoder takes (workbench.encoding.models).
DTYPES = ("auto", "float32", "bfloat16", "float16")


def add_dtype(p: argparse.ArgumentParser) -> None:
    """The ``--dtype`` option: the encoder's compute dtype."""
    p.add_argument(
        "--dtype", choices=DTYPES, default="auto",
        help="the model's compute dtype (default auto: bfloat16 on a GPU and on a CPU with "
        "bfloat16 instructions, float32 elsewhere; results are float32 either way)",
    )  # fmt: skip


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


def path_arg(text: str) -> Path:
    """An argparse ``type`` for file and directory options: an empty or blank name is refused
    (``Path("")`` would silently mean the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path: give a file or directory name")
    return Path(text)


def name_or_path_arg(text: str) -> str:
    """An argparse ``type`` for an option that takes a dataset name or a file path: the text
    as given, an empty or blank one refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name: give a dataset name or a file path")
    return text
