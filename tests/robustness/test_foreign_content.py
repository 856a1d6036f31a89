"""Damaged or foreign content, symbolic-link loops, byte-order marks and caches that cannot be
written: one clear line and exit code 2, or the right answer, never a traceback, table-driven.

The classes: ``settings`` on content it did not write (binary, a broken JSON in a CSV line, an
HTML script or a PNG chunk, JSON nested too deep, a file too large); paths that lead nowhere
(a loop as an input, an output or a folder on the way; a directory where a file is wanted),
named as what they are; a UTF-8 byte-order mark opening an input file (key files, training
data); a cache that cannot be written or pruned (said, and the work still done); an exception no
check foresaw (one line).
"""

from __future__ import annotations

import os
import re
import socket
import struct
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.robustness.cli_errors import assert_one_line_error
from workbench.cli import wsd as wsd_cli
from workbench.cli.main import main
from workbench.corpora import datasets
from workbench.distributed.cluster import reach
from workbench.encoding.cache import EmbeddingCache
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import DataError, InputError
from workbench.finetune.data.readers import read_conll, read_table
from workbench.wsd.evaluate import load_corpus
from workbench.wsd.scoring import read_keys

BOM = "\ufeff"
XML = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<corpus lang="en" source="t"><text id="d000">'
    + "".join(
        f'<sentence id="d000.s00{i}"><instance id="d000.s00{i}.t000" lemma="bank" pos="NOUN">'
        f"bank</instance></sentence>"
        for i in range(3)
    )
    + "</text></corpus>\n"
)
GOLD = "".join(f"d000.s00{i}.t000 bank%1:14:00::\n" for i in range(3))


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


PNG = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", b"\x00" * 13)


