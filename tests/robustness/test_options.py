"""No option turns a run into NaN: one check for non-finite and out-of-range numbers, before any
work (workbench.bounds), table-driven.

The class is closed at its root: every numeric option of every command parses through
``cli.options.number`` (a walk over the whole parser fails on a bare ``int`` or ``float``), and
each one refuses NaN, the infinities and a value past each end of its range while the command
line is parsed: one line, exit code 2, nothing made. The library's configurations refuse the
same values with the same bounds.
"""

from __future__ import annotations

import argparse
import math
import re
import warnings

import pytest

from workbench.bounds import Bound
from workbench.cli import senses
from workbench.cli.main import build_parser, main
from workbench.distributed.config import ClusterConfig, ShardConfig
from workbench.encoding import models
from workbench.encoding.pooling import LayerSpec
from workbench.errors import InputError
from workbench.finetune.tasks.registry import TASKS, fit_lengths
from workbench.finetune.tasks.sequence import SequenceOptions
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.training.config import TrainConfig, bounds, option_fields
from workbench.viz.projection import ProjectionConfig


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """Every (command words, parser) of the command line."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subparsers(sub, (*path, name))


def _numeric_options() -> list[tuple[tuple[str, ...], str, Bound]]:
    found = []
    for path, parser in _subparsers(build_parser()):
        for action in parser._actions:
            bound = getattr(action.type, "bound", None)
            if bound is not None and action.help != argparse.SUPPRESS:  # hidden: another
                found.append((path, action.option_strings[-1], bound))  # task's flag, seen there
    return found


NUMERIC = _numeric_options()


def test_every_numeric_option_is_checked_by_its_bound():
    bare = [
        (" ".join(path), action.option_strings or action.dest)
        for path, parser in _subparsers(build_parser())
        for action in parser._actions
        if action.type in (int, float)
    ]
    assert bare == [], f"options parsed without a bound: {bare}"
    assert len(NUMERIC) >= 60  # every command's numbers, the training options of each task
    commands = {path[0] for path, _, _ in NUMERIC}
    assert {"embed", "geometry", "wsd", "senses", "finetune", "cache"} <= commands


def _text(value: float, integer: bool) -> str:
    return str(int(value)) if integer and float(value).is_integer() else repr(value)


def _outside(bound: Bound) -> list[str]:
    """Values of a bound's option that must be refused: non-finite ones, past each end."""
    values = ["nan", "inf", "-inf", "1e999", "NaN"]
    if bound.low is not None:
        values.append(_text(bound.low if bound.low_open else bound.low - 1, bound.integer))
    if bound.high is not None:
        values.append(_text(bound.high if bound.high_open else bound.high + 1, bound.integer))
    if bound.integer:
        values.append("1.5")
    return values


@pytest.mark.parametrize(
    "path, option, bound", NUMERIC, ids=[f"{' '.join(p)} {o}" for p, o, _ in NUMERIC]
)
def test_every_value_outside_an_options_range_is_refused_while_parsing(path, option, bound):
    parser = dict(_subparsers(build_parser()))[path]
    action = next(a for a in parser._actions if option in a.option_strings)
    for value in _outside(bound):
        with pytest.raises(argparse.ArgumentTypeError, match="must be an? (integer|finite num)"):
            action.type(value)
    if action.default is not None:  # the default itself is in range
        assert bound.accepts(action.default), (option, action.default)


# One command line per class member the issue names, end to end: exit 2, one line, nothing made.
COMMAND_LINES = [
    ("finetune seqcls --lr inf", ["finetune", "seqcls", "--train", "{w}/t.csv", "--lr", "inf"],
     r"argument --lr: must be a finite number > 0, not 'inf'"),
    ("finetune seqcls --max-train -3", ["finetune", "seqcls", "--train", "{w}/t.csv",
     "--max-train", "-3"], r"argument --max-train: must be an integer >= 1, not '-3'"),
    ("finetune seqcls --head-dropout 1.5", ["finetune", "seqcls", "--train", "{w}/t.csv",
     "--head-dropout", "1.5"], r"--head-dropout: must be a finite number in \[0, 1\)"),
    ("finetune pair --warmup-ratio nan", ["finetune", "pair", "--train", "{w}/t.csv",
     "--warmup-ratio", "nan"], r"--warmup-ratio: must be a finite number in \[0, 1\)"),
    ("finetune mlm --mlm-probability 1", ["finetune", "mlm", "--train", "{w}/t.csv",
     "--mlm-probability", "1"], r"--mlm-probability: must be a finite number in \(0, 1\)"),
    ("finetune wsd --seed -1", ["finetune", "wsd", "--builtin", "semcor", "--seed", "-1"],
     r"--seed: must be an integer in \[0, 4.29497e\+09\]"),
    ("embed --gpus-per-worker nan", ["embed", "{w}/t.csv", "--engine", "ray", "--out", "{w}/o",
     "--gpus-per-worker", "nan"], r"--gpus-per-worker: must be a finite number >= 0"),
    ("embed --batch-tokens 0", ["embed", "{w}/t.csv", "--out", "{w}/o.npz", "--batch-tokens",
     "0"], r"--batch-tokens: must be an integer >= 1"),
    ("embed --connect-timeout inf", ["embed", "{w}/t.csv", "--engine", "ray", "--out", "{w}/o",
     "--connect-timeout", "inf"], r"--connect-timeout: must be a finite number > 0"),
    ("cache prune --older-than nan", ["cache", "prune", "--older-than", "nan"],
     r"--older-than: must be a finite number >= 0"),
    ("geometry --fit-fraction 1", ["geometry", "--fit-fraction", "1", "--out", "{w}/g"],
     r"--fit-fraction: must be a finite number in \(0, 1\)"),
    ("wsd eval --gloss-weight inf", ["wsd", "eval", "--gloss-weight", "inf", "--json",
     "{w}/r.json"], r"--gloss-weight: must be a finite number >= 0"),
    ("senses plot --min-dist nan", ["senses", "plot", "bank", "--out", "{w}/b.html",
     "--min-dist", "nan"], r"--min-dist: must be a finite number in \[0, 1\)"),
    ("senses plot --dims 4", ["senses", "plot", "bank", "--out", "{w}/b.html", "--dims", "4"],
     r"--dims: must be an integer in \[2, 3\]"),
]  # fmt: skip


