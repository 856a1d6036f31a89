"""``workbench wsd train | eval | layers | disambiguate | score``: nearest-sense WSD.

Thin over :mod:`workbench.wsd.systems` (each command that answers with a system opens it with
one call, :func:`_open`), :mod:`workbench.wsd.evaluate`, :mod:`workbench.wsd.report` and
:mod:`workbench.wsd.disambiguate`. Encodings go through the on-disk cache, so a second ``eval``
or ``layers`` run only does array work.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from workbench.bounds import COUNT, NON_NEGATIVE, Bound
from workbench.cli import wsd_compare
from workbench.cli.options import (
    add_former_name,
    add_model_options,
    add_overwrite,
    command_line,
    name_or_path_arg,
    number,
    path_arg,
)
from workbench.cli.wsd_open import open_for_command
from workbench.corpora.datasets import corpus_files
from workbench.corpora.wordnet_examples import split_examples
from workbench.encoding.encoder import Encoder
from workbench.errors import DataError, InputError, OutputError
from workbench.fileio import check_writable, input_problem
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.lexicon.wordnet import POS_TAGS, load_wordnet
from workbench.outputs import claim_file, claim_files
from workbench.reports.writers import write_text_atomic
from workbench.wsd.baselines import SenseCounts
from workbench.wsd.builds import mfs_counts, train_output_path
from workbench.wsd.config import GLOSS_COMBINATIONS, GLOSS_POOLINGS, EncoderInfo
from workbench.wsd.disambiguate import disambiguate
from workbench.wsd.evaluate import (
    Stage,
    default_specs,
    evaluate_corpus,
    layer_sweep,
    load_corpus,
    sweep_configs,
)
from workbench.wsd.levers import LEVERS_FILE, TestTimeLevers
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.predict import MAX_CONTEXT, encode_instances
from workbench.wsd.presets import system_note, system_of
from workbench.wsd.report import (
    answers_name,
    evaluation_report,
    report_names,
    sweep_table,
    write_answers,
    write_json,
    write_wsd_report,
)
from workbench.wsd.reporting.document import eval_report, system_facts
from workbench.wsd.reporting.files import (
    json_text,
    report_files,
    report_json,
    write_eval_report,
)
from workbench.wsd.reporting.links import APP_URL, check_app_url
from workbench.wsd.scoring import format_table, scorer_output
from workbench.wsd.store import check_index_output, save_index
from workbench.wsd.systems.registry import DEFAULT_SYSTEM, SYSTEMS, get_system
from workbench.wsd.vectors import LEVELS


def _app_url(text: str) -> str:
    try:
        return check_app_url(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _system_arg(p: argparse.ArgumentParser) -> None:
    """The ``--system`` option: its choices and help read from the registry of systems
    (:data:`~workbench.wsd.systems.registry.SYSTEMS`)."""
    p.add_argument(
        "--system",
        choices=tuple(SYSTEMS),
        default=None,  # DEFAULT_SYSTEM where none is given: refused beside a saved --index
        help=system_help(),
    )


def _either(names: Sequence[str]) -> str:
    """``a, b or c``."""
    return " or ".join(filter(None, [", ".join(names[:-1]), *names[-1:]]))


def system_help() -> str:
    """``--system``'s help: each system of the registry with its help, then which of them the
    index options change."""
    systems = _either([f"{name} ({system.help})" for name, system in SYSTEMS.items()])
    settable = _either([name for name, system in SYSTEMS.items() if not system.is_biencoder])
    return f"{systems}. The index options below change single settings of {settable}."


def _lever_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--smoothing", type=number(NON_NEGATIVE), default=None, metavar="LAMBDA",
        help="bi-encoder: add LAMBDA times the mean score of each candidate's WordNet "
        "neighbours (hypernyms, hyponyms, similar-to, verb group) against the same context "
        f"(default: the bi-encoder folder's own, in its {LEVERS_FILE}: 0.25 for the shipped one; "
        "0: off)",
    )  # fmt: skip
    p.add_argument(
        "--prior", type=number(NON_NEGATIVE), default=None, metavar="LAMBDA",
        help="bi-encoder: add LAMBDA * log p(sense | lemma) from SemCor's counts, add-one "
        f"smoothed (default: the folder's own, in its {LEVERS_FILE}: 0 for the shipped one; "
        "it costs zero-shot senses)",
    )  # fmt: skip


def _levers(args) -> TestTimeLevers | None:
    """The test-time levers given on the command line (None: none given; a lever not given is
    the bi-encoder folder's own)."""
    given = {k: getattr(args, k, None) for k in ("smoothing", "prior")}
    if all(v is None for v in given.values()):
        return None
    return TestTimeLevers(**given)


def _index_args(p: argparse.ArgumentParser) -> None:
    _system_arg(p)
    p.add_argument("--layers", default=None, help="layer spec: 6, -1, last4-sum, 3,4,5 ...")
    p.add_argument(
        "--correction",
        default=None,
        help=f"correction fitted on the training vectors: {'|'.join(CORRECTION_LABELS)}",
    )
    add_former_name(p, "--postprocess", "--correction")
    p.add_argument("--propagate", choices=LEVELS, default=None, help="LMMS propagation level")
    p.add_argument(
        "--gloss",
        choices=GLOSS_COMBINATIONS,
        default=None,
        help="gloss vectors: none, concat (with the centroids) or only (--train wordnet)",
    )
    p.add_argument(
        "--gloss-weight", type=number(NON_NEGATIVE), default=None, help="weight of the gloss cosine"
    )
    p.add_argument(
        "--gloss-pooling",
        choices=GLOSS_POOLINGS,
        default=None,
        help="gloss vector: mean of the definition's words (with the usage examples), the "
        "lemma's own vector, or (trained) the vectors of a WSD bi-encoder's own gloss encoder, "
        "for --gloss concat on a model trained by `workbench finetune wsd`",
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("wsd", help="word sense disambiguation: train, eval, layers, ...")
    wsub = p.add_subparsers(dest="wsd_command", metavar="ACTION", required=True)

    t = wsub.add_parser("train", help="build and save a sense index")
    t.add_argument(
        "--corpus",
        type=name_or_path_arg,
        default="semcor",
        help="semcor | wordnet | a *.data.xml path; semcor+examples (or PATH+examples): with "
        "WordNet's usage examples added",
    )
    t.add_argument(
        "--gold", type=path_arg, default=None, help="gold key file of --corpus (if a path)"
    )
    t.add_argument(
        "--out", type=path_arg, default=None,
        help="index directory (default: cache): a new or empty one, or a workbench index, "
        "which is replaced whole",
    )  # fmt: skip
    add_model_options(t)
    _index_args(t)
    t.set_defaults(func=cmd_train)

    e = wsub.add_parser("eval", help="evaluate on the framework's datasets")
    e.add_argument("datasets", nargs="*", default=[], help="dataset names (default: ALL)")
    e.add_argument(
        "--data", type=name_or_path_arg, default=None, help="a *.data.xml file to evaluate instead"
    )
    e.add_argument("--gold", type=path_arg, default=None, help="its gold key file")
    e.add_argument("--index", type=path_arg, default=None, help="a saved index (else: train)")
    e.add_argument(
        "--train", type=name_or_path_arg, default=None,
        help="training corpus when no --index: semcor, wordnet, a *.data.xml path, or "
        "semcor+examples (or PATH+examples: with WordNet's usage examples added) (default: "
        "semcor when it is here, else wordnet)",
    )  # fmt: skip
    e.add_argument("--out", type=path_arg, default=None, help="write reports and key files here")
    e.add_argument("--json", type=path_arg, default=None, help="write the JSON report here")
    add_overwrite(e)
    e.add_argument("--no-baselines", action="store_true", help="skip the baselines")
    e.add_argument("--threads", type=number(COUNT), default=1, help="FAISS threads (default 1)")
    e.add_argument(
        "--sweep", action="store_true", help="add the per-layer sweep (raw vs z-scored) to reports"
    )
    e.add_argument(
        "--context", type=number(Bound(low=0, high=MAX_CONTEXT, integer=True)), default=0,
        metavar="N",
        help="read each instance with N sentences of its document before and after its own "
        "(the framework's sets keep their documents; default 0: the sentence alone)",
    )  # fmt: skip
    e.add_argument(
        "--app-url", type=_app_url, default=APP_URL,
        help=f"the app's address, for the reports' links that open an error on its WSD page "
        f"(default {APP_URL})",
    )  # fmt: skip
    add_model_options(e)
    _index_args(e)
    _lever_args(e)
    e.set_defaults(func=cmd_eval)

    s = wsub.add_parser("layers", help="per-layer sweep, raw vs standardized (plain 1-NN)")
    s.add_argument(
        "--train",
        type=name_or_path_arg,
        default="semcor",
        help="training corpus (name or *.data.xml)",
    )
    s.add_argument(
        "--test", type=name_or_path_arg, default="ALL", help="test corpus (name or *.data.xml)"
    )
    s.add_argument("--specs", default=None, help="comma list of layer specs, ';' separated")
    s.add_argument(
        "--corrections", nargs="+", default=["none", "zscore"],
        help="corrections fitted on the training vectors, each swept (default: none zscore)",
    )  # fmt: skip
    add_former_name(s, "--postprocess", "--corrections", nargs="+")
    s.add_argument("--out", type=path_arg, default=None, help="write reports here")
    s.add_argument("--json", type=path_arg, default=None, help="write the JSON report here")
    add_overwrite(s)
    add_model_options(s)
    s.set_defaults(func=cmd_layers)

    d = wsub.add_parser("disambiguate", help="rank the senses of one word in a sentence")
    d.add_argument("text", help="the sentence")
    d.add_argument("--word", required=True, help="the target word (or phrase) or its position")
    d.add_argument("--pos", choices=POS_TAGS, default=None)
    d.add_argument(
        "--index", type=path_arg, default=None,
        help="a saved index (default: the --system's)",
    )  # fmt: skip
    _system_arg(d)
    _lever_args(d)
    add_model_options(d)
    d.set_defaults(func=cmd_disambiguate)

    c = wsub.add_parser("score", help="P, R, F1 of a key file, as the official scorer prints")
    c.add_argument("gold", type=path_arg)
    c.add_argument("system", type=path_arg)
    c.set_defaults(func=cmd_score)

    wsd_compare.register(wsub)


# ---------------------------------------------------------------------- helpers


def _encoder(args):
    return Encoder(model=args.model, device=args.device, dtype=args.dtype, pooling=args.pooling)


def _system_name(args) -> str:
    """``--system``, or the default system where none is given."""
    return args.system if args.system is not None else DEFAULT_SYSTEM


def _given_options(args) -> list[str]:
    """The index options given on the command line, as flags."""
    return [f"--{k.replace('_', '-')}" for k in OVERRIDES if getattr(args, k, None) is not None]


def _check_system_options(args) -> None:
    """Refuse, before any work, an option that cannot apply, with the reason: index options
    for the bi-encoder (it has no index settings) or beside a saved ``--index`` (it answers
    with the settings it was built with), ``--train`` beside ``--index``, ``--gold`` without
    a ``*.data.xml`` to go with, ``--data`` beside dataset names. Option values are checked by
    :func:`workbench.wsd.systems.open_system`, which builds the system's config at once."""
    options = _given_options(args)
    index = getattr(args, "index", None)
    levers = _levers(args)
    system = get_system(_system_name(args))
    if index is not None and args.system is not None:
        raise InputError(
            f"--system {args.system} cannot apply to a saved --index: the index answers as "
            "the system it was built as; leave one of them out"
        )
    if levers is not None and (index is not None or not system.is_biencoder):
        where = "a saved --index" if index is not None else f"--system {system.name}"
        raise InputError(
            f"--smoothing and --prior are test-time levers of the bi-encoder; {where} has "
            "none: leave them out"
        )
    if index is not None and (options or getattr(args, "train", None) is not None):
        given = options or ["--train"]
        raise InputError(
            f"{' '.join(given)} cannot apply to a saved --index: it answers with the settings "
            "and training corpus it was built with; leave them out, or build another index "
            "with `workbench wsd train ... --out DIR`"
        )
    if system.is_biencoder and options and index is None:
        raise InputError(
            f"{' '.join(options)} change(s) the settings of a centroid system, and the "
            "bi-encoder (the default --system) has none: add --system best (or plain, wordnet)"
        )
    data = getattr(args, "data", None)
    if data is not None and getattr(args, "datasets", None):
        raise InputError(
            f"--data {data} and the dataset names {' '.join(args.datasets)}: give one of them"
        )
    corpus = data if hasattr(args, "data") else getattr(args, "corpus", None)
    if getattr(args, "gold", None) is not None and not _is_xml_path(corpus):
        where = "--data" if hasattr(args, "data") else "--corpus"
        raise InputError(
            f"--gold goes with a *.data.xml file as {where}: there is no {where}"
            if corpus is None
            else f"--gold goes with a *.data.xml file as {where}; {corpus!r} is a dataset "
            "with gold keys of its own"
        )


def _is_xml_path(corpus: str | None) -> bool:
    """Whether the corpus option names a ``*.data.xml`` file (``+examples`` allowed), as
    :func:`workbench.wsd.evaluate.load_corpus` reads it, rather than a dataset's name."""
    if corpus is None:
        return False
    base, _ = split_examples(str(corpus))
    return base.endswith((".xml", ".xml.xz")) or Path(base).is_file()


def _open(
    args, folder: Path | None = None, train: str | None = None, gold: Path | None = None
) -> OpenedSystem:
    """The opening of a system for a command (:func:`workbench.cli.wsd_open.open_for_command`):
    the saved index ``folder`` when given, else ``--system`` with the index options given and
    the training corpus ``train``, on ``--model``. Nothing loads until the system is used; the
    caller says its note once the input is known to be good."""
    return open_for_command(
        folder if folder is not None else _system_name(args),
        args.model,
        device=args.device,
        dtype=args.dtype,
        pooling=args.pooling,
        changes=_changes(args),
        train=train,
        gold=str(gold) if gold is not None else None,
        levers=_levers(args),
    )


#: The index options that change single settings of a system, by config field.
OVERRIDES = ("layers", "correction", "propagate", "gloss", "gloss_weight", "gloss_pooling")


def _changes(args) -> dict[str, object]:
    """The index options given on the command line, by config field."""
    return {k: getattr(args, k) for k in OVERRIDES if getattr(args, k, None) is not None}


def _system_facts(index) -> dict:
    """The system an index was built as, for reports: name, description, its index's settings
    (``SenseIndexConfig.label``), note."""
    name = system_of(index)
    known = SYSTEMS.get(name)
    return {
        "name": name,
        "description": known.description if known else "settings given on the command line",
        "settings": index.config.label,
        "note": system_note(index),
    }


def _rerun(args: argparse.Namespace) -> str:
    """The command that produced a report (its positionals: the datasets, the text)."""
    return command_line(args, ["wsd", args.wsd_command], ["datasets", "text"])


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _say_time(label: str, seconds: float) -> None:
    _say(f"  {label}: {seconds:.1f} s")


def _timed(label: str, seconds: dict[str, float], fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    seconds[label] = time.perf_counter() - t0
    _say_time(label, seconds[label])
    return out


def _say_stage_time(stage: Stage) -> None:
    """The time of a stage of :func:`evaluate_corpus` once done (the search's is in the
    summary line)."""
    if stage.seconds is not None and stage.name != "predict":
        _say_time(stage.label, stage.seconds)


def _provenance(opened: OpenedSystem, index, tests) -> dict:
    bi = opened.biencoder
    return {
        "index": index.summary(),
        "search": getattr(index, "search_", None),  # the engine and device it searched on
        "model": bi.describe() if bi is not None else opened.encoder.describe(),
        "test_data": {c.name: {"sha256": c.sha256, "files": [str(p) for p in c.source]}
                      for c in tests},
    }  # fmt: skip


# ---------------------------------------------------------------------- commands


def check_inputs(
    corpora: list[tuple[str, str | None]],
    index: Path | None = None,
    out_dir: Path | None = None,
    out_file: Path | None = None,
    overwrite: bool = False,
) -> list[Path]:
    """Check every input file and output place before any work (no model, no corpus loaded):
    each ``(corpus, gold)`` (a dataset name or ``*.data.xml`` path, its gold key file; WordNet
    needs none), a saved index directory, an output directory and an output file (which may
    be none of the inputs, nor, without ``overwrite``, a file the workbench did not write).
    Returns the input files.

    Raises:
        DataError: a missing file or index, or a corpus without its gold keys.
        OutputError: an output that cannot be written or may not be replaced.
    """
    inputs: list[Path] = []
    for name, gold in corpora:
        if name != "wordnet":
            xml, key = corpus_files(split_examples(name)[0], gold)
            inputs += [xml] + ([key] if key is not None else [])
    if index is not None and not index.is_dir():
        raise DataError(f"--index {index}: no saved index there")
    if out_dir is not None:
        if out_dir.exists() and not out_dir.is_dir():
            raise OutputError(f"--out {out_dir} is a file: give a directory for the reports")
        check_writable(out_dir / "report.json")
    if out_file is not None:
        claim_file(out_file, overwrite=overwrite, inputs=inputs, option="--json")
    return inputs


def claim_reports(
    args: argparse.Namespace,
    stems: list[str],
    answers: list[str],
    inputs: list[Path],
    json_files: Sequence[Path] = (),
    files: Callable[[str], Sequence[str]] = report_names,
) -> None:
    """Claim (:func:`workbench.outputs.claim_files`), before any work, every file the command
    writes: in ``--out``, the reports of ``stems`` (``files``: a stem's file names) and the
    key files of the corpora ``answers``; and the ``json_files``; none of them twice."""
    names = [n for stem in stems for n in files(stem)] + [answers_name(a) for a in answers]
    paths = [args.out / name for name in names] if args.out is not None else []
    claim_files([*paths, *json_files], overwrite=args.overwrite, inputs=inputs)


def cmd_train(args: argparse.Namespace) -> int:
    _check_system_options(args)
    opened = _open(args, train=args.corpus, gold=args.gold)
    if opened.is_biencoder:
        return _train_biencoder(args, opened)
    check_inputs(list(opened.inputs))
    if args.out is not None:
        check_index_output(args.out)  # a new or empty folder, or a workbench index (replaced)
    if opened.note:
        _say(f"note: {opened.note}")
    seconds: dict[str, float] = {}
    index = _timed(f"{opened.index_kind} index", seconds, opened.index)
    corpus = opened.inputs[0][0] if opened.inputs else "wordnet"
    default = train_output_path(opened.encoder, index, corpus)
    out = args.out or default
    if out != default or not (out / "meta.json").is_file():
        save_index(index, out)
    s = index.summary()
    print(f"index: {out}")
    print(f"trained on: {index.training_.corpus} ({index.training_.n_occurrences} occurrences)")
    print(f"system: {system_of(index)}; config: {index.config.label}; rows: {s['rows']} "
          f"{s['rows_by_origin']}")  # fmt: skip
    return 0


def _train_biencoder(args: argparse.Namespace, opened: OpenedSystem) -> int:
    """``wsd train --system biencoder``: the bi-encoder's gloss vectors of every WordNet sense
    (encoded into its gloss cache where missing), saved as an index when ``--out`` is given."""
    if args.out is not None:
        check_writable(args.out / "meta.json")
    bi = opened.biencoder
    assert bi is not None  # cmd_train found it
    t0 = time.perf_counter()
    index = opened.index(None, progress=True)
    print(f"bi-encoder: {bi.directory}")
    print(f"gloss vectors of {len(index):,} senses in {bi.cache.folder} "
          f"({time.perf_counter() - t0:.1f} s)")  # fmt: skip
    if args.out is not None:
        save_index(index, args.out)
        print(f"index: {args.out}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    _check_system_options(args)
    given = [(args.data, args.gold)] if args.data else [(n, None) for n in args.datasets or ["ALL"]]
    # which system answers, and on which training corpus, before anything is loaded
    opened = _open(args, args.index, train=args.train)
    several = args.json is not None and not args.data and len(args.datasets) > 1
    json_file = None if several else args.json
    inputs = check_inputs([*given, *opened.inputs], args.index, args.out, json_file,
                          args.overwrite)  # fmt: skip
    names = [args.data] if args.data else (args.datasets or ["ALL"])
    # the test sets are read (and refused if unusable) before the model loads and an index is
    # built: minutes of work must not come before a message about a bad data file
    corpora = [load_corpus(name, args.gold if args.data else None) for name in names]
    jsons = [_json_path(args.json, c.name) for c in corpora] if several else [args.json]
    claim_reports(args, [f"wsd-{c.name}" for c in corpora], [c.name for c in corpora], inputs,
                  [p for p in jsons if p is not None], report_files)  # fmt: skip
    for corpus in corpora:
        if not corpus.n_gold_keys():
            raise DataError(
                f"{corpus.name}: no instance has a gold sense key ({corpus.n_instances} "
                "instances), so there is nothing to score"
            )
    if opened.note:
        _say(f"note: {opened.note}")
    t_start = time.perf_counter()
    seconds: dict[str, float] = {}
    wordnet = load_wordnet()
    training: SenseCounts | None = None
    if not args.no_baselines:
        try:
            training = mfs_counts()
        except DataError as exc:
            _say(f"  no SemCor for the MFS baseline: {exc}")
        else:
            if training is None:
                _say("  no SemCor for the MFS baseline: SemCor is not in the data dir")
    train_set = None
    tests, results, sweeps, used, runs = [], [], [], [], []
    for corpus in corpora:
        tests.append(corpus)
        run = evaluate_corpus(opened, corpus, wordnet, training,
                              baselines=not args.no_baselines, threads=args.threads,
                              on_stage=_say_stage_time, context=args.context)  # fmt: skip
        seconds.update(run.seconds)
        test, this, result = run.instances, run.index, run.evaluation
        runs.append(run)
        used.append(this)
        results.append(result)
        bi = opened.biencoder
        model = bi.directory if bi is not None else opened.encoder.name
        levers = f"; levers: {opened.levers.label}" if opened.levers is not None else ""
        if args.context:
            levers += f"; context: {args.context} sentence(s) on each side"
        print(f"== {corpus.name}: system {system_of(this)} ({this.config.label}{levers}), "
              f"model {model}, trained on {this.training_.corpus}")  # fmt: skip
        rows = {d.name: d.system for d in result.datasets}
        print(format_table(rows, "dataset"))
        for d in result.datasets[-1:]:
            for b, s in d.baselines.items():
                print(f"   baseline {b}: F1 {100 * s.f1:.1f}")
        if system_note(this):
            print(f"note: {system_note(this)}")
        if args.out:
            write_answers(result, args.out, corpus.name, args.overwrite)
        if args.sweep:
            if train_set is None:
                train = opened.inputs[0][0] if opened.inputs else "semcor"
                train_set = _sweep_training(opened.encoder, train, seconds)
            sweeps.append(_timed(f"sweep {corpus.name}", seconds, _sweep, opened.encoder,
                                 train_set, test))  # fmt: skip
    seconds["total"] = time.perf_counter() - t_start
    print("time: " + ", ".join(f"{k} {v:.1f} s" for k, v in seconds.items()))
    engines = sorted({getattr(i, "search_", None) or "none" for i in used})
    print(f"search: {', '.join(engines)}")  # faiss:cpu, faiss:gpu, torch:cuda, torch:cpu
    command = _rerun(args)
    for i, (corpus, run, this) in enumerate(zip(tests, runs, used)):
        if not (args.out or args.json):
            break
        config_facts = {
            "system": {
                **_system_facts(this),
                **({"levers": opened.levers.describe()} if opened.levers is not None else {}),
                **({"context": args.context} if args.context else {}),
            },
            **_provenance(opened, this, tests),
            "seconds": seconds,
        }
        t_report = time.perf_counter()
        facts = system_facts(opened, this, system_of(this), config_facts["system"]["description"])
        doc = eval_report(run, corpus, wordnet, facts, config_facts,
                          sweep=sweeps[i] if sweeps else (), command=command,
                          app_url=args.app_url, app_model=args.model)  # fmt: skip
        if args.out:
            paths = write_eval_report(doc, args.out, f"wsd-{corpus.name}", args.overwrite)
            print(f"report: {paths['html']}")
        if args.json:
            path = args.json if len(tests) == 1 else _json_path(args.json, corpus.name)
            write_text_atomic(path, json_text(report_json(doc)), args.overwrite)
            print(f"json: {path}")
        _say_time(f"report {corpus.name}", time.perf_counter() - t_report)
    return 0


def _json_path(given: Path, corpus: str) -> Path:
    """``--json`` of a run over several datasets: one file per dataset, named after it."""
    return given.with_name(f"{given.stem}-{corpus}.json")


def _sweep_training(enc, corpus_name: str, seconds: dict[str, float]):
    """The encoded training instances for a sweep (SemCor when the index came from WordNet)."""

    name = "semcor" if corpus_name == "wordnet" else corpus_name
    corpus = _timed(f"load {name}", seconds, load_corpus, name)
    return _timed(f"encode {corpus.name}", seconds, encode_instances, enc, corpus)


def _sweep(enc, training, test, corrections=("none", "zscore")):
    specs = default_specs(enc.n_hidden)
    backoff = load_wordnet().first_sense
    return layer_sweep(training, test, EncoderInfo.of(enc), specs, corrections, backoff, _say)


def cmd_layers(args: argparse.Namespace) -> int:
    # every spec and correction checked before a corpus is read (the default specs follow
    # from the model and are good)
    sweep_configs(args.specs.split(";") if args.specs else ["-1"], args.corrections)
    inputs = check_inputs(
        [(args.train, None), (args.test, None)], None, args.out, args.json, args.overwrite
    )
    enc = _encoder(args)
    specs = args.specs.split(";") if args.specs else default_specs(enc.n_hidden)
    sweep_configs(specs, args.corrections, enc.n_hidden)  # layers the model has, before a read
    seconds: dict[str, float] = {}
    train_corpus = _timed("load training", seconds, load_corpus, args.train)
    test_corpus = _timed("load test", seconds, load_corpus, args.test)
    claim_reports(args, [f"wsd-layers-{test_corpus.name}"], [], inputs,
                  [args.json] if args.json is not None else [])  # fmt: skip
    training = _timed(f"encode {train_corpus.name}", seconds, encode_instances, enc, train_corpus)
    test = _timed(f"encode {test_corpus.name}", seconds, encode_instances, enc, test_corpus)
    wordnet = load_wordnet()
    points = _timed(
        "sweep", seconds, layer_sweep, training, test, EncoderInfo.of(enc), specs,
        args.corrections, wordnet.first_sense, _say,
    )  # fmt: skip
    table = sweep_table(points)
    print(table.to_markdown())
    config = {
        "model": enc.describe(),
        "train": {"name": train_corpus.name, "sha256": train_corpus.sha256},
        "test": {"name": test_corpus.name, "sha256": test_corpus.sha256},
        "protocol": "plain 1-NN among the lemma's candidates, back-off to WordNet first sense",
        "seconds": seconds,
    }
    report = evaluation_report(None, config, sweep=points, title="WSD per-layer sweep",
                               command=_rerun(args))  # fmt: skip
    if args.out:
        paths = write_wsd_report(report, args.out, f"wsd-layers-{test_corpus.name}", args.overwrite)
        print(f"report: {paths['html']}")
    if args.json:
        write_json(report, args.json, args.overwrite)
    return 0


def cmd_disambiguate(args: argparse.Namespace) -> int:
    _check_system_options(args)
    check_inputs([], args.index)
    # a position in ASCII digits; anything else ("²", "٣") is a word to find
    target = int(args.word) if args.word.isascii() and args.word.isdigit() else args.word
    # the saved --index, else the --system's own index (a SemCor system's long first build
    # says so, to stderr)
    opened = _open(args, args.index)
    result = disambiguate(opened, args.text, target, pos=args.pos)
    print(result.to_text())
    if opened.levers is not None and opened.levers.label != "none":
        print(f"test-time levers: {opened.levers.label}")
    if opened.note:
        _say(f"note: {opened.note}")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    for path in (args.gold, args.system):
        problem = input_problem(path)  # missing, a directory, a loop ...
        if problem is not None:
            raise DataError(f"{path} {problem}")
    print(scorer_output(args.gold, args.system))
    return 0
