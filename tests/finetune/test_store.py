"""The run directory a fine-tuning run writes into: only an absent, empty or run directory is
taken; the user's files are never replaced; a finished run is kept unless resumed or
overwritten."""

from __future__ import annotations

import pytest

from workbench.errors import InputError, OutputError
from workbench.finetune.store import CHECKPOINT_DIR, is_run_dir, prepare_output
from workbench.wsd.biencoder import CARD


def test_what_counts_as_a_run_directory(tmp_path):
    assert not is_run_dir(tmp_path)
    (tmp_path / CHECKPOINT_DIR).mkdir()
    assert is_run_dir(tmp_path)  # a started run
    finished = tmp_path / "finished"
    finished.mkdir()
    (finished / CARD).write_text("{}")
    assert is_run_dir(finished)


def test_absent_and_empty_directories_are_taken(tmp_path):
    prepare_output(tmp_path / "new", resume=False, overwrite=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    prepare_output(empty, resume=False, overwrite=True)


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_directory_of_the_users_files_is_refused_and_left_alone(tmp_path, overwrite):
    (tmp_path / "config.json").write_text("mine")
    with pytest.raises(OutputError, match="not a workbench run directory"):
        prepare_output(tmp_path, resume=False, overwrite=overwrite)
    assert (tmp_path / "config.json").read_text() == "mine"


def test_a_finished_run_is_kept_unless_resumed_or_overwritten(tmp_path):
    (tmp_path / CARD).write_text("{}")
    with pytest.raises(InputError, match="already holds a fine-tuned model"):
        prepare_output(tmp_path, resume=False, overwrite=False)
    prepare_output(tmp_path, resume=True, overwrite=False)
    assert (tmp_path / CARD).is_file()  # resuming keeps it
    prepare_output(tmp_path, resume=False, overwrite=True)
    assert not tmp_path.exists()  # overwriting starts from nothing


def test_an_unfinished_run_directory_is_taken(tmp_path):
    (tmp_path / CARD).write_text("{}")
    (tmp_path / CHECKPOINT_DIR).mkdir()
    prepare_output(tmp_path, resume=False, overwrite=False)
    assert (tmp_path / CHECKPOINT_DIR).is_dir()
