"""``workbench finetune {seqcls,pair,token,mlm,wsd,builtin,compare}``.

Examples::

    workbench finetune pair --train train.csv --dev dev.csv --out runs/pair
    workbench finetune pair --builtin wic --max-train 4000 --max-dev 1000 --baselines --out runs/wic
    workbench finetune token --builtin supersense --epochs 3 --baselines --out runs/sst
    workbench finetune pair --builtin wordnet-wic --max-train 2000 --out runs/wn-wic  # offline
    workbench finetune mlm --train domain.txt --dev held_out.txt --whole-word-mask --out runs/mlm
    workbench finetune wsd --builtin semcor --head-pooling mean --out runs/wsd   # bi-encoder WSD
    workbench finetune wsd --train semcor --dev semeval2007 --test ALL --out runs/wsd
    workbench finetune wsd --builtin semcor --top-layers 2 --then-frozen 8000 --out runs/wsd2
    workbench finetune builtin wic --out data/wic          # export the built-in data as files
    workbench finetune builtin wordnet-supersense --out data/wn-sst   # (no WSD data needed)
    workbench finetune compare BASE runs/wic --out reports/wic-compare
    workbench finetune wsd-index runs/wsd      # every WordNet gloss into its gloss cache

Multi-GPU: ``accelerate launch -m workbench finetune pair ...`` (or ``torchrun -m workbench
finetune ...``) runs the same command data-parallel; ``--batch-size`` is per process.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from workbench.bounds import COUNT, POSITIVE, SEED
from workbench.cli.options import (
    add_device,
    add_overwrite,
    command_line,
    home_expanded,
    number,
    path_arg,
)
from workbench.cli.stop_signals import stop_on_signals
from workbench.corpora.datasets import load_dataset
from workbench.errors import InputError, OutputError
from workbench.finetune.data.readers import TaggedSentence
from workbench.finetune.data.splits import (
    BUILTINS,
    OFFLINE_BUILTINS,
    TaskData,
    builtin_data,
    file_data,
    redraw,
)
from workbench.finetune.data.supersense import write_conll
from workbench.finetune.data.wic import build_wic, write_jsonl
from workbench.finetune.data.wordnet_tasks import build_wordnet_wic
from workbench.finetune.evaluation.compare import compare_models
from workbench.finetune.evaluation.compare_senses import SENSE_LEMMAS
from workbench.finetune.runs import is_main_process, summary, train_with_baselines
from workbench.finetune.tasks.kind import TaskKind
from workbench.finetune.tasks.registry import TASKS, check_start
from workbench.finetune.tasks.wsd.finish import cache_all_glosses, refit_pos_probe
from workbench.finetune.tasks.wsd.stages import check_stages, train_then_frozen
from workbench.finetune.training.config import TrainConfig, option_fields
from workbench.finetune.training.stopping import StopRequest
from workbench.finetune.training.store import check_output
from workbench.outputs import claim_file
from workbench.reports.writers import FORMATS
from workbench.wsd.biencoder import biencoder_dir
from workbench.wsd.pos_probe import PROBE_FILE


def _add_fields(group: argparse._ArgumentGroup, options: Any) -> None:
    """One flag per option field of the dataclass ``options``: its help, default, type
    (a number within its bound) and choices, all read off the field."""
    for f in option_fields(options):
        flag = "--" + f.name.replace("_", "-")
        help_text = f.metadata["help"]
        if isinstance(f.default, bool):
            group.add_argument(flag, action="store_true", help=help_text)
            continue
        bound = f.metadata["bound"]
        group.add_argument(
            flag,
            type=number(bound) if bound else str,
            default=f.default,
            choices=f.metadata["choices"],
            help=f"{help_text} (default: {f.default})",
        )


class _OtherTasksOption(argparse.Action):
    """A flag of another task's options given to this task: at that option's default it is
    let through (it changes nothing, as in the command a card records of a run made when every
    task took every flag); at any other value refused by name (it would change nothing), not
    as an unknown argument."""

    def __init__(self, owners: list[str], kind: str, defaults: list[Any], **kwargs: Any) -> None:
        self.owners, self.kind, self.defaults = owners, kind, defaults
        super().__init__(**kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: ANN001
        given = True if self.nargs == 0 else values
        if given in self.defaults:
            return
        owners = self.owners
        tasks = (
            " and ".join(owners)
            if len(owners) < 3
            else f"{', '.join(owners[:-1])} and {owners[-1]}"
        )
        raise argparse.ArgumentError(
            self,
            f"an option of the {tasks} task{'s' if len(owners) > 1 else ''}, not of "
            f"{self.kind}: it would change nothing. Leave it out.",
        )


def _add_options(p: argparse.ArgumentParser, kind: TaskKind) -> None:
    """The loop's options (:class:`TrainConfig`) and the task's own (its ``Options``), each
    a group of flags made from the dataclass; the other tasks' flags, hidden, are let through
    at their defaults and refused by name at any other value (:class:`_OtherTasksOption`)."""
    _add_fields(p.add_argument_group("training options"), TrainConfig)
    own = kind.task.Options
    if option_fields(own):
        _add_fields(p.add_argument_group(f"{kind.name} options"), own)
    names = {f.name for f in option_fields(own)}
    others: dict[str, list[tuple[str, Any]]] = {}  # flag -> (task, its field) of other tasks
    for other in TASKS.values():
        for f in option_fields(other.task.Options):
            if f.name not in names:
                others.setdefault(f.name, []).append((other.name, f))
    for name, owned in others.items():
        f = owned[0][1]
        bound = f.metadata["bound"]
        convert: dict[str, Any] = {}  # a flag's value read as the option reads it
        if not isinstance(f.default, bool):
            convert["type"] = number(bound) if bound else str
        p.add_argument(
            "--" + name.replace("_", "-"),
            action=_OtherTasksOption,
            owners=list(dict.fromkeys(task for task, _ in owned)),
            kind=kind.name,
            defaults=[g.default for _, g in owned],
            nargs=0 if isinstance(f.default, bool) else None,
            **convert,
            dest=f"other_{name}",
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )


def _add_task(sub, kind: TaskKind) -> None:
    p = sub.add_parser(kind.name, help=kind.help, description=kind.help)
    src = p.add_argument_group("data")
    src.add_argument("--train", type=path_arg, help="training file")
    src.add_argument("--dev", type=path_arg, help="dev file (model selection, early stopping)")
    src.add_argument("--test", type=path_arg, help="test file, scored once with the selected model")
    builtins = [name for name, of in BUILTINS.items() if of == kind.name]
    if builtins:
        offline = [b for b in builtins if b in OFFLINE_BUILTINS]
        src.add_argument(
            "--builtin",
            choices=builtins,
            help=f"use the built-in {' or '.join(repr(b) for b in builtins)} task instead of "
            "files: made from SemCor"
            + (" (train: SemCor, dev: SemEval-2007, test: ALL)" if kind.name == "wsd" else "")
            + (
                f", or {' or '.join(repr(b) for b in offline)} from WordNet's usage examples "
                "(no WSD data needed)"
                if offline
                else ""
            ),
        )
        src.add_argument("--data-dir", type=path_arg, default=None, help="WSD data dir (SemCor)")
    if kind.example is TaggedSentence:
        src.add_argument(
            "--repair-bio",
            action="store_true",
            help="read an I-X that continues no X entity as B-X (default: error)",
        )
    for split in ("train", "dev", "test"):
        src.add_argument(
            f"--max-{split}",
            type=number(COUNT),
            default=None,
            help=f"use at most N {split} examples (size CPU runs)",
        )
    p.add_argument(
        "--model",
        type=home_expanded,
        default=None,
        help="base model: HF id or dir (default: MiniLM)",
    )
    p.add_argument("--out", type=path_arg, required=True, help="model directory to write")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the model in OUT (once the new one is complete), or start an unfinished "
        "run there again; a folder the workbench did not make is never used",
    )
    p.add_argument("--keep-checkpoint", action="store_true", help="keep OUT/checkpoint at the end")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    if kind.baselines:
        p.add_argument(
            "--baselines",
            action="store_true",
            help="also score the majority class and logistic-regression probes on "
            "the frozen base model (written into the training card)",
        )
    if kind.name == "wsd":
        _add_second_stage(p)
    _add_options(p, kind)
    p.set_defaults(func=cmd_train, kind=kind.name)


def _add_second_stage(p: argparse.ArgumentParser) -> None:
    stage = p.add_argument_group("a second stage, in the same command")
    stage.add_argument(
        "--then-frozen",
        type=number(COUNT),
        default=None,
        metavar="N",
        help="after the run the other options describe (trained into OUT.first-stage), train its "
        "context tower alone on N training sentences drawn again (the next seed; more than the "
        "data holds: all of it), the gloss tower frozen at the first stage's weights, into OUT; "
        "--max-minutes covers both stages and --resume goes on in either",
    )
    stage.add_argument(
        "--then-lr",
        type=number(POSITIVE),
        default=3e-5,
        help="the second stage's learning rate (default: 3e-05)",
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "finetune",
        help="fine-tune an encoder; compare before/after",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tsub = p.add_subparsers(dest="finetune_command", metavar="TASK", required=True)
    for kind in TASKS.values():
        _add_task(tsub, kind)
    b = tsub.add_parser("builtin", help="write a built-in task's splits as files")
    b.add_argument("name", choices=list(BUILTINS))
    b.add_argument("--out", type=path_arg, required=True, help="directory for train/dev/test files")
    b.add_argument("--data-dir", type=path_arg, default=None, help="WSD data dir (SemCor)")
    b.add_argument("--seed", type=number(SEED), default=0)
    add_overwrite(b)
    b.set_defaults(func=cmd_builtin)
    c = tsub.add_parser("compare", help="geometry report + WSD layer sweep, base vs fine-tuned")
    c.add_argument(
        "base",
        type=home_expanded,
        help="base model (HF id or dir; 'default' for the packaged MiniLM)",
    )
    c.add_argument("tuned", type=home_expanded, help="fine-tuned model directory")
    c.add_argument("--out", type=path_arg, required=True, help="report directory")
    add_overwrite(c)
    add_device(c, None)
    c.add_argument(
        "--max-sentences",
        type=number(COUNT),
        default=None,
        help="sentences of each corpus to use (size CPU runs)",
    )
    c.add_argument(
        "--lemmas",
        default=",".join(SENSE_LEMMAS),
        help="comma-separated words whose occurrences are pictured side by side (UMAP, sense "
        f"separation per layer); '' for none (default: {','.join(SENSE_LEMMAS)})",
    )
    c.set_defaults(func=cmd_compare)
    x = tsub.add_parser(
        "wsd-index",
        help="encode every WordNet gloss with a WSD bi-encoder's gloss encoder, into its cache",
        description="Encode the gloss of every WordNet 3.0 synset with the trained gloss encoder "
        "of a `workbench finetune wsd` model directory (or the shipped bi-encoder: 'default') "
        "into the gloss cache, so that nearest-sense search over all of WordNet answers at once "
        "(answers for single words encode the glosses they need by themselves).",
    )
    x.add_argument(
        "model",
        type=home_expanded,
        help="the model directory, or 'default' for the shipped bi-encoder",
    )
    add_device(x)
    x.set_defaults(func=cmd_wsd_index)
    q = tsub.add_parser(
        "wsd-probe",
        help="fit a WSD bi-encoder's POS probe on SemCor (what it asks when no POS is given)",
        description="Fit the linear probe that reads a word's POS off the context vector of a "
        "`workbench finetune wsd` model directory, on a seeded sample of SemCor's annotated words "
        "(training does this itself; this is for a directory trained without it), and report "
        "its accuracy on ALL.",
    )
    q.add_argument("model", type=path_arg, help="the bi-encoder's model directory")
    add_device(q)
    q.add_argument("--seed", type=number(SEED), default=0)
    q.set_defaults(func=cmd_wsd_probe)


def _config(args: argparse.Namespace) -> TrainConfig:
    """The run's options from the flags :func:`_add_options` made."""
    own = TASKS[args.kind].task.Options
    task = own(**{f.name: getattr(args, f.name) for f in option_fields(own)})
    common = {f.name: getattr(args, f.name) for f in option_fields(TrainConfig)}
    return TrainConfig(**common, task=task)


