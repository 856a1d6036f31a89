"""A limit is a ceiling, never an allocation; its value is bounded where it is read; and a
limit set lower than a cached file refuses it for this run and keeps it (never taken for
damage)."""

from __future__ import annotations

import io
import shutil
import socket
import zipfile

import numpy as np
import pytest

from workbench import limits
from workbench.cli.main import main
from workbench.corpora.text import read_text_file
from workbench.encoding import rows
from workbench.encoding.exported.store import RECORD_FILE, read_export
from workbench.errors import CacheError, DataError, LimitError
from workbench.finetune.training.activations import ActivationCache
from workbench.wsd.gloss_cache import GlossCache


@pytest.mark.parametrize(
    ("name", "value"),
    [("json_bytes", "1e11"), ("json_bytes", "1e25"), ("text_bytes", "1e25"),
     ("array_bytes", "1e300"), ("text_bytes", "9223372036854775807")],
)  # fmt: skip
def test_a_huge_limit_reads_small_files(tmp_path, monkeypatch, name, value):
    monkeypatch.setenv(f"WORKBENCH_LIMIT_{name.upper()}", value)
    path = tmp_path / "small.json"
    path.write_text('{"a": 1}\n', encoding="utf-8")
    assert limits.read_json(path) == {"a": 1}
    assert read_text_file(path) == '{"a": 1}\n'
    assert limits.read_limited(path, float(value)) == b'{"a": 1}\n'
    assert limits.limit(name) <= limits.CEILING


@pytest.mark.parametrize("name", ["download_seconds", "read_seconds", "query_seconds"])
def test_a_huge_time_limit_is_bounded_where_it_is_read(monkeypatch, name):
    monkeypatch.setenv(f"WORKBENCH_LIMIT_{name.upper()}", "1e300")
    seconds = limits.limit(name)
    assert seconds == limits.CEILING_SECONDS
    with socket.socket() as sock:
        sock.settimeout(seconds)  # overflowed before
    assert limits.Deadline(name, "a wait").left() > 0


def test_a_file_read_to_its_limit_and_no_further(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 1000)
    assert len(limits.read_limited(path, 1000)) == 1000
    with pytest.raises(LimitError, match="over the limit"):
        limits.read_limited(path, 999)


def _gloss_cache(tmp_path) -> tuple[GlossCache, list[str]]:
    cache = GlossCache({"encoder": "toy"}, 8, root=tmp_path)
    texts = [f"gloss {i}" for i in range(300)]
    cache.store(texts, np.random.default_rng(0).normal(size=(300, 8)).astype(np.float32))
    return cache, texts


def test_a_limit_below_a_gloss_shard_refuses_it_and_keeps_it(tmp_path, monkeypatch):
    cache, texts = _gloss_cache(tmp_path)
    shards = sorted(cache.folder.glob("*.npz"))
    assert len(shards) == 1
    monkeypatch.setenv("WORKBENCH_LIMIT_ARRAY_BYTES", "1000")  # the vectors are 9,600 bytes
    fresh = GlossCache({"encoder": "toy"}, 8, root=tmp_path)
    with pytest.raises(LimitError, match="it is kept") as info:
        fresh.lookup(texts[:3])
    assert "WORKBENCH_LIMIT_ARRAY_BYTES" in str(info.value)
    assert sorted(cache.folder.glob("*.npz")) == shards  # CPU-hours of work, not deleted
    monkeypatch.delenv("WORKBENCH_LIMIT_ARRAY_BYTES")
    again = GlossCache({"encoder": "toy"}, 8, root=tmp_path)
    assert again.lookup(texts[:3])[1].all()


def test_a_damaged_gloss_shard_is_still_removed(tmp_path):
    cache, texts = _gloss_cache(tmp_path)
    (shard,) = cache.folder.glob("*.npz")
    shard.write_bytes(shard.read_bytes()[:200])
    fresh = GlossCache({"encoder": "toy"}, 8, root=tmp_path)
    with pytest.warns(UserWarning, match="cannot be used"):
        assert not fresh.lookup(texts[:3])[1].any()
    assert not shard.exists()


def test_a_limit_is_not_damage_but_a_lie_is(tmp_path, monkeypatch):
    path = tmp_path / "a.npz"
    np.savez(path, vectors=np.zeros((100, 8), np.float32))
    monkeypatch.setenv("WORKBENCH_LIMIT_ARRAY_BYTES", "100")
    with pytest.raises(LimitError):
        limits.check_npz(path)
    monkeypatch.delenv("WORKBENCH_LIMIT_ARRAY_BYTES")
    limits.check_npz(path)
    assert issubclass(LimitError, DataError)  # callers that catch DataError still refuse it


