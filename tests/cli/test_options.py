"""The command line a report carries (workbench.cli.options.command_line): parsed again, it
gives the same arguments, for every command that writes one."""

from __future__ import annotations

import shlex

import pytest

from workbench.cli.main import build_parser
from workbench.cli.options import command_line

#: (argv, the words after ``workbench``, the positionals) of each command whose reports carry
#: their command line.
COMMANDS = [
    (["geometry", "--sample", "30", "--case-sensitive", "--dtype", "float32"], ["geometry"], []),
    (["geometry", "--corpus", "semcor", "--out", "out dir/geo"], ["geometry"], []),
    (
        ["senses", "separation", "bank", "plant", "--layers", "4", "last4-sum", "--limit", "200"],
        ["senses", "separation"],
        ["lemmas"],
    ),
    (
        ["senses", "plot", "bank", "--layers", "3", "6", "--out", "b.html"],
        ["senses", "plot"],
        ["lemmas"],
    ),  # fmt: skip
    (
        [
            "wsd",
            "eval",
            "semeval2007",
            "senseval2",
            "--system",
            "plain",
            "--no-baselines",
            "--sweep",
            "--gloss-weight",
            "0.3",
            "--json",
            "r.json",
        ],
        ["wsd", "eval"],
        ["datasets", "text"],
    ),  # fmt: skip
    (["wsd", "eval"], ["wsd", "eval"], ["datasets", "text"]),
    (["wsd", "layers", "--specs", "6;last4-sum"], ["wsd", "layers"], ["datasets", "text"]),
]


@pytest.mark.parametrize(("argv", "words", "positionals"), COMMANDS)
def test_the_rebuilt_command_parses_to_the_same_arguments(argv, words, positionals):
    parser = build_parser()
    args = parser.parse_args(argv)
    line = command_line(args, words, positionals)
    assert line.startswith("workbench " + " ".join(words))
    again = parser.parse_args(shlex.split(line)[1:])
    assert vars(again) == vars(args)


def test_options_are_spelled_out_with_their_defaults():
    args = build_parser().parse_args(["senses", "separation", "bank"])
    line = command_line(args, ["senses", "separation"], ["lemmas"])
    assert line.startswith("workbench senses separation bank --")
    assert "--pooling mean" in line and "--dtype auto" in line  # defaults, written out
