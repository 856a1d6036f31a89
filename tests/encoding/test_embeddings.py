"""LayerwiseEmbeddings on disk: every file whole or not at all, a consistent set (a table that
does not belong to its vectors is refused), words that survive any character, damaged files
refused with a DataError, and a file the user did not name never replaced."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

from tests.conftest import REPO
from workbench.encoding.embeddings import LayerwiseEmbeddings, pack_words, unpack_words
from workbench.encoding.wordtable import ROW_HEADER, escape_cell, read_table, unescape_cell
from workbench.errors import DataError, OutputError
from workbench.outputs import LEDGER

HOSTILE = [
    "tab\there", "new\nline", "carriage\rreturn", "back\\slash", "\\t", "\\", "trailing\x00",
    "\x00", "line\u2028sep", "para\u2029sep", "nel\x85", "bell\x07", "lone\ud800surrogate",
    "é", "日本", "😀", '"', "NA", "  spaced  ", "#comment",
]  # fmt: skip


def _emb(words: list[str], n_sentences: int = 2, dim: int = 4) -> LayerwiseEmbeddings:
    n = len(words)
    rng = np.random.default_rng(0)
    sentence = np.array([i * n_sentences // n for i in range(n)], dtype=np.int64)
    position = np.array([int((sentence[:i] == sentence[i]).sum()) for i in range(n)], np.int64)
    return LayerwiseEmbeddings(
        vectors=rng.normal(size=(n, 2, dim)).astype(np.float32),
        layers=(0, 2),
        words=list(words),
        sentence_index=sentence,
        word_index=position,
        spans=np.stack([np.arange(n), np.arange(n) + 1], axis=1).astype(np.int64),
        n_sentences=n_sentences,
        n_hidden=3,
        model_name="toy",
        fingerprint="f" * 16,
        pooling="mean",
    )


def test_escaping_round_trips_any_character():
    for word in [*HOSTILE, "".join(map(chr, range(0, 0x250)))]:
        cell = escape_cell(word)
        assert not {"\t", "\n", "\r", "\x85", "\u2028", "\u2029"} & set(cell)
        assert unescape_cell(cell) == word
    with pytest.raises(DataError, match="bad escape"):
        unescape_cell("a\\qb")


def test_hostile_words_survive_the_npz_and_the_tables(tmp_path):
    emb = _emb(HOSTILE)
    ids = ["s\t1", "s\n2"]
    out = emb.save(tmp_path / "v.npz", sentence_ids=ids)
    back = LayerwiseEmbeddings.load(out)
    assert back.words == HOSTILE
    np.testing.assert_array_equal(back.vectors, emb.vectors)
    rows = read_table(tmp_path / "v.tsv")
    assert tuple(rows[0]) == ROW_HEADER and [r[3] for r in rows[1:]] == HOSTILE
    assert len((tmp_path / "v.tsv").read_text().splitlines()) == len(HOSTILE) + 1
    assert [r[1] for r in read_table(tmp_path / "v.sentences.tsv")[1:]] == ids
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        LEDGER,
        "v.npz",
        "v.sentences.tsv",
        "v.tsv",
    ]


def test_pack_words_keeps_every_character_and_takes_their_size():
    words = ["a" * 10_000, *(["b"] * 1000), "x\x00"]
    packed = pack_words(words)
    assert unpack_words(packed) == words
    assert packed["words_utf8"].nbytes < 12_000  # a fixed-width array would take 40 MB
    broken = {**packed, "words_offsets": packed["words_offsets"][::-1].copy()}
    with pytest.raises(DataError, match="offsets"):
        unpack_words(broken)


def test_a_table_from_another_writer_is_refused(tmp_path):
    _emb(["a", "b", "c", "d"]).save(tmp_path / "one.npz")
    _emb(["w", "x", "y", "z"]).save(tmp_path / "v.npz")
    (tmp_path / "v.tsv").write_bytes((tmp_path / "one.tsv").read_bytes())
    with pytest.raises(DataError, match="does not match the vectors in v.npz"):
        read_table(tmp_path / "v.tsv")
    (tmp_path / "one.npz").unlink()
    with pytest.raises(DataError, match="one.npz is missing"):
        read_table(tmp_path / "one.tsv")
    assert read_table(tmp_path / "one.tsv", check=False)[1][3] == "a"


def test_a_file_the_user_did_not_name_is_never_replaced(tmp_path):
    mine = tmp_path / "v.tsv"
    mine.write_text("my own notes\n")
    with pytest.raises(OutputError, match="v.tsv exists and is a file the workbench did not write"):
        _emb(["a", "b"]).save(tmp_path / "v.npz")
    assert mine.read_text() == "my own notes\n" and not (tmp_path / "v.npz").exists()
    _emb(["a", "b"]).save(tmp_path / "w.npz")
    _emb(["c", "d"]).save(tmp_path / "w.npz")  # our own table is replaced
    assert read_table(tmp_path / "w.tsv")[1][3] == "c"


def _damage(path, how):
    if how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "not-zip":
        path.write_text("hello")
    else:
        with np.load(path) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays["meta"]))
        if how == "meta-list":
            arrays["meta"] = np.array("[]")
        elif how == "meta-null":
            arrays["meta"] = np.array("null")
        elif how == "meta-no-layers":
            meta.pop("layers")
            arrays["meta"] = np.array(json.dumps(meta))
        elif how == "meta-bad-layers":
            meta["layers"] = ["a", "b"]
            arrays["meta"] = np.array(json.dumps(meta))
        elif how == "fewer-vectors":
            arrays["vectors"] = arrays["vectors"][:-1]
        elif how == "no-spans":
            arrays.pop("spans")
        elif how == "pickled":
            arrays["vectors"] = np.array([{"a": 1}], dtype=object)
        np.savez(path, **arrays, allow_pickle=True)


@pytest.mark.parametrize(
    "how",
    ["truncated", "empty", "not-zip", "meta-list", "meta-null", "meta-no-layers",
     "meta-bad-layers", "fewer-vectors", "no-spans", "pickled"],
)  # fmt: skip
def test_damaged_files_are_data_errors(tmp_path, how):
    path = _emb(["a", "b", "c"]).save(tmp_path / "v.npz")
    _damage(path, how)
    with pytest.raises(DataError, match="v.npz"):
        LayerwiseEmbeddings.load(path)


def test_two_writers_of_one_path_never_mix_their_files_silently(tmp_path):
    """Each process saves its own embeddings to the same path again and again: no writer
    fails on the other's temporary, and at the end the table either belongs to the vectors
    or is refused."""
    script = textwrap.dedent(
        f"""
        import sys
        from tests.encoding.test_embeddings import _emb
        words = [sys.argv[1] * (i + 1) for i in range(300)]
        for _ in range(15):
            _emb(words).save({str(tmp_path / "v.npz")!r}, sentence_ids=["a", "b"])
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, w], cwd=REPO, stderr=subprocess.PIPE)
        for w in ("x", "y")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    emb = LayerwiseEmbeddings.load(tmp_path / "v.npz")
    try:
        words = [r[3] for r in read_table(tmp_path / "v.tsv")[1:]]
    except DataError:
        words = None
    assert words is None or words == emb.words
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        LEDGER,
        "v.npz",
        "v.sentences.tsv",
        "v.tsv",
    ]
    assert zipfile.is_zipfile(tmp_path / "v.npz")
