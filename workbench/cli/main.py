"""The ``workbench`` command line (also ``python -m workbench``).

Thin: every sub-command lives in a module of :mod:`workbench.cli` that defines
``register(subparsers)``; this module lists them in :data:`COMMANDS`, parses, and turns a
:class:`~workbench.errors.WorkbenchError` (or an ``OSError`` the system raised on a file) into a
clear one-line message and exit code 2 (a bad argument too: :class:`Parser`); a warning is one
line too, ``workbench: warning: ...``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import NoReturn, TextIO

from workbench import __version__
from workbench.cli import (
    cache,
    data,
    embed,
    finetune,
    geometry,
    info,
    model,
    senses,
    settings,
    wsd,
)
from workbench.errors import WorkbenchError

# The sub-commands in the order `workbench --help` lists them.
COMMANDS = (info, embed, model, data, cache, geometry, wsd, senses, finetune, settings)


class Parser(argparse.ArgumentParser):
    """The command line's parser (and every sub-command's): a bad argument is one line,
    ``workbench: error: argument --lr: ...``, and exit code 2, like every other refusal."""

    def error(self, message: str) -> NoReturn:
        """Print the one line and exit with code 2 (argparse's usage block is left out:
        ``--help`` shows it)."""
        self.exit(2, f"workbench: error: {message} (see: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every sub-command of :mod:`workbench.cli`."""

    parser = Parser(
        prog="workbench",
        description="Contextual-embedding analysis workbench.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning as the command line shows it: one line, without the library's source line."""
    print(f"workbench: warning: {message}", file=file or sys.stderr)


def undecodable(argv: list[str]) -> str | None:
    """The first argument that is not valid text (bytes the system could not decode: Python
    holds them as lone surrogates), shown with its bad bytes escaped; None when all are."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            return shown[:80]
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code. An argument that is not valid text is
    refused before parsing (one line, code 2)."""
    bad = undecodable(sys.argv[1:] if argv is None else argv)
    if bad is not None:
        print(f"workbench: error: the argument '{bad}' is not valid UTF-8 text", file=sys.stderr)
        return 2
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a bad argument (one line, code 2)
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    with warnings.catch_warnings():  # restores the caller's way of showing warnings after
        warnings.showwarning = show_warning
        return run(args)


def run(args: argparse.Namespace) -> int:
    """Run the parsed command; the project's errors, the system's file errors and any other
    exception become one line and exit code 2 (``WORKBENCH_TRACEBACK=1``: the traceback of an
    unexpected one)."""
    try:
        return int(args.func(args) or 0)
    except WorkbenchError as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the system refused (permissions, a full disk): one line
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"workbench: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("workbench: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # no check foresaw it: still one line, code 2
        if os.environ.get("WORKBENCH_TRACEBACK"):
            raise
        text = str(exc).strip()
        reason = f": {text.splitlines()[0][:300]}" if text else ""
        print(
            f"workbench: error: {type(exc).__name__}{reason} (unexpected; "
            "WORKBENCH_TRACEBACK=1 shows where: please report it)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