def _data(args: argparse.Namespace) -> TaskData:
    limits = (args.max_train, args.max_dev, args.max_test)
    builtin = getattr(args, "builtin", None)
    if builtin:
        if args.train or args.dev or args.test:
            raise InputError("Give either --builtin or --train/--dev/--test files, not both.")
        return builtin_data(builtin, args.data_dir, seed=args.seed, limits=limits)
    if args.train is None:
        raise InputError(f"finetune {args.kind}: --train FILE is required (or --builtin).")
    return file_data(
        args.kind, args.train, args.dev, args.test, getattr(args, "repair_bio", False), limits
    )


def _more_data(args: argparse.Namespace, data: TaskData) -> TaskData:
    """The second stage's data: ``--then-frozen`` training sentences drawn with the next seed
    from the whole training data (the built-in task's, or the training file's); ``data``'s dev
    and test."""
    seed, n = args.seed + 1, args.then_frozen
    if args.builtin:
        limits = (n, args.max_dev, args.max_test)
        return builtin_data(args.builtin, args.data_dir, seed=seed, limits=limits)
    train = redraw(file_data(args.kind, args.train).train, seed, n)
    return TaskData(train, data.dev, data.test, {})


def cmd_stages(args: argparse.Namespace, cfg: TrainConfig) -> int:
    """``workbench finetune wsd --then-frozen N``: :func:`train_then_frozen`."""
    check_stages(args.out, args.resume, args.overwrite)  # both folders, nothing made yet
    data = _data(args)
    with stop_on_signals() as stop:
        result = train_then_frozen(
            data,
            _more_data(args, data),
            cfg,
            args.out,
            model=args.model,
            lr=args.then_lr,
            **_run_options(args, stop),
        )
    print(summary({**result.card, "output": str(result.output)}))
    if result.stopped:
        print(f"{result.stopped}: the same command with --resume goes on from there.")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    cfg = _config(args)
    check_start(args.kind, cfg, args.model)  # before the data is read
    if getattr(args, "then_frozen", None):
        return cmd_stages(args, cfg)
    check_output(args.out, args.resume, args.overwrite)  # and the output, nothing made yet
    data = _data(args)
    with stop_on_signals() as stop:
        card = train_with_baselines(
            args.kind,
            data,
            cfg,
            args.out,
            model=args.model,
            baselines=getattr(args, "baselines", False),
            **_run_options(args, stop),
        )
    if not is_main_process():  # other processes of a multi-GPU launch
        return 0
    print(summary({**card, "output": str(args.out)}))
    return 0


