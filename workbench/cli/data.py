"""``workbench data``: download, verify and list the WSD evaluation data.

workbench data download [--url URL] [--dest DIR] [--sha256 DIGEST]
workbench data verify [DIR]
workbench data list
"""

from __future__ import annotations

import argparse
import sys

from workbench.cli.options import path_arg
from workbench.corpora import datasets
from workbench.errors import DataError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``data`` command and its sub-commands."""
    parser = subparsers.add_parser("data", help="download, verify and list the WSD data")
    sub = parser.add_subparsers(dest="data_command", metavar="ACTION", required=True)

    down = sub.add_parser("download", help="fetch and unpack the evaluation framework archive")
    down.add_argument(
        "--url", default=datasets.DEFAULT_URL, help="archive URL (default: %(default)s)"
    )
    down.add_argument(
        "--dest", type=path_arg, default=None, help="target dir (default: user data dir)"
    )
    down.add_argument(
        "--sha256",
        default=None,
        metavar="DIGEST",
        help="the SHA-256 of another copy of the archive, which is then taken when its digest "
        "matches (default: the archive's evaluation files must be the published ones)",
    )
    down.add_argument("--quiet", action="store_true", help="no progress output")
    down.set_defaults(func=run_download)

    verify = sub.add_parser("verify", help="check files, parse every dataset, print counts")
    verify.add_argument(
        "dir", nargs="?", type=path_arg, default=None, help="data dir (default: found)"
    )
    verify.set_defaults(func=run_verify)

    listing = sub.add_parser("list", help="datasets found and where")
    listing.set_defaults(func=run_list)


def run_download(args: argparse.Namespace) -> int:
    printer = None if args.quiet else datasets.progress_printer()
    shown = []

    def progress(done: int, total: int | None) -> None:
        shown.append(True)
        if printer is not None:
            printer(done, total)

    try:
        final = datasets.download(args.url, args.dest, progress, sha256=args.sha256)
    finally:
        if printer is not None and shown:
            print(file=sys.stderr)  # the progress line ends; an error starts its own
    print(f"WSD data unpacked into {final}")
    root = final.parent
    print(f"verify it with: workbench data verify {root}")
    return 0


def _row(c: datasets.DatasetCheck) -> str:
    if c.error:
        return f"{c.name:<12} ERROR: {c.error}"
    expected = datasets.PUBLISHED_INSTANCES.get(c.name)
    status = "ok" if c.matches_published else f"expected {expected:,} instances"
    counts = f"{c.sentences:>10,} {c.tokens:>9,} {c.instances:>10,} {c.gold_keys:>10,}"
    return f"{c.name:<12} {counts}  {status}"


def _table(checks: list[datasets.DatasetCheck]) -> str:
    head = f"{'dataset':<12} {'sentences':>10} {'tokens':>9} {'instances':>10} {'gold keys':>10}"
    return "\n".join([head, *(_row(c) for c in checks)])


def run_verify(args: argparse.Namespace) -> int:
    root = args.dir if args.dir is not None else datasets.data_dir()
    if not (root / datasets.FRAMEWORK_DIR).is_dir():
        raise DataError(f"{root}: no {datasets.FRAMEWORK_DIR}/ there")
    checks = [datasets.check_dataset(name, root) for name in datasets.DATASETS]
    print(f"data dir: {root}")
    print(_table(checks))
    failed = [c.name for c in checks if c.error or not c.matches_published]
    sums = datasets.check_sums(root)
    if sums is None:
        print("SHA256SUMS: none (checksums not checked)")
    else:
        print(
            f"SHA256SUMS: {len(sums.checked)} checked, {len(sums.failed)} failed, "
            f"{len(sums.missing)} missing"
        )
        for rel in sums.failed:
            print(f"  checksum mismatch: {rel}")
        for rel in sums.missing:
            print(f"  missing: {rel}")
    if failed or (sums is not None and (sums.failed or sums.missing)):
        print("verify: FAILED")
        return 1
    print("verify: OK")
    return 0


def run_list(args: argparse.Namespace) -> int:
    root = datasets.data_dir(required=False)
    found = datasets.available_datasets(root)
    print(f"data dir: {root}")
    if not found:
        print("no datasets found: run `workbench data download` or set WORKBENCH_DATA")
        return 1
    for name in datasets.DATASETS:
        print(f"{name:<12} {found.get(name, '(missing)')}")
    return 0
