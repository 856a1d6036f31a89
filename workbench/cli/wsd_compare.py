"""``workbench wsd compare A.json B.json``: two saved WSD evaluations side by side.

Registered by :mod:`workbench.cli.wsd` as one of its actions; thin over
:mod:`workbench.wsd.reporting.compare`: prints the per-dataset and per-split deltas with paired
p-values and the first instances where the two answer differently; ``--out DIR`` writes the
comparison as ``compare.md``, ``.html`` and ``.json`` (every differing instance in the JSON).
"""

from __future__ import annotations

import argparse

from workbench.bounds import COUNT, SEED
from workbench.cli.options import add_overwrite, command_line, number, path_arg
from workbench.errors import DataError
from workbench.fileio import input_problem
from workbench.outputs import claim_files
from workbench.reports.writers import write_report
from workbench.wsd.reporting.compare import (
    compare_tables,
    comparison_report,
    delta_table,
    differences_table,
    load_eval,
)
from workbench.wsd.reporting.intervals import N_BOOT
from workbench.wsd.reporting.intervals import SEED as DEFAULT_SEED

STEM = "compare"


def register(wsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``compare`` to the ``wsd`` actions ``wsub``."""
    c = wsub.add_parser(
        "compare", help="two saved eval JSONs: deltas per dataset and split, paired p-values"
    )
    c.add_argument(
        "a", type=path_arg, help="the first eval JSON (wsd eval --out DIR: wsd-ALL.json)"
    )
    c.add_argument("b", type=path_arg, help="the second eval JSON, on the same data")
    c.add_argument("--out", type=path_arg, default=None, help="write compare.md/.html/.json here")
    add_overwrite(c)
    c.add_argument("--n-boot", type=number(COUNT), default=N_BOOT, help="bootstrap resamples")
    c.add_argument("--seed", type=number(SEED), default=DEFAULT_SEED, help="bootstrap seed")
    c.add_argument(
        "--show", type=number(COUNT), default=20, help="differing instances printed (default 20)"
    )
    c.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare two saved evaluations and print (and with ``--out`` write) the result."""
    for path in (args.a, args.b):
        problem = input_problem(path)
        if problem is not None:
            raise DataError(f"{path} {problem}")
    if args.out is not None:
        names = [args.out / f"{STEM}.{fmt}" for fmt in ("md", "html", "json")]
        claim_files(names, overwrite=args.overwrite, inputs=[args.a, args.b])
    a, b = load_eval(args.a), load_eval(args.b)
    cmp = compare_tables(a.table, b.table, a.corpus, int(args.n_boot), int(args.seed))
    print(f"A: {a.title}\nB: {b.title}")
    print(delta_table(cmp).to_markdown())
    print(differences_table(cmp, int(args.show)).to_markdown())
    if args.out is not None:
        command = command_line(args, ["wsd", "compare"], ["a", "b"])
        paths = write_report(comparison_report(cmp, a, b, command), args.out, STEM,
                             overwrite=args.overwrite)  # fmt: skip
        print(f"report: {paths['html']}")
    return 0
