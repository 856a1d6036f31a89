"""``workbench settings FILE``: what made an exported table or figure (its carried settings)."""

from __future__ import annotations

import argparse
import json

from workbench.cli.options import path_arg
from workbench.errors import InputError
from workbench.fileio import input_problem
from workbench.viz.export import read_settings, settings_fields


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "settings",
        help="the settings an exported table or figure carries (.csv .json .html .png .svg)",
    )
    p.add_argument("file", type=path_arg, help="a table or figure exported by the app or the CLI")
    p.add_argument(
        "--panes",
        action="store_true",
        help="one JSON object per view (a side-by-side figure: each pane)",
    )
    p.set_defaults(func=cmd_settings)


#: The largest file read for its settings (an export with plotly.js inlined is a few MB).
MAX_BYTES = 256 << 20


def cmd_settings(args: argparse.Namespace) -> int:
    if args.file.is_dir():
        raise InputError(f"{args.file} is a directory: give an exported table or figure")
    problem = input_problem(args.file)
    if problem == "does not exist":
        raise InputError(f"{args.file}: no such file")
    if problem is not None:
        raise InputError(f"{args.file} {problem}")
    if args.file.stat().st_size > MAX_BYTES:
        raise InputError(f"{args.file} is too large to be an exported table or figure")
    settings = read_settings(args.file.read_bytes())
    if args.panes:
        for view in settings_fields(settings):
            print(json.dumps(view, sort_keys=True))
    else:
        print(json.dumps(settings, indent=2, sort_keys=True))
    return 0