@pytest.fixture
def world(tmp_path, monkeypatch, tiny_model_dir) -> Path:
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    w = tmp_path / "w"
    w.mkdir()
    (w / "tiny").symlink_to(tiny_model_dir)
    (w / "ok.txt").write_text("The bank is closed.\n")
    (w / "t.data.xml").write_text(XML)
    (w / "t.gold.key.txt").write_text(GOLD)
    (w / "train.csv").write_text("text,label\n" + "".join(f"w{i},{i % 2}\n" for i in range(8)))
    (w / "adir").mkdir()
    for a, b in (("loop1", "loop2"), ("loop2", "loop1")):
        (w / a).symlink_to(w / b)
    (w / "loop.data.xml").symlink_to(w / "loop.data.xml")
    (w / "loop.npz").symlink_to(w / "loop.npz")
    (w / "dangling.txt").symlink_to(w / "nowhere.txt")
    # settings: damaged or foreign content of every shape
    (w / "binary.png").write_bytes(b"\xff\xd8\xff\xe0 not a png, not text \x00\x81")
    (w / "bad.csv").write_text("# workbench settings: {not json\n1,2\n")
    (w / "bad.html").write_text(
        '<html><script type="application/json" id="workbench-settings">{"a": </script></html>'
    )
    chunk = b"workbench-settings\x00\x00\x00\x00\x00" + b"\xff\xfe not utf-8"
    (w / "latin.png").write_bytes(PNG + _png_chunk(b"iTXt", chunk))
    (w / "cut.png").write_bytes(PNG + struct.pack(">I", 1 << 30) + b"iTXtworkbench-settings")
    (w / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    (w / "deep.csv").write_text("# workbench settings: " + "[" * 200_000 + "\n")
    (w / "list.csv").write_text("# workbench settings: [1, 2]\nx\n")
    (w / "numbers.svg").write_text('<svg><metadata id="workbench-settings">42</metadata></svg>')
    (w / "empty.json").write_text("")
    os.mkfifo(w / "pipe.json")  # reading it would wait for a writer forever
    with (w / "huge.json").open("wb") as fh:  # sparse: takes no room
        fh.truncate(300 << 20)
    return w


SETTINGS = [
    ("binary", "binary.png", r"carries no workbench settings"),
    ("csv-bad-json", "bad.csv", r"settings cannot be read \(Expecting property name"),
    ("html-bad-script", "bad.html", r"settings cannot be read"),
    ("png-text-not-utf8", "latin.png", r"settings cannot be read \('utf-8' codec"),
    ("png-chunk-cut", "cut.png", r"PNG carries no workbench settings"),
    ("json-nested-too-deep", "deep.json", r"settings cannot be read \(maximum recursion"),
    ("csv-nested-too-deep", "deep.csv", r"settings cannot be read"),
    ("settings-a-list", "list.csv", r"settings are not a JSON object"),
    ("settings-a-number", "numbers.svg", r"settings are not a JSON object"),
    ("empty", "empty.json", r"carries no workbench settings"),
    ("too-large", "huge.json", r"huge.json is too large to be an exported table or figure"),
    ("a-directory", "adir", r"adir is a directory"),
    ("a-pipe", "pipe.json", r"pipe.json is not a regular file"),
    ("a-loop", "loop1", r"loop1 is a symbolic link that leads round in a loop"),
    ("dangling", "dangling.txt", r"dangling.txt is a symbolic link whose target does not exist"),
    ("missing", "nope.png", r"nope.png: no such file"),
]


@pytest.mark.parametrize("name, file, expect", SETTINGS, ids=[c[0] for c in SETTINGS])
def test_settings_of_damaged_or_foreign_content_is_one_line(world, capsys, name, file, expect):
    assert_one_line_error(["settings", str(world / file)], expect, capsys)


TINY = ("--model", "{w}/tiny", "--device", "cpu")
PATHS = [
    ("embed-input-a-loop", ("embed", "{w}/loop1", "--out", "{w}/o.npz", *TINY),
     r"loop1 is a symbolic link that leads round in a loop"),
    ("embed-input-dangling", ("embed", "{w}/dangling.txt", "--out", "{w}/o.npz", *TINY),
     r"dangling.txt is a symbolic link whose target does not exist"),
    ("embed-out-a-loop", ("embed", "{w}/ok.txt", "--out", "{w}/loop.npz", *TINY),
     r"loop.npz exists and is a symbolic link the workbench did not write"),
    ("embed-out-under-a-loop", ("embed", "{w}/ok.txt", "--out", "{w}/loop1/o.npz", *TINY),
     r"loop1/o.npz: Too many levels of symbolic links"),
    ("wsd-eval-data-a-loop", ("wsd", "eval", "--data", "{w}/loop.data.xml", *TINY),
     r"loop.data.xml is a symbolic link that leads round in a loop"),
    ("wsd-eval-data-a-loop-named-like-a-set", ("wsd", "eval", "--data", "{w}/loop1", *TINY),
     r"loop1 is a symbolic link that leads round in a loop"),
    ("wsd-eval-gold-a-directory", ("wsd", "eval", "--data", "{w}/t.data.xml", "--gold",
     "{w}/adir", *TINY), r"gold key file .*adir is a directory, not a file"),
    ("wsd-score-a-directory", ("wsd", "score", "{w}/adir", "{w}/t.gold.key.txt"),
     r"adir is a directory, not a file"),
    ("wsd-score-a-loop", ("wsd", "score", "{w}/t.gold.key.txt", "{w}/loop1"),
     r"loop1 is a symbolic link that leads round in a loop"),
    ("finetune-dev-a-directory", ("finetune", "seqcls", "--train", "{w}/train.csv", "--dev",
     "{w}/adir", "--out", "{w}/run", *TINY), r"adir is a directory, not a file"),
    ("finetune-train-a-loop", ("finetune", "seqcls", "--train", "{w}/loop1", "--out",
     "{w}/run", *TINY), r"loop1 is a symbolic link that leads round in a loop"),
    ("finetune-out-a-loop", ("finetune", "seqcls", "--train", "{w}/train.csv", "--out",
     "{w}/loop1", *TINY), r"loop1"),
    ("senses-source-a-directory", ("senses", "separation", "bank", "--source", "{w}/adir",
     *TINY), r"adir"),
    ("geometry-corpus-a-loop", ("geometry", "--corpus", "{w}/loop1", "--out", "{w}/g", *TINY),
     r"loop1"),
]  # fmt: skip


@pytest.mark.parametrize("name, argv, expect", PATHS, ids=[c[0] for c in PATHS])
def test_paths_that_lead_nowhere_are_named_as_such(world, capsys, name, argv, expect):
    line = assert_one_line_error([a.format(w=world) for a in argv], expect, capsys)
    assert "unknown dataset" not in line and "Symlink loop" not in line
    assert not (world / "run").exists() and not (world / "g").exists()


# ---------------------------------------------------------------------------- byte-order marks


def test_a_byte_order_mark_does_not_drop_the_first_key(world, capsys):
    (world / "bom.gold.key.txt").write_text(BOM + GOLD)
    assert (
        main(["wsd", "score", str(world / "bom.gold.key.txt"), str(world / "t.gold.key.txt")]) == 0
    )
    out = capsys.readouterr().out
    assert re.search(r"R=\s*100(\.0)?%", out), out
    assert read_keys(world / "bom.gold.key.txt", gold=True) == read_keys(world / "t.gold.key.txt")
    shutil_copy = world / "bom.data.xml"
    shutil_copy.write_text(XML)
    (world / "bom.gold.key.txt").replace(world / "bom.gold.key.txt")
    corpus = load_corpus(str(shutil_copy), str(world / "bom.gold.key.txt"))  # wsd eval --gold
    assert corpus.n_gold_keys() == 3 and corpus.n_unknown_gold == 0


BOM_DATA: list[tuple[str, str, Callable[[Path], object], Callable[[object], bool]]] = [
    ("csv", "text,label\na b,0\nc d,1\n", lambda p: read_table(p, pair=False),
     lambda d: [e.label for e in d.examples] == ["0", "1"]),
    ("tsv", "text\tlabel\na b\t0\n", lambda p: read_table(p, pair=False),
     lambda d: d.examples[0].text == "a b"),
    ("jsonl", '{"text": "a b", "label": "x"}\n', lambda p: read_table(p, pair=False),
     lambda d: d.examples[0].label == "x"),
    ("conll", "Bank\tB-ORG\nof\tI-ORG\n\n", read_conll,
     lambda d: d.examples[0].words[0] == "Bank"),
]  # fmt: skip


@pytest.mark.parametrize("suffix, text, read, ok", BOM_DATA, ids=[c[0] for c in BOM_DATA])
def test_training_data_opening_with_a_byte_order_mark_is_read_right(
    tmp_path, suffix, text, read, ok
):
    path = tmp_path / f"data.{suffix}"
    path.write_text(BOM + text, encoding="utf-8")
    assert ok(read(path))


# ---------------------------------------------------------------------------- caches


def _embed(world: Path) -> list[str]:
    return ["embed", str(world / "ok.txt"), "--out", str(world / "v.npz"), "--model",
            str(world / "tiny"), "--device", "cpu"]  # fmt: skip


def test_a_cache_that_cannot_be_written_is_a_warning_and_the_work_is_done(
    world, capsys, monkeypatch
):
    def refused(self, key):
        raise PermissionError(13, "Permission denied", str(self.dir / f".{key}.host-1-0.tmp"))

    monkeypatch.setattr(EmbeddingCache, "new_entry", refused)
    assert main(_embed(world)) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: the cache dir .* cannot be written \(Permission denied\): the "
                     r"vectors are computed without the cache", err), err  # fmt: skip
    assert ".tmp" not in err  # the cache is named, not a temporary of it
    assert LayerwiseEmbeddings.load(world / "v.npz").words[:2] == ["The", "bank"]