def _lying_shard(folder, dim: int = 8) -> None:
    """An activation shard whose ``hidden`` header declares 10^12 rows over 16 bytes."""

    def npy(array: np.ndarray) -> bytes:
        buf = io.BytesIO()
        np.save(buf, array)
        return buf.getvalue()

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f2", "fortran_order": False, "shape": (10**12, dim)}
    )
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / "lying.npz", "w") as zf:
        zf.writestr("hidden.npy", header.getvalue() + b"\0" * 16)
        zf.writestr("digests.npy", npy(np.zeros((1, 32), np.uint8)))
        zf.writestr("offsets.npy", npy(np.array([0, 10**12])))


def test_an_activation_shard_that_declares_too_much_is_removed_and_rebuilt(tmp_path):
    identity = {"frozen": "a" * 16, "below": 2}
    folder = ActivationCache(identity, 8, tmp_path).folder
    _lying_shard(folder)
    with pytest.warns(RuntimeWarning, match="lying.npz: is damaged .*declares"):
        cache = ActivationCache(identity, 8, tmp_path)  # no MemoryError
    assert not (folder / "lying.npz").exists()
    seqs, states = [[101, 7, 102]], [np.full((3, 8), 0.5, np.float32)]
    cache.store(seqs, states)
    assert ActivationCache(identity, 8, tmp_path).lookup(seqs)[1] == 1


def test_an_activation_shard_past_a_lowered_limit_is_kept(tmp_path, monkeypatch):
    identity = {"frozen": "a" * 16, "below": 2}
    seqs, states = [[101, 7, 102]], [np.full((3, 8), 0.5, np.float32)]
    ActivationCache(identity, 8, tmp_path).store(seqs, states)
    monkeypatch.setenv("WORKBENCH_LIMIT_ARRAY_BYTES", "8")
    with pytest.warns(RuntimeWarning, match="it is kept"):
        cache = ActivationCache(identity, 8, tmp_path)
    assert len(list(cache.folder.glob("*.npz"))) == 1
    monkeypatch.delenv("WORKBENCH_LIMIT_ARRAY_BYTES")
    assert ActivationCache(identity, 8, tmp_path).lookup(seqs)[1] == 1


def test_vectors_past_the_memory_available_are_refused_before_they_are_allocated(monkeypatch):
    """``embed`` on 10 MB of one-letter words asked numpy for 52.5 GiB and reached the
    last-resort handler as ``MemoryError``: the size is known from the word count, and is
    refused (one line, exit 2) before anything is encoded; a memory map past the disk's free
    space the same way."""
    monkeypatch.setattr("workbench.limits.memory_available", lambda: 1 << 20)
    with pytest.raises(LimitError, match="5,242,880 words x 7 hidden states x 384 .* 52.5 GiB"):
        rows.allocate((5_242_880, 7, 384), np.dtype(np.float32), None)
    assert rows.allocate((10, 7, 384), np.dtype(np.float32), None).shape == (10, 7, 384)


def test_a_memory_map_past_the_free_disk_is_refused_before_it_is_made(tmp_path, monkeypatch):
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr("workbench.limits.shutil.disk_usage", lambda p: usage._replace(free=1000))
    with pytest.raises(LimitError, match="on disk, more than the 1000 bytes free"):
        rows.allocate((1000, 7, 384), np.dtype(np.float32), tmp_path / "v.npy")
    assert not (tmp_path / "v.npy").exists()


def test_embed_of_millions_of_one_letter_words_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("workbench.limits.memory_available", lambda: 1 << 20)
    (tmp_path / "words.txt").write_text("a " * 20000 + "\n")
    code = main(["embed", str(tmp_path / "words.txt"), "--out", str(tmp_path / "v.npz"),
                 "--no-cache", "--device", "cpu"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("workbench: error: the vectors of 20,000 words")
    assert "MemoryError" not in "\n".join(err) and not (tmp_path / "v.npz").exists()


def test_an_export_record_past_a_lowered_json_limit_is_refused_and_kept(tmp_path, monkeypatch):
    """An ONNX export's ``export.json`` over a lowered JSON limit is a LimitError (refused for
    this run), not damage: the export is not removed and made again; a record that is not
    JSON still is damage (CacheError, removed by the caller)."""
    folder = tmp_path / "f412054b280245dd-float32-opset17-v1"
    folder.mkdir()
    record = folder / RECORD_FILE
    record.write_text('{"fingerprint": "f412054b280245dd", "dtype": "float32"}', encoding="utf-8")
    monkeypatch.setenv("WORKBENCH_LIMIT_JSON_BYTES", "10")
    with pytest.raises(LimitError, match="over the limit"):
        read_export(folder, "f412054b280245dd", "float32", 17)
    assert record.is_file()
    monkeypatch.delenv("WORKBENCH_LIMIT_JSON_BYTES")
    record.write_text("{not json", encoding="utf-8")
    with pytest.raises(CacheError, match="not valid JSON"):
        read_export(folder, "f412054b280245dd", "float32", 17)
