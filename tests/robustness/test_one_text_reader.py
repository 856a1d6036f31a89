"""One reader of text files for every command (:func:`workbench.corpora.text.read_text_file`):
the size from ``stat`` before anything is read, ``.xz`` inflated no further than the limit, no
NUL anywhere, UTF-8 or UTF-16/32 with a byte-order mark; each reader refuses the same files."""

from __future__ import annotations

import lzma
from collections.abc import Callable
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.corpora import occurrences as occ
from workbench.corpora.parsing import read_gold_keys
from workbench.corpora.readers import read_text
from workbench.errors import WorkbenchError
from workbench.finetune.data import readers as ft
from workbench.wsd.scoring import read_keys

GOOD_KEY = b"d000.s000.t000 bank%1:14:00::\n"
TEXT = b"A bank by the river .\n"


def _occurrences(path: Path) -> object:
    return occ.lemma_occurrences("bank", str(path))


def _table(path: Path) -> object:
    return ft.read_table(path, False)


READERS: dict[str, tuple[str, bytes, Callable[[Path], object]]] = {
    # name: (file suffix, a good content, the reader)
    "corpus text": (".txt", b"A bank by the river .\n", read_text),
    "occurrences": (".txt", TEXT, _occurrences),
    "mlm text": (".txt", b"A bank by the river .\n", ft.read_text),
    "csv table": (".csv", b"text,label\nA bank .,x\n", lambda p: ft.read_table(p, False)),
    "jsonl table": (".jsonl", b'{"text": "A bank .", "label": "x"}\n', _table),
    "conll": (".conll", b"A\tO\nbank\tB-X\n", ft.read_conll),
    "gold keys": (".key.txt", GOOD_KEY, read_gold_keys),
    "scored keys": (".key.txt", GOOD_KEY, read_keys),
}  # fmt: skip
NAMES = sorted(READERS)


def _write(tmp_path: Path, name: str, data: bytes, xz: bool = False) -> Path:
    suffix = READERS[name][0]
    path = tmp_path / f"data{suffix}{'.xz' if xz else ''}"
    path.write_bytes(lzma.compress(data) if xz else data)
    return path


@pytest.mark.parametrize("name", NAMES)
def test_every_reader_reads_a_good_file(tmp_path, name):
    READERS[name][2](_write(tmp_path, name, READERS[name][1]))


@pytest.mark.parametrize("name", NAMES)
def test_every_reader_refuses_a_nul_past_the_first_block(tmp_path, name):
    good = READERS[name][1]
    data = good * (70_000 // len(good) + 1) + b"\x00" + good  # past the old 64 KiB sniff
    with pytest.raises(WorkbenchError, match="not a text file"):
        READERS[name][2](_write(tmp_path, name, data))


@pytest.mark.parametrize("name", NAMES)
def test_every_reader_refuses_a_file_past_the_limit_before_reading_it(tmp_path, name, monkeypatch):
    monkeypatch.setenv("WORKBENCH_LIMIT_TEXT_BYTES", "4096")
    path = _write(tmp_path, name, READERS[name][1])
    with path.open("r+b") as fh:
        fh.truncate(10**9)  # sparse: a gigabyte of NULs that is never read
    with pytest.raises(WorkbenchError, match="over the limit"):
        READERS[name][2](path)


@pytest.mark.parametrize("name", ["corpus text", "gold keys", "scored keys"])
def test_an_xz_file_inflates_no_further_than_the_limit(tmp_path, name, monkeypatch):
    monkeypatch.setenv("WORKBENCH_LIMIT_TEXT_BYTES", "100000")
    good = READERS[name][1]
    READERS[name][2](_write(tmp_path, name, good, xz=True))
    big = _write(tmp_path, name, good * (10**6 // len(good)), xz=True)  # ~10 KB packed
    with pytest.raises(WorkbenchError, match="inflates past the limit"):
        READERS[name][2](big)
    broken = _write(tmp_path, name, good, xz=True)
    broken.write_bytes(broken.read_bytes()[:20])
    with pytest.raises(WorkbenchError, match="not a valid .xz file"):
        READERS[name][2](broken)


@pytest.mark.parametrize("name", NAMES)
def test_every_reader_refuses_latin1_and_reads_utf16(tmp_path, name):
    good = READERS[name][1]
    with pytest.raises(WorkbenchError, match="not UTF-8"):
        READERS[name][2](
            _write(tmp_path, name, good.replace(b"bank", "b\u00e4nk".encode("latin-1")))
        )
    READERS[name][2](_write(tmp_path, name, good.decode().encode("utf-16")))


def test_embed_refuses_a_big_nul_file_by_its_size(tmp_path, capsys, tmp_cache):
    path = tmp_path / "zeros.txt"
    with path.open("wb") as fh:
        fh.truncate(300 * 10**6)  # sparse: 300 MB of NULs
    out = tmp_path / "o.npz"
    assert main(["embed", str(path), "--out", str(out), "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "over the limit of 256 MiB" in err, err
    assert not out.exists()