@pytest.mark.parametrize("name, argv, expect", COMMAND_LINES, ids=[c[0] for c in COMMAND_LINES])
def test_command_lines_with_bad_numbers_stop_before_any_work(tmp_path, capsys, name, argv, expect):
    (tmp_path / "t.csv").write_text("text,label\na,0\nb,1\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main([a.format(w=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("workbench: error: argument "), err
    assert re.search(expect, lines[0]), lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# ---------------------------------------------------------------------------- the library


@pytest.mark.parametrize(
    "options", [TrainConfig, *{k.task.Options for k in TASKS.values()}], ids=lambda o: o.__name__
)
def test_every_training_option_refuses_non_finite_values(options):
    numeric = {f.name for f in option_fields(options)
               if type(f.default) in (int, float) or f.name == "head_lr"}  # fmt: skip
    assert numeric == set(bounds(options))  # a new numeric option needs its bound
    for name in bounds(options):
        for value in (math.nan, math.inf, -math.inf):
            with pytest.raises(InputError, match=rf"{name} must be"):
                options(**{name: value})


LIBRARY = [
    ("train-head-dropout", lambda: SequenceOptions(head_dropout=1.5), r"head_dropout must be"),
    ("train-lora-dropout", lambda: TrainConfig(lora_dropout=-0.1), r"lora_dropout must be"),
    ("train-weight-decay", lambda: TrainConfig(weight_decay=-1.0), r"weight_decay must be"),
    ("train-max-grad-norm", lambda: TrainConfig(max_grad_norm=math.inf), r"max_grad_norm"),
    ("train-epochs-float", lambda: TrainConfig(epochs=2.0), r"epochs must be an integer"),
    ("train-seed", lambda: TrainConfig(seed=2**40), r"seed must be an integer in"),
    ("cluster-gpus-nan", lambda: ClusterConfig(gpus_per_worker=math.nan), r"gpus_per_worker"),
    ("cluster-timeout", lambda: ClusterConfig(connect_timeout=0), r"connect_timeout must be"),
    ("cluster-workers", lambda: ClusterConfig(workers=0), r"workers must be an integer >= 1"),
    ("shard-size", lambda: ShardConfig(shard_size=-3), r"shard_size must be"),
    ("shard-stride", lambda: ShardConfig(stride=0), r"stride must be"),
    ("projection-min-dist", lambda: ProjectionConfig(min_dist=math.nan), r"min_dist must be"),
    ("projection-perplexity", lambda: ProjectionConfig(perplexity=math.inf), r"perplexity"),
    ("layer-spec-nan-weight", lambda: LayerSpec.parse("weighted:3=nan,4=0.5"), r"finite"),
    ("layer-spec-inf-weight", lambda: LayerSpec.parse("weighted:3=inf"), r"finite"),
    ("layer-spec-huge-last", lambda: LayerSpec.parse("last1000000000-sum"), r"layer spec"),
]  # fmt: skip


@pytest.mark.parametrize("name, make, expect", LIBRARY, ids=[c[0] for c in LIBRARY])
def test_library_configurations_refuse_what_the_command_line_refuses(name, make, expect):
    with pytest.raises(InputError, match=expect):
        make()


def test_too_long_inputs_are_cut_to_the_model_with_a_warning(tiny_model_dir, tmp_path):
    """--max-length past the model's positions (64 for the tiny model) is cut to them before
    any data is encoded, not a failure in the middle of training."""
    source = models.resolve_model(str(tiny_model_dir))
    tokenizer = models.load_tokenizer(source)
    with pytest.warns(UserWarning, match=r"--max-length 1024 is more than .* \(64 positions\)"):
        cfg = fit_lengths("seqcls", TrainConfig(max_length=1024), source, tokenizer)
    assert cfg.max_length == 64
    with pytest.warns(UserWarning, match=r"--gloss-max-length 100"):
        cfg = fit_lengths("wsd", TrainConfig(max_length=32, task=WsdOptions(gloss_max_length=100)),
                          source, tokenizer)  # fmt: skip
    assert (cfg.max_length, cfg.task.gloss_max_length) == (32, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the model's own length, or a default cut silently
        assert fit_lengths("seqcls", TrainConfig(max_length=64), source, tokenizer).max_length == 64
        assert fit_lengths("seqcls", TrainConfig(), source, tokenizer).max_length == 64


def test_a_layer_spec_the_model_lacks_is_refused_before_any_occurrence_is_encoded(
    tiny_model_dir, tmp_path, capsys, monkeypatch
):
    """The tiny model has 2 layers: the default last4-sum cannot be made from it."""

    def never(*a, **k):
        raise AssertionError("occurrences were searched or encoded before the check")

    monkeypatch.setattr(senses, "lemma_occurrences", never)
    monkeypatch.setattr(senses, "encode_occurrences", never)
    argv = ["senses", "plot", "bank", "--out", str(tmp_path / "b.html"), "--model",
            str(tiny_model_dir), "--device", "cpu"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(r"workbench: error: Layer -4 does not exist: .*0\.\.2\.", err), err
    assert not (tmp_path / "b.html").exists()
