"""The ``workbench`` command line (also ``python -m workbench``).

Thin: every sub-command lives in a module of :mod:`workbench.commands` that defines
``register(subparsers)``; this module only discovers them, parses, and turns a
:class:`~workbench.errors.WorkbenchError` into a clear one-line message and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from workbench import __version__
from workbench.errors import WorkbenchError


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every sub-command of :mod:`workbench.commands`."""
    import workbench.commands as commands

    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Contextual-embedding analysis workbench.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"workbench.commands.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except WorkbenchError as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("workbench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
