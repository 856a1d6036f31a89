"""The benchmark suite's runner (``python -m bench``) finds every script by its name."""

from __future__ import annotations

import ast

import pytest

from bench.__main__ import resolve, scripts


def test_every_script_is_found_by_its_name_and_says_what_it_measures():
    found = scripts()
    assert {key.split("/")[0] for key in found} == {"speed", "experiments", "gpu"}
    for key, path in found.items():
        assert resolve(key) == key
        assert resolve(f"bench/{key}.py") == key
        assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), key


def test_a_bare_name_finds_its_folder_and_an_unknown_one_is_refused():
    assert resolve("extract") == "speed/extract"
    assert resolve("gpu.session") == "gpu/session"
    with pytest.raises(SystemExit, match="no bench script"):
        resolve("no_such_benchmark")