def test_a_cache_that_fills_up_while_an_entry_is_stored_keeps_the_vectors(
    world, capsys, monkeypatch
):
    assert main([*_embed(world), "--no-cache"]) == 0
    reference = np.asarray(LayerwiseEmbeddings.load(world / "v.npz").vectors)

    def full(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(EmbeddingCache, "commit", full)
    assert main([*_embed(world), "--overwrite"]) == 0
    assert "No space left on device" in capsys.readouterr().err
    np.testing.assert_array_equal(np.asarray(LayerwiseEmbeddings.load(world / "v.npz").vectors),
                                  reference)  # fmt: skip
    assert not any((world.parent / "cache" / "embeddings").iterdir())


def test_a_prune_that_cannot_remove_says_so_and_exits_2(world, capsys, monkeypatch):
    assert main(_embed(world)) == 0
    capsys.readouterr()
    monkeypatch.setattr(EmbeddingCache, "remove", lambda self, key: False)  # a read-only dir
    expect = r"could not remove 1 of the 1 entries to remove from .*embeddings"
    assert_one_line_error(["cache", "prune", "--all"], expect, capsys)
    assert len(EmbeddingCache().entries()) == 1


# ---------------------------------------------------------------------------- the rest


def test_an_exception_no_check_foresaw_is_one_line(world, capsys, monkeypatch):
    def broken(*a, **k):
        raise ValueError("something no check foresaw\nsecond line")

    monkeypatch.setattr(wsd_cli, "scorer_output", broken)
    argv = ["wsd", "score", str(world / "t.gold.key.txt"), str(world / "t.gold.key.txt")]
    expect = r"^workbench: error: ValueError: something no check foresaw \(unexpected"
    assert_one_line_error(argv, expect, capsys)
    monkeypatch.setenv("WORKBENCH_TRACEBACK", "1")
    with pytest.raises(ValueError):
        main(argv)


def test_an_unreachable_cluster_is_said_at_once():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(InputError, match=rf"cannot reach the Ray cluster at 127.0.0.1:{port}"):
        reach(f"127.0.0.1:{port}", 30)
    assert time.monotonic() - started < 5
    with pytest.raises(InputError, match="is not host:port"):
        reach("no-port-here", 1)


def test_a_download_that_fails_leaves_no_folder_and_never_replaces_a_link(tmp_path):
    dest = tmp_path / "new" / "data"
    with pytest.raises(DataError, match="download of .* failed"):
        datasets.download((tmp_path / "nothing.zip").as_uri(), dest)
    assert not (tmp_path / "new").exists()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / datasets.FRAMEWORK_DIR).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(DataError, match="already exists"):
        datasets.download((tmp_path / "nothing.zip").as_uri(), tmp_path / "data")
    assert (tmp_path / "data" / datasets.FRAMEWORK_DIR).is_symlink()
