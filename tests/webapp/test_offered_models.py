"""The models a server offers to its visitors: the packaged model, fetched models, the app's runs,
a hub id in the local cache, the owner's list; anything else gets one neutral refusal that says
nothing about the server's files. The app's runs folder takes plain folder names only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from webapp.offered_models import (
    NOT_OFFERED,
    OWNER_LIST,
    check_offered,
    is_offered,
    offered_models,
    run_directory,
    runs_dir,
)
from workbench.encoding.models import models_dir
from workbench.errors import InputError


def _model_dir(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    return path


@pytest.fixture
def server(tmp_cache, monkeypatch):
    """A cache with a fetched model and one app run; no owner's list."""
    monkeypatch.delenv(OWNER_LIST, raising=False)
    fetched = _model_dir(models_dir() / "all-mpnet-base-v2" / "unpacked")
    run = _model_dir(runs_dir() / "wic-1")
    return fetched, run


def test_offered_models_are_loaded_by_name_or_path(server):
    fetched, run = server
    assert check_offered(None) is None and check_offered("  ") is None  # the packaged model
    assert check_offered("all-mpnet-base-v2") == "all-mpnet-base-v2"
    assert check_offered("sentence-transformers/all-mpnet-base-v2")
    assert check_offered(str(run)) == str(run) and check_offered(str(fetched))
    assert str(run) in offered_models() and "all-mpnet-base-v2" in offered_models()


@pytest.mark.parametrize(
    "name",
    ["/etc", "/etc/passwd", "/nonexistent/dir", "~", ".", "..", "../../etc", "/", "a" * 20_000,
     "bert-base-uncased-not-cached", "x\x00y", "FINETUNED/../../etc", "file:///etc"],
)  # fmt: skip
def test_anything_else_gets_one_neutral_message(server, name):
    with pytest.raises(InputError) as err:
        check_offered(name)
    assert str(err.value) == NOT_OFFERED  # the same words whether the path exists or not
    assert not is_offered(name)


def test_paths_that_leave_the_own_folders_are_refused(server, tmp_path):
    _, run = server
    outside = _model_dir(tmp_path / "elsewhere")
    assert not is_offered(str(outside))
    assert not is_offered(str(run / ".." / ".." / ".." / outside.relative_to(outside.anchor)))
    link = runs_dir() / "sneaky"
    os.symlink(outside, link)  # a link inside the runs folder to a folder outside it
    assert not is_offered(str(link))
    assert not is_offered(str(runs_dir()))  # the folder itself is no model
    (runs_dir() / "empty").mkdir()
    assert not is_offered(str(runs_dir() / "empty"))  # no config.json: not a model


def test_the_owner_can_offer_more(server, tmp_path, monkeypatch):
    extra = _model_dir(tmp_path / "lab-model")
    monkeypatch.setenv(OWNER_LIST, os.pathsep.join([str(extra), "my-org/encoder"]))
    assert is_offered(str(extra)) and is_offered("my-org/encoder")
    assert not is_offered(str(tmp_path))
    assert "my-org/encoder" in offered_models()


def test_run_names_stay_inside_the_runs_folder(tmp_cache):
    assert run_directory("wic-pair_2.1") == runs_dir() / "wic-pair_2.1"
    for bad in ("../x", "/tmp/x", "a/b", "a\\b", "..", ".", "", " ", "x" * 81, ".hidden"):
        with pytest.raises(InputError, match="plain folder name"):
            run_directory(bad)
