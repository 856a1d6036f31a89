"""``workbench finetune``'s commands and flags come from the task registry and the built-ins."""

from __future__ import annotations

import argparse

from workbench.cli.main import build_parser
from workbench.finetune.data.splits import BUILTINS
from workbench.finetune.tasks.registry import TASKS


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
