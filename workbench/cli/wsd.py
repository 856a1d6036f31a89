"""``workbench wsd train | eval | layers | disambiguate | score``: nearest-sense WSD.

Thin over :mod:`workbench.wsd.predict`, :mod:`workbench.wsd.evaluate`,
:mod:`workbench.wsd.report` and :mod:`workbench.wsd.disambiguate`. Encodings go through the
on-disk cache, so a second ``eval`` or ``layers`` run only does array work.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from workbench.encoding.encoder import Encoder
from workbench.encoding.models import default_cache_dir
from workbench.encoding.pooling import POOLINGS
from workbench.errors import DataError
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.lexicon.wordnet import POS_TAGS, load_wordnet
from workbench.wsd.config import (
    GLOSS_COMBINATIONS,
    GLOSS_POOLINGS,
    EncoderInfo,
    GlossCombination,
    SenseIndexConfig,
)
from workbench.wsd.disambiguate import (
    WORDNET_CONFIG,
    default_index_path,
    disambiguate,
    wordnet_index,
)
from workbench.wsd.evaluate import (
    baseline_answers,
    default_specs,
    evaluate,
    layer_sweep,
    load_corpus,
)
from workbench.wsd.predict import build_index, encode_instances
from workbench.wsd.report import (
    evaluation_report,
    sweep_table,
    write_answers,
    write_json,
    write_wsd_report,
)
from workbench.wsd.scoring import format_table, scorer_output
from workbench.wsd.store import load_index, save_index
from workbench.wsd.vectors import LEVELS


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None, help="HF id or local dir (default: packaged MiniLM)")
    p.add_argument("--device", default=None, help="cuda | mps | cpu (default: best available)")
    p.add_argument("--pooling", choices=POOLINGS, default="mean")


def _index_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--layers", default="last4-sum", help="layer spec: 6, -1, last4-sum, 3,4,5 ...")
    p.add_argument(
        "--postprocess",
        default="none",
        help=f"post-processor fitted on the training vectors: {'|'.join(CORRECTION_LABELS)}",
    )
    p.add_argument("--propagate", choices=LEVELS, default="none", help="LMMS propagation level")
    p.add_argument(
        "--gloss",
        choices=GLOSS_COMBINATIONS,
        default=None,
        help="combine LMMS gloss vectors (default: none; concat for --corpus/--train wordnet)",
    )
    p.add_argument(
        "--gloss-weight", type=float, default=None, help="weight of the gloss cosine (default 0.2)"
    )
    p.add_argument(
        "--gloss-pooling",
        choices=GLOSS_POOLINGS,
        default="definition",
        help="gloss vector: mean of the definition's words, or the lemma's own vector",
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("wsd", help="word sense disambiguation: train, eval, layers, ...")
    wsub = p.add_subparsers(dest="wsd_command", metavar="ACTION", required=True)

    t = wsub.add_parser("train", help="build and save a sense index")
    t.add_argument("--corpus", default="semcor", help="semcor | wordnet | a *.data.xml path")
    t.add_argument("--gold", default=None, help="gold key file of --corpus (if a path)")
    t.add_argument("--out", type=Path, default=None, help="index directory (default: cache)")
    _model_args(t)
    _index_args(t)
    t.set_defaults(func=cmd_train)

    e = wsub.add_parser("eval", help="evaluate on the framework's datasets")
    e.add_argument("datasets", nargs="*", default=[], help="dataset names (default: ALL)")
    e.add_argument("--data", default=None, help="a *.data.xml file to evaluate instead")
    e.add_argument("--gold", default=None, help="its gold key file")
    e.add_argument("--index", type=Path, default=None, help="a saved index (else: train)")
    e.add_argument("--train", default="semcor", help="training corpus when no --index")
    e.add_argument("--out", type=Path, default=None, help="write reports and key files here")
    e.add_argument("--json", type=Path, default=None, help="write the JSON report here")
    e.add_argument("--no-baselines", action="store_true", help="skip the baselines")
    e.add_argument("--threads", type=int, default=1, help="FAISS threads (default 1)")
    e.add_argument(
        "--sweep", action="store_true", help="add the per-layer sweep (raw vs z-scored) to reports"
    )
    _model_args(e)
    _index_args(e)
    e.set_defaults(func=cmd_eval)

    s = wsub.add_parser("layers", help="per-layer sweep, raw vs standardized (plain 1-NN)")
    s.add_argument("--train", default="semcor", help="training corpus (name or *.data.xml)")
    s.add_argument("--test", default="ALL", help="test corpus (name or *.data.xml)")
    s.add_argument("--specs", default=None, help="comma list of layer specs, ';' separated")
    s.add_argument("--postprocess", nargs="+", default=["none", "zscore"])
    s.add_argument("--out", type=Path, default=None, help="write reports here")
    s.add_argument("--json", type=Path, default=None, help="write the JSON report here")
    _model_args(s)
    s.set_defaults(func=cmd_layers)

    d = wsub.add_parser("disambiguate", help="rank the senses of one word in a sentence")
    d.add_argument("text", help="the sentence")
    d.add_argument("--word", required=True, help="the target word (or phrase) or its position")
    d.add_argument("--pos", choices=POS_TAGS, default=None)
    d.add_argument("--index", type=Path, default=None, help="a saved index (default: WordNet)")
    _model_args(d)
    d.set_defaults(func=cmd_disambiguate)

    c = wsub.add_parser("score", help="P, R, F1 of a key file, as the official scorer prints")
    c.add_argument("gold", type=Path)
    c.add_argument("system", type=Path)
    c.set_defaults(func=cmd_score)


# ---------------------------------------------------------------------- helpers


def _encoder(args):
    return Encoder(model=args.model, device=args.device, pooling=args.pooling)


def _config(args, corpus: str = ""):
    gloss: GlossCombination = args.gloss or ("concat" if corpus == "wordnet" else "none")
    weight = args.gloss_weight
    if weight is None:  # each setting's default, both chosen on the SemEval-2007 dev set
        weight = WORDNET_CONFIG.gloss_weight if corpus == "wordnet" else 0.2
    return SenseIndexConfig(
        layers=args.layers,
        postprocess=args.postprocess,
        propagate=args.propagate,
        gloss=gloss,
        gloss_weight=weight,
        gloss_pooling=args.gloss_pooling,
    )


def _command_line(args: argparse.Namespace) -> str:
    """The command that produced a report, rebuilt from the parsed arguments."""
    parts = ["workbench", "wsd", args.wsd_command]
    for name, value in vars(args).items():
        if name in ("func", "command", "wsd_command") or value in (None, False, [], ""):
            continue
        flag = "--" + name.replace("_", "-")
        if name in ("datasets", "text", "gold_file", "system"):
            parts += [str(v) for v in (value if isinstance(value, list) else [value])]
        elif value is True:
            parts.append(flag)
        elif isinstance(value, list):
            parts += [flag, *map(str, value)]
        else:
            parts += [flag, str(value)]
    return shlex.join(parts)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _timed(label: str, seconds: dict[str, float], fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    seconds[label] = time.perf_counter() - t0
    _say(f"  {label}: {seconds[label]:.1f} s")
    return out


def _train(enc, corpus_name: str, gold, config, seconds: dict[str, float]):
    """(index, training Corpus or None, its encoded InstanceSet or None) for ``corpus_name``."""

    if corpus_name == "wordnet":
        index = _timed("train wordnet index", seconds, wordnet_index, enc, None, None, config)
        return index, None, None
    corpus = _timed(f"load {corpus_name}", seconds, load_corpus, corpus_name, gold)
    training = _timed(f"encode {corpus.name}", seconds, encode_instances, enc, corpus)
    index = _timed("train index", seconds, build_index, enc, training, config)
    return index, corpus, training


def _default_index_path(enc, corpus: str, config) -> Path:
    slug = "-".join(
        [Path(corpus).name.split(".")[0], config.layers, config.postprocess, config.propagate,
         config.gloss, config.gloss_pooling, f"{config.gloss_weight:g}", enc.fingerprint]
    )  # fmt: skip
    return default_cache_dir() / "wsd-index" / slug.replace("/", "_").replace(":", "_")


def _provenance(enc, index, tests) -> dict:
    return {
        "index": index.summary(),
        "model": enc.describe() if hasattr(enc, "describe") else enc.name,
        "test_data": {c.name: {"sha256": c.sha256, "files": [str(p) for p in c.source]}
                      for c in tests},
    }  # fmt: skip


# ---------------------------------------------------------------------- commands


def cmd_train(args: argparse.Namespace) -> int:
    enc = _encoder(args)
    config = _config(args, args.corpus)
    seconds: dict[str, float] = {}
    index, _, _ = _train(enc, args.corpus, args.gold, config, seconds)
    default = (
        default_index_path(enc, config)  # where `wsd disambiguate` looks for it
        if args.corpus == "wordnet"
        else _default_index_path(enc, args.corpus, config)
    )
    out = args.out or default
    save_index(index, out)
    s = index.summary()
    print(f"index: {out}")
    print(f"trained on: {index.training_.corpus} ({index.training_.n_occurrences} occurrences)")
    print(f"config: {config.label}; rows: {s['rows']} {s['rows_by_origin']}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    t_start = time.perf_counter()
    seconds: dict[str, float] = {}
    enc = _encoder(args)
    wordnet = load_wordnet()
    training = train_set = None
    if args.index is not None:
        index = load_index(args.index, encoder=enc)
    else:
        config = _config(args, args.train)
        index, training, train_set = _train(enc, args.train, None, config, seconds)
    names = [args.data] if args.data else (args.datasets or ["ALL"])
    if not args.no_baselines and (training is None or training.name != "semcor"):
        try:
            training = load_corpus("semcor")
        except DataError as exc:
            training = None
            _say(f"  no SemCor for the MFS baseline: {exc}")
    tests, results, sweeps = [], [], []
    for name in names:
        corpus = load_corpus(name, args.gold if args.data else None)
        tests.append(corpus)
        test = _timed(f"encode {corpus.name}", seconds, encode_instances, enc, corpus)
        bases = {} if args.no_baselines else baseline_answers(corpus, training, wordnet)
        result = evaluate(index, test, bases, backoff=wordnet.first_sense, threads=args.threads)
        seconds[f"predict {corpus.name}"] = result.seconds["predict"]
        results.append(result)
        print(f"== {corpus.name}: {index.config.label}, trained on {index.training_.corpus}")
        rows = {d.name: d.system for d in result.datasets}
        print(format_table(rows, "dataset"))
        for d in result.datasets[-1:]:
            for b, s in d.baselines.items():
                print(f"   baseline {b}: F1 {100 * s.f1:.1f}")
        if args.out:
            write_answers(result, args.out, corpus.name)
        if args.sweep:
            if train_set is None:
                train_set = _sweep_training(enc, args.train, seconds)
            sweeps.append(_timed(f"sweep {corpus.name}", seconds, _sweep, enc, train_set, test))
    seconds["total"] = time.perf_counter() - t_start
    print("time: " + ", ".join(f"{k} {v:.1f} s" for k, v in seconds.items()))
    config = {**_provenance(enc, index, tests), "seconds": seconds}
    command = _command_line(args)
    for i, (corpus, result) in enumerate(zip(tests, results)):
        report = evaluation_report(result, config, sweep=sweeps[i] if sweeps else (),
                                   command=command,
                                   title=f"WSD on {corpus.name}: {index.config.label}")  # fmt: skip
        if args.out:
            paths = write_wsd_report(report, args.out, stem=f"wsd-{corpus.name}")
            print(f"report: {paths['html']}")
        if args.json:
            path = args.json if len(tests) == 1 else args.json.with_name(
                f"{args.json.stem}-{corpus.name}.json")  # fmt: skip
            write_json(report, path)
            print(f"json: {path}")
    return 0


def _sweep_training(enc, corpus_name: str, seconds: dict[str, float]):
    """The encoded training instances for a sweep (SemCor when the index came from WordNet)."""

    name = "semcor" if corpus_name == "wordnet" else corpus_name
    corpus = _timed(f"load {name}", seconds, load_corpus, name)
    return _timed(f"encode {corpus.name}", seconds, encode_instances, enc, corpus)


def _sweep(enc, training, test, postprocess=("none", "zscore")):
    specs = default_specs(enc.n_hidden)
    backoff = load_wordnet().first_sense
    return layer_sweep(training, test, EncoderInfo.of(enc), specs, postprocess, backoff, _say)


def cmd_layers(args: argparse.Namespace) -> int:
    enc = _encoder(args)
    seconds: dict[str, float] = {}
    train_corpus = _timed("load training", seconds, load_corpus, args.train)
    test_corpus = _timed("load test", seconds, load_corpus, args.test)
    training = _timed(f"encode {train_corpus.name}", seconds, encode_instances, enc, train_corpus)
    test = _timed(f"encode {test_corpus.name}", seconds, encode_instances, enc, test_corpus)
    specs = args.specs.split(";") if args.specs else default_specs(enc.n_hidden)
    wordnet = load_wordnet()
    points = _timed(
        "sweep", seconds, layer_sweep, training, test, EncoderInfo.of(enc), specs,
        args.postprocess, wordnet.first_sense, _say,
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
                               command=_command_line(args))  # fmt: skip
    if args.out:
        paths = write_wsd_report(report, args.out, stem=f"wsd-layers-{test_corpus.name}")
        print(f"report: {paths['html']}")
    if args.json:
        write_json(report, args.json)
    return 0


def cmd_disambiguate(args: argparse.Namespace) -> int:
    enc = _encoder(args)
    index = load_index(args.index, encoder=enc) if args.index else None
    target = int(args.word) if args.word.isdigit() else args.word
    result = disambiguate(enc, index, args.text, target, pos=args.pos)
    print(result.to_text())
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    for path in (args.gold, args.system):
        if not path.is_file():
            raise DataError(f"{path} does not exist")
    print(scorer_output(args.gold, args.system))
    return 0
