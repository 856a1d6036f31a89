"""workbench.fileio: files are replaced whole or not at all; the SHA-256 helpers."""

from __future__ import annotations

import hashlib
import lzma

import pytest

from workbench.fileio import (
    atomic_path,
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
