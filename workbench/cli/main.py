"""The ``workbench`` command line (also ``python -m workbench``).

Thin: every sub-command lives in a module of :mod:`workbench.cli` that defines
``register(subparsers)``; this module lists them in :data:`COMMANDS` (name, module, one line of
help), imports only the module of the command being run (``workbench --help`` imports none, so
no command pays for another's libraries: the training stack is imported by ``finetune`` alone),
parses, and turns a
:class:`~workbench.errors.WorkbenchError` (or an ``OSError`` the system raised on a file) into a
clear one-line message and exit code 2 (a bad argument too: :class:`Parser`); a warning is one
line too, ``workbench: warning: ...``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from types import ModuleType
from typing import NoReturn, TextIO

from workbench import __version__
from workbench.cli.entry import interrupted
from workbench.cli.options import apply_backend
from workbench.errors import WorkbenchError

#: The sub-commands in the order `workbench --help` lists them: name, module, one line of help
#: (each module's own ``register`` gives the same line to its parser).
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("info", "workbench.cli.info", "device, model facts, cache dir"),
    ("embed", "workbench.cli.embed",
     "layerwise word vectors of a text file or a WSD-framework XML corpus"),
    ("model", "workbench.cli.model", "extra models"),
    ("data", "workbench.cli.data", "download, verify and list the WSD data"),
    ("cache", "workbench.cli.cache", "the on-disk cache: size, entries, prune"),
    ("geometry", "workbench.cli.geometry",
     "anisotropy, self-similarity and rogue dimensions per layer, raw and corrected"),
    ("wsd", "workbench.cli.wsd", "word sense disambiguation: train, eval, layers, ..."),
    ("senses", "workbench.cli.senses",
     "sense separation per layer and sense maps of a word's occurrences"),
    ("finetune", "workbench.cli.finetune", "fine-tune an encoder; compare before/after"),
    ("settings", "workbench.cli.settings",
     "the settings an exported table or figure carries (.csv .json .html .png .svg)"),
)  # fmt: skip


def command_module(name: str) -> ModuleType:
    """The module of sub-command ``name`` (of :data:`COMMANDS`), imported now."""
    module = next(m for n, m, _ in COMMANDS if n == name)
    return importlib.import_module(module)


class Parser(argparse.ArgumentParser):
    """The command line's parser (and every sub-command's): a bad argument is one line,
    ``workbench: error: argument --lr: ...``, and exit code 2, like every other refusal."""

    def error(self, message: str) -> NoReturn:
        """Print the one line and exit with code 2 (argparse's usage block is left out:
        ``--help`` shows it)."""
        self.exit(2, f"workbench: error: {message} (see: {self.prog} --help)\n")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser. Every sub-command is fully registered (its module imported) unless ``argv``
    is given: then only the command it names, the others by name and help line alone."""

    parser = Parser(
        prog="workbench",
        description="Contextual-embedding analysis workbench.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = None if argv is None else next((a for a in argv if not a.startswith("-")), "")
    for name, _, help_text in COMMANDS:
        if named is None or name == named:
            command_module(name).register(sub)
        else:
            sub.add_parser(name, help=help_text)
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
    refused before parsing (one line, code 2); Ctrl-C at any moment, while a command's
    modules are imported too, is one line and code 130 (the script starts in
    :func:`workbench.cli.entry.entry`, which covers the import of this module)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return interrupted()


def _main(argv: list[str] | None) -> int:
    bad = undecodable(sys.argv[1:] if argv is None else argv)
    if bad is not None:
        print(f"workbench: error: the argument '{bad}' is not valid UTF-8 text", file=sys.stderr)
        return 2
    given = sys.argv[1:] if argv is None else argv
    parser = build_parser(given)
    try:
        args = parser.parse_args(given)
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
        with apply_backend(args):
            return int(args.func(args) or 0)
    except WorkbenchError as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the system refused (permissions, a full disk): one line
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"workbench: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupted()
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
