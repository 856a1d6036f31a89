"""The output rule (workbench.outputs), table-driven: which files and folders the workbench
recognises as its own, which outputs it refuses before any work (making nothing), and that a
folder is replaced whole, in one step, only when nothing in it is the user's."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from workbench import outputs
from workbench.errors import OutputError
from workbench.outputs import (
    LEDGER,
    claim_directory,
    claim_file,
    claim_files,
    mark_directory,
    output_file,
    read_ledger,
    replace_directory,
    written_by_workbench,
)


def _ours(folder: Path, name: str = "report.json", text: str = "{}") -> Path:
    with output_file(folder / name) as tmp:
        tmp.write_text(text)
    return folder / name


def _later(path: Path) -> None:
    """Wait until a write to ``path`` gets a later modification time (coarse clocks)."""
    before = path.stat().st_mtime_ns
    while time.time_ns() <= before + 1_000_000:
        time.sleep(0.002)


# ---------------------------------------------------------------------- what is the workbench's


def _appended(p: Path) -> None:
    _later(p)
    with p.open("a") as fh:
        fh.write(" ")


def _copied_over(p: Path) -> None:
    (p.parent / "mine.json").write_text(p.read_text())
    _later(p)
    shutil.copy(p.parent / "mine.json", p)  # same bytes, the user's file


def _moved_over(p: Path) -> None:
    (p.parent / "mine.json").write_text("{}")
    os.replace(p.parent / "mine.json", p)


def _touched(p: Path) -> None:
    _later(p)
    p.touch()


def _linked(p: Path) -> None:
    p.unlink()
    (p.parent / "elsewhere.json").write_text("{}")
    p.symlink_to(p.parent / "elsewhere.json")


def _ledger(text: str) -> Callable[[Path], None]:
    def damage(p: Path) -> None:
        (p.parent / LEDGER).write_text(text)

    return damage


def _ledger_gone(p: Path) -> None:
    (p.parent / LEDGER).unlink()


def _ledger_a_folder(p: Path) -> None:
    (p.parent / LEDGER).unlink()
    (p.parent / LEDGER).mkdir()


AFTER_WRITING = [
    ("untouched", lambda p: None, True),
    ("rewritten-by-the-workbench", lambda p: _ours(p.parent, p.name, "[1]") and None, True),
    ("appended-to", _appended, False),
    ("a-copy-over-it", _copied_over, False),
    ("a-file-moved-over-it", _moved_over, False),
    ("touched", _touched, False),
    ("a-symbolic-link", _linked, False),
    ("ledger-deleted", _ledger_gone, False),
    ("ledger-garbage", _ledger("\x00\xff not json"), False),
    ("ledger-a-list", _ledger("[]"), False),
    ("ledger-other-format", _ledger('{"format": "x", "entries": {}}'), False),
    ("ledger-bad-entry", _ledger(json.dumps({"format": outputs.FORMAT,
                                             "entries": {"report.json": {"size": "2"}}})), False),
    ("ledger-deep", _ledger("[" * 100_000 + "]" * 100_000), False),
    ("ledger-a-folder", _ledger_a_folder, False),
]  # fmt: skip


@pytest.mark.parametrize("what, change, ours", AFTER_WRITING, ids=[c[0] for c in AFTER_WRITING])
def test_a_file_is_the_workbenchs_only_as_it_wrote_it(tmp_path, what, change, ours):
    path = _ours(tmp_path)
    assert written_by_workbench(path)
    change(path)
    assert written_by_workbench(path) is ours
    if not ours:
        before = path.read_bytes()
        with pytest.raises(OutputError, match="the workbench did not write"):
            claim_file(path)
        with pytest.raises(OutputError, match="the workbench did not write"):
            _ours(tmp_path)
        assert path.read_bytes() == before
        assert claim_file(path, overwrite=True) == path  # an explicit option replaces it
    else:
        assert claim_file(path) == path


# ---------------------------------------------------------------------- files refused before work


@pytest.fixture
def place(tmp_path) -> Path:
    (tmp_path / "input.txt").write_text("the input\n")
    (tmp_path / "mine.json").write_text("the user's own\n")
    (tmp_path / "adir").mkdir()
    os.link(tmp_path / "input.txt", tmp_path / "hard.txt")
    (tmp_path / "soft.txt").symlink_to(tmp_path / "input.txt")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    return tmp_path


CLAIMS = [
    # name, given, overwrite, error (None: claimed)
    ("empty", "", False, r"--out is empty"),
    ("blank", "  ", True, r"--out is empty"),
    ("trailing-separator", "new/", False, r"ends with a path separator"),
    ("a-directory", "adir", True, r"adir: it is a directory"),
    ("a-device", "/dev/null", True, r"/dev/null: it exists and is not a regular file"),
    ("the-input", "input.txt", True, r"is the input"),
    ("a-hard-link-to-the-input", "hard.txt", True, r"is the input"),
    ("a-link-to-the-input", "soft.txt", True, r"is the input"),
    ("a-users-file", "mine.json", False, r"mine.json exists and is a file the workbench did not"),
    ("a-users-file-overwrite", "mine.json", True, None),
    ("a-link-loop", "loop1", False, r"loop1 exists and is a symbolic link the workbench did not"),
    ("under-a-file", "mine.json/x.json", True, r"mine.json is a file, not a directory"),
    ("under-a-link-loop", "loop1/x.json", True, r"loop1/x.json: Too many levels of symbolic links"),
    ("new-folders", "a/b/c.json", False, None),
]  # fmt: skip


@pytest.mark.parametrize("name, given, overwrite, error", CLAIMS, ids=[c[0] for c in CLAIMS])
def test_claim_file_refuses_before_any_work_and_makes_nothing(place, name, given, overwrite, error):
    if given.startswith("/dev/") and not Path(given).exists():
        pytest.skip(f"no {given} here")
    before = sorted(os.listdir(place))
    target = given if given.startswith("/") or not given.strip() else f"{place}/{given}"
    if error is None:
        assert claim_file(target, overwrite=overwrite, inputs=[place / "input.txt"])
    else:
        with pytest.raises(OutputError, match=error):
            claim_file(target, overwrite=overwrite, inputs=[place / "input.txt"])
    assert sorted(os.listdir(place)) == before  # no probe, no folder, no ledger


def test_one_file_is_never_claimed_for_two_outputs(place):
    (place / "here").symlink_to(place)  # another name of the same folder
    with pytest.raises(OutputError, match="named for two outputs"):
        claim_files([place / "report.json", place / "here" / "report.json"])
    with pytest.raises(OutputError, match="is the input"):
        claim_files([place / "a.json", place / "soft.txt"], inputs=[place / "input.txt"])
    assert claim_files([place / "a.json", place / "b.json"]) == [place / "a.json",
                                                               place / "b.json"]  # fmt: skip


def test_a_file_made_while_the_output_is_written_is_not_replaced(tmp_path):
    target = tmp_path / "report.json"
    with pytest.raises(OutputError, match="did not write"), output_file(target) as tmp:
        tmp.write_text("ours")
        target.write_text("the user's, made meanwhile")
    assert target.read_text() == "the user's, made meanwhile"
    assert sorted(os.listdir(tmp_path)) == ["report.json"]  # the temporary is gone


def test_the_ledger_lists_what_was_written_and_forgets_what_is_gone(tmp_path):
    a, b = _ours(tmp_path, "a.json"), _ours(tmp_path, "b.json")
    assert sorted(read_ledger(tmp_path).entries) == ["a.json", "b.json"]
    b.unlink()
    _ours(tmp_path, "c.json")
    assert sorted(read_ledger(tmp_path).entries) == ["a.json", "c.json"]
    assert read_ledger(tmp_path).entries["a.json"]["size"] == a.stat().st_size


# ---------------------------------------------------------------------- folders as one output


def _index(path: Path, kind: str = "sense-index") -> Path:
    path.mkdir()
    (path / "meta.json").write_text("{}")
    mark_directory(path, kind)
    return path


FOLDERS = [
    ("absent", lambda p: None, "absent"),
    ("empty", lambda p: p.mkdir(), "empty"),
    ("only-a-ledger-and-a-temporary", lambda p: (p.mkdir(), (p / LEDGER).write_text("x"),
     (p / ".meta.json.host-1-0123abcd.tmp").write_text("x")), "empty"),
    ("ours", _index, "ours"),
    ("a-file", lambda p: p.write_text("x"), r"exists and is not a directory"),
    ("the-users", lambda p: (p.mkdir(), (p / "thesis.txt").write_text("x")),
     r"is not empty and is not a workbench sense index directory \(it holds thesis.txt\)"),
    ("the-users-with-a-checkpoint", lambda p: (p.mkdir(), (p / "checkpoint").mkdir()),
     r"not a workbench sense index directory"),
    ("another-kind", lambda p: _index(p, "shards"), r"not a workbench sense index directory"),
    ("ours-with-a-users-file", lambda p: (_index(p), (p / "notes.txt").write_text("x")),
     r"also holds notes.txt, which the workbench did not write"),
]  # fmt: skip


@pytest.mark.parametrize("name, make, expect", FOLDERS, ids=[f[0] for f in FOLDERS])
def test_claim_directory(tmp_path, name, make, expect):
    path = tmp_path / "out"
    make(path)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    if expect in ("absent", "empty", "ours"):
        assert claim_directory(path, "sense-index") == expect
    else:
        with pytest.raises(OutputError, match=expect):
            claim_directory(path, "sense-index")
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("exchange", [True, False], ids=["one-step", "rename-aside"])
def test_a_folder_is_replaced_whole(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(outputs, "_exchange", lambda a, b: False)
    old = _index(tmp_path / "out")
    new = tmp_path / ".out.new"
    new.mkdir()
    (new / "meta.json").write_text('{"new": 1}')
    replace_directory(new, old)
    assert json.loads((old / "meta.json").read_text()) == {"new": 1}
    assert sorted(os.listdir(tmp_path)) == ["out"]
    replace_directory(_index(tmp_path / "again"), tmp_path / "fresh")  # onto nothing
    assert (tmp_path / "fresh" / "meta.json").is_file() and not (tmp_path / "again").exists()
