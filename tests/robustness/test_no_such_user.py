"""Issue 53, class 10: a path that starts with ``~user`` for a user this system lacks is one
line, "no such user", while the command line is parsed: ``os.path.expanduser`` leaves such a
path as it is (an output would be written into a folder named ``~nouser`` in the current one)
and ``Path.expanduser`` raises ``RuntimeError`` (the last-resort handler's "unexpected").

Every option and argument that takes a path, or a name or a path, parses through
``cli.options.path_arg``, ``name_or_path_arg`` or ``home_expanded``: the walk over the whole
parser below finds them and tries each; ``~`` and ``~user`` of a real user are expanded.
"""

from __future__ import annotations

import argparse
import os
import pwd
from pathlib import Path

import pytest

from tests.robustness.cli_errors import assert_one_line_error
from workbench.cli.main import build_parser
from workbench.cli.options import home_expanded, name_or_path_arg, path_arg
from workbench.errors import InputError
from workbench.fileio import expand_home

NO_USER = "~no_such_user_h53a"
PATH_TYPES = (path_arg, name_or_path_arg, home_expanded)


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subparsers(sub, (*path, name))


def _path_arguments() -> list[tuple[tuple[str, ...], argparse.ArgumentParser, argparse.Action]]:
    return [
        (path, parser, action)
        for path, parser in _subparsers(build_parser())
        for action in parser._actions
        if action.type in PATH_TYPES
    ]


PATHS = _path_arguments()


def _argv(path: tuple[str, ...], parser: argparse.ArgumentParser, action: argparse.Action):
    value = f"{NO_USER}/x"
    if action.option_strings:
        return [*path, action.option_strings[-1], value]
    positionals = [a for a in parser._actions if not a.option_strings and a.nargs != 0]
    return [*path, *[value] * len(positionals)]  # every positional given: this one fails first


def test_every_path_argument_is_found():
    named = {
        (" ".join(p), a.option_strings[-1] if a.option_strings else a.dest) for p, _, a in PATHS
    }
    assert len(PATHS) >= 40
    expected = {("embed", "--out"), ("embed", "inputs"), ("info", "--model"),
                ("wsd eval", "--gold"), ("wsd eval", "--model"), ("wsd train", "--out"),
                ("data download", "--dest"),
                ("senses separation", "--source"), ("finetune compare", "tuned"),
                ("geometry", "--save-standardizer"), ("settings", "file")}  # fmt: skip
    assert expected <= named, expected - named


@pytest.mark.parametrize(
    ("path", "parser", "action"),
    PATHS,
    ids=[
        " ".join(p) + " " + (a.option_strings[-1] if a.option_strings else a.dest)
        for p, _, a in PATHS
    ],
)
def test_a_path_of_no_user_is_one_line_before_any_work(
    path, parser, action, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert_one_line_error(_argv(path, parser, action), r"no such user 'no_such_user_h53a'", capsys)
    assert list(tmp_path.iterdir()) == []  # no folder named ~no_such_user_h53a


def test_home_and_a_real_users_home_are_expanded(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert path_arg("~/runs/a") == tmp_path / "runs" / "a"
    assert name_or_path_arg("~") == str(tmp_path)
    me = pwd.getpwuid(os.getuid())
    assert home_expanded(f"~{me.pw_name}/x") == str(Path(me.pw_dir) / "x")
    assert name_or_path_arg("bert-base-uncased") == "bert-base-uncased"  # a name stays a name
    assert home_expanded("a~b") == "a~b"


def test_workbench_data_of_no_user_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORKBENCH_DATA", f"{NO_USER}/data")
    assert_one_line_error(["data", "verify"], r"WORKBENCH_DATA .* no such user", capsys)
    assert list(tmp_path.iterdir()) == []


def test_workbench_cache_of_no_user_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORKBENCH_CACHE", f"{NO_USER}/cache")
    assert_one_line_error(["cache", "list"], r"WORKBENCH_CACHE .* no such user", capsys)
    assert list(tmp_path.iterdir()) == []


def test_expand_home_names_where_the_path_came_from():
    with pytest.raises(InputError, match=r"^--dest '~no_such_user_h53a/d' starts with .* user"):
        expand_home(f"{NO_USER}/d", "--dest")
    assert expand_home("x/~y") == "x/~y"
