"""workbench.fileio: files are replaced whole or not at all; the SHA-256 helpers."""

from __future__ import annotations

import hashlib
import lzma
import subprocess
import sys
from pathlib import Path

import pytest

from workbench import fileio
from workbench.errors import OutputError, WorkbenchError
from workbench.fileio import (
    atomic_path,
    check_writable,
    sha256_file,
    sha256_files,
    sha256_json,
    sha256_stream,
    sha256_words,
)


def test_atomic_path_replaces_on_success_and_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "d" / "keys.txt"
    with atomic_path(target) as tmp:
        tmp.write_text("one\n")
    assert target.read_text() == "one\n"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "one\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["keys.txt"]


def test_sha256_file_and_stream_are_hashlib_sha256_of_the_bytes(tmp_path):
    path = tmp_path / "a.bin"
    path.write_bytes(b"alpha" * 1000)
    expected = hashlib.sha256(b"alpha" * 1000).hexdigest()
    assert sha256_file(path) == sha256_file(path, chunk=7) == expected
    with lzma.open(tmp_path / "a.bin.xz", "wb") as fh:
        fh.write(b"alpha" * 1000)
    with lzma.open(tmp_path / "a.bin.xz", "rb") as fh:
        assert sha256_stream(fh) == expected


def test_sha256_files_hashes_names_digests_and_order(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("one")
    b.write_text("two")
    assert sha256_files([a, b]) != sha256_files([b, a])
    assert sha256_files([a]) != sha256_file(a)
    line = f"a.txt\0{sha256_file(a)}\n".encode()
    assert sha256_files([a]) == hashlib.sha256(line).hexdigest()


def test_sha256_json_is_canonical():
    assert sha256_json({"b": [1, 2], "a": "é"}) == sha256_json({"a": "é", "b": (1, 2)})
    assert sha256_json({"a": 1}) != sha256_json({"a": 2})


def test_sha256_words_is_stable():
    # cache keys and reference samples store this digest: it must not change
    words = [["A", "bank", "."]]
    assert sha256_words(words) == (
        "07e4eefcaff322fb7ff88f03bc1466315f75da2e5b9a433a10ee09330f97815b"
    )
    assert sha256_words(words, [[1]]) == (
        "1ef095575ec7b74dd98e4b2bc280b1581dbcb0175055b912244cb2c09cbe4c58"
    )
    assert sha256_words([["A", "bank."]]) != sha256_words(words)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temporary_names_are_unique_per_writer_and_stale_ones_are_found(tmp_path):
    target = tmp_path / "out.npz"
    a, b = fileio.temporary_path(target), fileio.temporary_path(target, ".npz")
    assert a != b and a.parent == tmp_path and b.name.endswith(".tmp.npz")
    mine = fileio.temporary_path(target)
    mine.write_text("in progress")  # this process is alive: not stale
    dead = tmp_path / f".out.npz.{fileio.HOST}-{_dead_pid()}-0123abcd.tmp.npz"
    dead.write_text("half")
    dead_dir = tmp_path / f".entry.{fileio.HOST}-{_dead_pid()}-0123abcd.tmp"
    dead_dir.mkdir()
    (dead_dir / "vectors.npy").write_text("half")
    other_host = tmp_path / f".out.npz.otherhost-{_dead_pid()}-0123abcd.tmp"
    other_host.write_text("someone else's")
    unrelated = tmp_path / ".out.npz.notes"
    unrelated.write_text("the user's")
    assert fileio.stale_temporaries(tmp_path) == sorted([dead, dead_dir])
    assert fileio.stale_temporaries(tmp_path, names=["out.npz"]) == [dead]
    assert fileio.remove_stale_temporaries(tmp_path) == sorted([dead, dead_dir])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [mine.name, other_host.name, unrelated.name]
    )


def test_unwritable_outputs_are_output_errors(tmp_path):
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x")
    for bad, reason in [
        (tmp_path, "is a directory"),
        (a_file / "x.npz", "is a file, not a directory"),
        (a_file / "deeper" / "x.npz", "is a file, not a directory"),
    ]:
        with pytest.raises(OutputError, match=reason):
            check_writable(bad)
    assert check_writable(tmp_path / "new" / "x.npz") == tmp_path / "new" / "x.npz"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.txt"]  # no probe, no folder
    with pytest.raises(OutputError, match="cannot write") as info:
        with atomic_path(a_file / "x.npz") as tmp:
            tmp.write_text("never")
    assert isinstance(info.value, WorkbenchError) and isinstance(info.value, OSError)
    assert a_file.read_text() == "x"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_a_path_under_proc_is_refused_before_and_during_writing():
    with pytest.raises(OutputError, match="cannot write /proc/x.npz"):
        check_writable("/proc/x.npz")
    with pytest.raises(OutputError, match="cannot write /proc/x.npz"):
        with atomic_path("/proc/x.npz", suffix=".npz") as tmp:
            tmp.write_bytes(b"never")
