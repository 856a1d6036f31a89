"""``workbench finetune``'s commands and flags come from the task registry and the built-ins."""

from __future__ import annotations

import argparse

import pytest

from workbench.cli.main import build_parser
from workbench.finetune.data.splits import BUILTINS
from workbench.finetune.tasks.registry import TASKS
from workbench.finetune.training.config import TrainConfig, option_fields


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: a for a in parser._actions for flag in a.option_strings}


def test_finetune_commands_follow_the_registry():
    finetune = _commands(build_parser())["finetune"]
    commands = _commands(finetune)
    assert list(commands) == [*TASKS, "builtin", "compare", "wsd-index", "wsd-probe"]
    for name, kind in TASKS.items():
        flags = _flags(commands[name])
        assert commands[name].description == kind.help
        assert ("--baselines" in flags) == kind.baselines
        builtin = flags.get("--builtin")
        expected = [b for b, of in BUILTINS.items() if of == name]
        assert (list(builtin.choices) if builtin else []) == expected
    assert "--repair-bio" in _flags(commands["token"]) and "--repair-bio" not in _flags(
        commands["pair"]
    )
    args = build_parser().parse_args(["finetune", "pair", "--builtin", "wic", "--out", "x"])
    assert args.kind == "pair" and args.builtin == "wic"


def test_each_task_s_flags_are_its_options_fields_and_another_task_s_are_refused_by_name(capsys):
    finetune = _commands(build_parser())["finetune"]
    for name, kind in TASKS.items():
        parser = _commands(finetune)[name]
        own = {f.name for f in option_fields(kind.task.Options)}
        visible = {a.dest for a in parser._actions if a.help != argparse.SUPPRESS}
        assert {f.name for f in option_fields(TrainConfig)} | own <= visible
        for other in TASKS.values():  # another task's option: hidden, never an option here
            assert not {f.name for f in option_fields(other.task.Options)} - own & visible
    # the command a card recorded when every task took every flag, its others at defaults
    old = ["finetune", "wsd", "--out", "x", "--head-pooling", "mean", "--head-dropout", "0.1",
           "--label-mode", "first", "--mlm-probability", "0.15", "--top-layers", "2"]  # fmt: skip
    args = build_parser(old).parse_args(old)
    assert args.head_pooling == "mean" and args.top_layers == 2 and not hasattr(args, "label_mode")
    for given in (["--label-mode", "all"], ["--whole-word-mask"]):
        argv = ["finetune", "wsd", "--out", "x", *given]
        with pytest.raises(SystemExit):
            build_parser(argv).parse_args(argv)
        assert f"argument {given[0]}: an option of the " in capsys.readouterr().err