def _run_options(args: argparse.Namespace, stop: StopRequest) -> dict[str, Any]:
    """What every training command passes its run: resuming, overwriting, the progress bar,
    the checkpoint kept, its command line for the card, and the request to stop."""
    return {
        "resume": args.resume,
        "overwrite": args.overwrite,
        "progress": not args.no_progress,
        "keep_checkpoint": args.keep_checkpoint,
        "card_extra": {"command": _rerun(args)},
        "stop": stop,
    }


def _rerun(args: argparse.Namespace) -> str:
    """The command line of a training run, every option spelled out (for its card)."""
    options = argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "kind"})
    return command_line(options, ["finetune", args.kind])


def cmd_builtin(args: argparse.Namespace) -> int:
    if BUILTINS[args.name] == "wsd":
        raise InputError(
            f"The '{args.name}' built-in task reads the framework's own files: train with "
            "`workbench finetune wsd --builtin semcor` or --train/--dev/--test naming them."
        )
    pairs = BUILTINS[args.name] == "pair"
    suffix = ".jsonl" if pairs else ".conll"
    if args.out.exists() and not args.out.is_dir():
        raise OutputError(f"--out {args.out} is a file: give a directory for the splits")
    for split in ("train", "dev", "test"):  # before any work, nothing made
        claim_file(args.out / f"{split}{suffix}", overwrite=args.overwrite)
    if pairs:
        splits = (
            build_wordnet_wic(seed=args.seed)
            if args.name == "wordnet-wic"
            else build_wic(load_dataset("semcor", args.data_dir), seed=args.seed)
        )
        for split in ("train", "dev", "test"):
            path = write_jsonl(splits.pairs(split), args.out / f"{split}.jsonl", args.overwrite)
            print(f"{path}: {len(splits.pairs(split))} pairs")
        return 0

    data = builtin_data(args.name, args.data_dir, seed=args.seed)
    for split, part in (("train", data.train), ("dev", data.dev), ("test", data.test)):
        if part is None:
            continue
        path = write_conll(part.examples, args.out / f"{split}.conll", args.overwrite)
        print(f"{path}: {len(part.examples)} sentences")
    return 0


