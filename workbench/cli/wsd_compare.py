"""``workbench wsd compare A B``: two WSD evaluations side by side.

A and B are saved eval JSONs (``wsd eval --out DIR`` writes ``wsd-ALL.json``), or systems'
names (``biencoder``, ``best``, ``plain``, ``wordnet``: each run here on ``--dataset``, on the
packaged model, as ``wsd eval --system NAME`` would; a JSON and a name may be mixed when the
JSON is of that dataset). Registered by :mod:`workbench.cli.wsd` as one of its actions; thin
over :mod:`workbench.wsd.reporting.compare`: prints the per-dataset and per-split deltas with
paired p-values and the first instances where the two answer differently; ``--out DIR`` writes
the comparison as ``compare.md``, ``.html`` and ``.json`` (every differing instance in the
JSON).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.bounds import COUNT, SEED
from workbench.cli.options import add_overwrite, command_line, name_or_path_arg, number, path_arg
from workbench.cli.wsd_open import open_for_command
from workbench.errors import DataError
from workbench.fileio import input_problem
from workbench.lexicon.wordnet import load_wordnet
from workbench.outputs import claim_files
from workbench.reports.writers import write_report
from workbench.wsd.builds import mfs_counts
from workbench.wsd.evaluate import evaluate_corpus, load_corpus
from workbench.wsd.reporting.compare import (
    SavedEval,
    compare_tables,
    comparison_report,
    delta_table,
    differences_table,
    load_eval,
    saved_of,
)
from workbench.wsd.reporting.document import eval_report, facts_of
from workbench.wsd.reporting.intervals import N_BOOT
from workbench.wsd.reporting.intervals import SEED as DEFAULT_SEED
from workbench.wsd.systems.registry import SYSTEMS

STEM = "compare"


def register(wsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``compare`` to the ``wsd`` actions ``wsub``."""
    c = wsub.add_parser(
        "compare",
        help="two saved eval JSONs or two systems on the same data: deltas per dataset and "
        "split, paired p-values",
    )
    names = ", ".join(SYSTEMS)
    c.add_argument(
        "a",
        type=name_or_path_arg,
        help=f"the first eval JSON (wsd eval --out DIR: wsd-ALL.json), or a system ({names}) "
        "run here on --dataset",
    )
    c.add_argument("b", type=name_or_path_arg, help="the second, likewise, on the same data")
    c.add_argument(
        "--dataset",
        type=name_or_path_arg,
        default="ALL",
        help="the test set a system named as A or B runs on (default ALL)",
    )
    c.add_argument("--out", type=path_arg, default=None, help="write compare.md/.html/.json here")
    add_overwrite(c)
    c.add_argument("--n-boot", type=number(COUNT), default=N_BOOT, help="bootstrap resamples")
    c.add_argument("--seed", type=number(SEED), default=DEFAULT_SEED, help="bootstrap seed")
    c.add_argument(
        "--show", type=number(COUNT), default=20, help="differing instances printed (default 20)"
    )
    c.set_defaults(func=cmd_compare)


def _side(given: str) -> str | Path:
    """A or B as given: a system's name (one of :data:`SYSTEMS`, when no file of that name is
    here), else the path of a saved eval JSON."""
    return given if given in SYSTEMS and not Path(given).exists() else path_arg(given)


def _run(name: str, dataset: str, n_boot: int, seed: int) -> SavedEval:
    """The system ``name`` evaluated on ``dataset`` here, as :func:`load_eval` would read its
    saved report (the baselines scored too; SemCor's MFS when SemCor is here)."""
    print(f"running {name} on {dataset}", file=sys.stderr)
    corpus, wordnet = load_corpus(dataset), load_wordnet()
    opened = open_for_command(name)
    run = evaluate_corpus(opened, corpus, wordnet, mfs_counts())
    config = {"system": name, "dataset": dataset}
    doc = eval_report(run, corpus, wordnet, facts_of(opened, run.index), config, n_boot=n_boot,
                      seed=seed)  # fmt: skip
    return saved_of(doc)


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare two evaluations (saved, or run here) and print (and with ``--out`` write) the
    result."""
    sides = [_side(args.a), _side(args.b)]
    inputs = [side for side in sides if isinstance(side, Path)]
    for path in inputs:
        problem = input_problem(path)
        if problem is not None:
            raise DataError(f"{path} {problem}")
    if args.out is not None:
        names = [args.out / f"{STEM}.{fmt}" for fmt in ("md", "html", "json")]
        claim_files(names, overwrite=args.overwrite, inputs=inputs)
    # saved ones read (and refused if unusable) before a system runs for minutes
    read = {i: load_eval(side) for i, side in enumerate(sides) if isinstance(side, Path)}
    a, b = (
        read[i] if i in read else _run(str(side), args.dataset, int(args.n_boot), int(args.seed))
        for i, side in enumerate(sides)
    )  # fmt: skip
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
