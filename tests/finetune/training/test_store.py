"""The run directory a fine-tuning run writes into: only an absent, empty or run directory (one
the workbench marked) is taken; the user's files are never replaced nor deleted; a finished or
unfinished run is kept unless resumed or overwritten; the new model replaces the old one only
once it is complete, the card written last."""

from __future__ import annotations

import json

import pytest

from workbench.errors import InputError, OutputError
from workbench.finetune.training.store import (
    CHECKPOINT_DIR,
    RUN_KIND,
    check_output,
    is_run_dir,
    model_files,
    staged_model_dir,
    start_output,
)
from workbench.outputs import mark_directory
from workbench.wsd.biencoder import CARD


def _finished(path):
    """A run directory holding a finished model, as the workbench leaves one."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text('{"old": true}')
    (path / CARD).write_text("{}")
    mark_directory(path, RUN_KIND)
    return path


def test_only_the_workbench_marker_makes_a_run_directory(tmp_path):
    assert not is_run_dir(tmp_path)
    (tmp_path / CHECKPOINT_DIR).mkdir()
    (tmp_path / CARD).write_text("{}")
    assert not is_run_dir(tmp_path)  # a user's folder with a checkpoint/ and a card is not one
    assert is_run_dir(_finished(tmp_path / "run"))


def test_absent_and_empty_directories_are_taken_and_nothing_is_made(tmp_path):
    check_output(tmp_path / "new", resume=False, overwrite=False)
    assert not (tmp_path / "new").exists()  # a check makes nothing
    empty = tmp_path / "empty"
    empty.mkdir()
    check_output(empty, resume=False, overwrite=True)


@pytest.mark.parametrize("resume", [False, True])
@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize(
    "users", [["config.json"], [CHECKPOINT_DIR], [CHECKPOINT_DIR, "config.json"], [CARD]]
)
def test_a_directory_of_the_users_files_is_refused_and_left_alone(
    tmp_path, users, overwrite, resume
):
    for name in users:
        if name == CHECKPOINT_DIR:
            (tmp_path / name).mkdir()
            (tmp_path / name / "thesis.txt").write_text("mine")
        else:
            (tmp_path / name).write_text("mine")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(OutputError, match="not a workbench run directory"):
        check_output(tmp_path, resume=resume, overwrite=overwrite)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_run_directory_holding_a_users_file_is_refused_even_with_overwrite(tmp_path):
    run = _finished(tmp_path / "run")
    (run / "notes.txt").write_text("the user's own notes")
    with pytest.raises(OutputError, match="also holds notes.txt"):
        check_output(run, resume=False, overwrite=True)
    assert (run / "notes.txt").read_text() == "the user's own notes"


def test_a_finished_run_is_kept_unless_overwritten(tmp_path):
    run = _finished(tmp_path / "run")
    with pytest.raises(InputError, match="already holds a fine-tuned model"):
        check_output(run, resume=False, overwrite=False)
    with pytest.raises(InputError, match="Nothing to resume"):
        check_output(run, resume=True, overwrite=False)
    check_output(run, resume=False, overwrite=True)
    start_output(run, resume=False, overwrite=True)
    assert (run / CARD).is_file() and (run / "config.json").is_file()  # kept until replaced


def test_an_unfinished_run_needs_resume_or_overwrite(tmp_path):
    run = tmp_path / "run"
    start_output(run, resume=False, overwrite=False)
    check_output(run, resume=False, overwrite=False)  # marked, no checkpoint yet: a new run
    (run / CHECKPOINT_DIR / "last.safetensors").write_bytes(b"x")
    with pytest.raises(InputError, match="unfinished run.*--resume.*--overwrite"):
        check_output(run, resume=False, overwrite=False)
    check_output(run, resume=True, overwrite=False)
    check_output(run, resume=False, overwrite=True)
    start_output(run, resume=False, overwrite=True)  # starting again drops the old checkpoint
    assert not (run / CHECKPOINT_DIR / "last.safetensors").exists()


def test_a_finished_run_with_its_checkpoint_kept_is_a_finished_run(tmp_path):
    run = _finished(tmp_path / "run")
    (run / CHECKPOINT_DIR).mkdir()
    (run / CHECKPOINT_DIR / "last.safetensors").write_bytes(b"x")
    mark_directory(run, RUN_KIND)
    with pytest.raises(InputError, match="already holds a fine-tuned model and a checkpoint"):
        check_output(run, resume=False, overwrite=False)
    check_output(run, resume=True, overwrite=False)


def test_the_new_model_replaces_the_old_only_when_complete(tmp_path):
    run = _finished(tmp_path / "run")
    start_output(run, resume=False, overwrite=True)
    (run / CHECKPOINT_DIR / "last.safetensors").write_bytes(b"x")
    with pytest.raises(RuntimeError, match="killed"), staged_model_dir(run) as staging:
        (staging / "config.json").write_text('{"new": true}')
        raise RuntimeError("killed while the gloss index is built")
    assert json.loads((run / "config.json").read_text()) == {"old": True}
    assert (run / CHECKPOINT_DIR / "last.safetensors").is_file()  # resumable
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no staging left
    with pytest.raises(OutputError, match="not complete"), staged_model_dir(run) as staging:
        (staging / "config.json").write_text('{"new": true}')  # no card: incomplete
    assert json.loads((run / "config.json").read_text()) == {"old": True}
    with staged_model_dir(run) as staging:
        (staging / "config.json").write_text('{"new": true}')
        assert model_files(staging) == ["config.json"]
        (staging / CARD).write_text("{}")
    assert json.loads((run / "config.json").read_text()) == {"new": True}
    assert not (run / CHECKPOINT_DIR).exists() and is_run_dir(run)
    assert [p.name for p in tmp_path.iterdir()] == ["run"]
