"""``workbench cache``: what the on-disk cache holds, and pruning it.

workbench cache [list] [--verify]      size per area, each embeddings entry, each model export
workbench cache prune [--all] [--older-than DAYS] [--max-size SIZE] [--verify]

Pruning always removes damaged entries and the temporary directories of writers that died;
``--all``, ``--older-than`` and ``--max-size`` (least recently used entries go first) remove
good entries too.
"""

from __future__ import annotations

import argparse
import datetime
import re

from workbench.bounds import NON_NEGATIVE
from workbench.cli.options import number
from workbench.encoding.cache import EmbeddingCache
from workbench.encoding.exported.store import exports_dir, list_exports
from workbench.errors import DataError, InputError, OutputError

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``cache`` command and its actions."""
    p = sub.add_parser("cache", help="the on-disk cache: size, entries, prune")
    p.set_defaults(func=cmd_list, verify=False)
    csub = p.add_subparsers(dest="cache_command", metavar="ACTION")
    listing = csub.add_parser(
        "list", help="size per area, every embeddings entry and model export (default)"
    )
    listing.add_argument(
        "--verify", action="store_true", help="also check every file's checksum (reads it all)"
    )
    listing.set_defaults(func=cmd_list)
    prune = csub.add_parser("prune", help="remove damaged, stale, old or excess entries")
    prune.add_argument("--all", action="store_true", help="remove every embeddings entry")
    prune.add_argument(
        "--older-than",
        type=number(NON_NEGATIVE),
        default=None,
        metavar="DAYS",
        help="unused for DAYS days",
    )
    prune.add_argument(
        "--max-size",
        default=None,
        metavar="SIZE",
        help="keep the most recently used entries within SIZE (e.g. 500M, 20G)",
    )
    prune.add_argument("--verify", action="store_true", help="find damaged entries by checksum too")
    prune.set_defaults(func=cmd_prune)


def parse_size(text: str) -> int:
    """``"20G"`` -> bytes (units B, K, M, G, T, powers of 1024; an optional ``iB`` / ``B``).

    Raises:
        InputError: not a size.
    """
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if match is None:
        raise InputError(f"--max-size {text!r} is not a size such as 500M or 20G")
    return int(float(match[1]) * _UNITS[match[2]])


def human(n: float) -> str:
    """Bytes as a short text: ``1536`` -> ``"1.5 KiB"``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _when(stamp: float) -> str:
    if not stamp:
        return "?"
    return datetime.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def cmd_list(args: argparse.Namespace) -> int:
    """Print the cache dir, the size of each area in it, and every embeddings entry."""
    cache = EmbeddingCache()
    if cache.root.exists() and not cache.root.is_dir():
        raise DataError(f"the cache dir {cache.root} is a file: set WORKBENCH_CACHE to a directory")
    print(f"cache dir: {cache.root}")
    if not cache.root.is_dir():
        print("(empty)")
        return 0
    for area in sorted(p for p in cache.root.iterdir()):
        files = [area] if area.is_file() else [p for p in area.rglob("*") if p.is_file()]
        print(f"  {area.name:<20} {human(sum(f.stat().st_size for f in files)):>10}")
    entries = cache.entries(verify=args.verify)
    stale = cache.stale()
    total = sum(e.bytes for e in entries)
    print(f"embeddings: {len(entries)} entries, {human(total)}; {len(stale)} stale temporaries")
    if entries:
        print(f"  {'key':<32}  {'size':>10}  {'shape':<16}  {'last used':<16}  model")
    for e in entries:
        shape = "x".join(map(str, e.shape)) or "?"
        status = f"  DAMAGED: {e.problem}" if e.problem else ""
        print(
            f"  {e.key}  {human(e.bytes):>10}  {shape:<16}  {_when(e.last_used):<16}  "
            f"{e.model}{status}"
        )
    print_exports()
    return 0


def print_exports() -> None:
    """Every model export (ONNX Runtime's copy of a model, made once per model and dtype) and
    every recorded refusal; removing ``<cache>/onnx`` is safe (each is made again on use)."""
    exports = list_exports()
    print(f"model exports ({exports_dir()}): {len(exports)}")
    for x in exports:
        if x.record is None:
            print(f"  {x.name}  {human(x.bytes):>10}  {x.problem}")
            continue
        r = x.record
        measure = "1 - cosine" if r.dtype == "int8" else "difference"  # against float32 / torch
        print(
            f"  {r.fingerprint}  {r.dtype:<7}  {human(x.bytes):>10}  {r.architecture}, "
            f"{r.n_layers} layers x {r.dim}, {r.parameters / 1e6:.1f}M parameters; probe "
            f"{measure} {r.probe_error:.1e} (at most {r.tolerance:.0e})"
        )


def cmd_prune(args: argparse.Namespace) -> int:
    """Remove stale temporaries, damaged entries and what the options ask for."""
    root = EmbeddingCache().root
    if root.exists() and not root.is_dir():
        raise DataError(f"the cache dir {root} is a file: set WORKBENCH_CACHE to a directory")
    max_bytes = parse_size(args.max_size) if args.max_size is not None else None
    result = EmbeddingCache().prune(
        everything=args.all,
        older_than_days=args.older_than,
        max_bytes=max_bytes,
        verify=args.verify,
    )
    print(
        f"removed {len(result.entries)} entries and {len(result.temporaries)} stale "
        f"temporaries, {human(result.bytes)} of entries"
    )
    if result.failed:
        asked = len(result.failed) + len(result.entries)
        raise OutputError(
            f"could not remove {len(result.failed)} of the {asked} entries to remove from "
            f"{root / 'embeddings'}: {result.reason}"
        )
    return 0