def cmd_wsd_probe(args: argparse.Namespace) -> int:
    facts = refit_pos_probe(args.model, device=args.device, seed=args.seed)
    print(f"{args.model / PROBE_FILE}: fitted on {facts['instances']:,} words of "
          f"{facts['sentences']:,} SemCor sentences at layer {facts['layers']}; POS accuracy "
          f"on ALL {100 * facts['test_accuracy']:.1f}%")  # fmt: skip
    return 0


def cmd_wsd_index(args: argparse.Namespace) -> int:
    directory = biencoder_dir(None if args.model == "default" else args.model)
    if directory is None:
        raise InputError(f"{args.model} is not a WSD bi-encoder directory.")
    n = cache_all_glosses(directory, device=args.device)
    print(f"{directory}: the glosses of {n:,} senses are in the gloss cache")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    base = None if args.base == "default" else args.base
    lemmas = tuple(w.strip() for w in args.lemmas.split(",") if w.strip())
    if args.out.exists() and not args.out.is_dir():
        raise OutputError(f"--out {args.out} is a file: give a directory for the report")
    for fmt in FORMATS:  # before any work, nothing made
        claim_file(args.out / f"compare.{fmt}", overwrite=args.overwrite)
    command = "workbench finetune compare " + " ".join(
        [args.base, args.tuned, "--out", str(args.out)]
        + (["--max-sentences", str(args.max_sentences)] if args.max_sentences else [])
        + ["--lemmas", ",".join(lemmas)]
    )
    path = compare_models(
        base,
        args.tuned,
        args.out,
        device=args.device,
        max_sentences=args.max_sentences,
        command=command,
        progress=lambda m: print(m, file=sys.stderr, flush=True),
        lemmas=lemmas,
        overwrite=args.overwrite,
    )
    print(f"comparison report: {path}")
    return 0
