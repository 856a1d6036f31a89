from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

from workbench.encoding.cache import EmbeddingCache, encode_cached
from workbench.encoding.encoder import Encoder
from workbench.errors import CacheError, InputError
from workbench.fileio import HOST

SENTS = [["The", "bank", "raised", "rates", "."], ["We", "sat", "by", "the", "river", "bank"]]


def _entry(cache_dir):
    entries = [p for p in (cache_dir / "embeddings").iterdir() if not p.name.startswith(".")]
    assert len(entries) == 1
    return entries[0]


def test_hit_returns_identical_arrays(default_encoder, tmp_cache):
    cold = encode_cached(default_encoder, SENTS)
    direct = default_encoder.encode(SENTS)
    warm = encode_cached(default_encoder, SENTS)
    np.testing.assert_array_equal(np.asarray(cold.vectors), direct.vectors)
    np.testing.assert_array_equal(np.asarray(warm.vectors), np.asarray(cold.vectors))
    assert warm.words == direct.words and warm.layers == direct.layers
    assert (warm.spans == direct.spans).all()
    assert len(list((tmp_cache / "embeddings").iterdir())) == 1


def test_key_covers_layers_pooling_keep_and_corpus(tiny_encoder, tmp_cache):
    encode_cached(tiny_encoder, SENTS)
    encode_cached(tiny_encoder, SENTS, layers=[0])
    encode_cached(tiny_encoder, SENTS, pooling="first")
    encode_cached(tiny_encoder, SENTS, keep=[[1], [5]])
    encode_cached(tiny_encoder, [SENTS[0]])
    encode_cached(tiny_encoder, SENTS, store_dtype="float16")
    assert len(list((tmp_cache / "embeddings").iterdir())) == 6


def test_corrupted_file_is_detected_and_recomputed(tiny_encoder, tmp_cache):
    first = np.array(encode_cached(tiny_encoder, SENTS).vectors)
    vec = _entry(tmp_cache) / "vectors.npy"
    data = bytearray(vec.read_bytes())
    data[-3] ^= 0xFF
    vec.write_bytes(bytes(data))
    cache = EmbeddingCache()
    key = _entry(tmp_cache).name
    identity = json.loads((_entry(tmp_cache) / "meta.json").read_text())["identity"]
    with pytest.raises(CacheError, match="corrupted"):
        cache.load(key, identity)
    with pytest.warns(UserWarning, match="corrupted.*recomputing"):
        again = encode_cached(tiny_encoder, SENTS)
    np.testing.assert_array_equal(np.asarray(again.vectors), first)


def test_truncated_file_is_refused(tiny_encoder, tmp_cache):
    encode_cached(tiny_encoder, SENTS)
    vec = _entry(tmp_cache) / "vectors.npy"
    vec.write_bytes(vec.read_bytes()[:-100])
    with pytest.warns(UserWarning, match="truncated"):
        again = encode_cached(tiny_encoder, SENTS)
    assert again.vectors.shape == (11, 3, 32)


def test_entry_from_another_model_is_refused(tiny_encoder, default_encoder, tmp_cache):
    """A foreign entry placed under this key (copied by hand, say) is refused, not used."""
    encode_cached(default_encoder, SENTS)
    foreign = _entry(tmp_cache)
    encode_cached(tiny_encoder, SENTS)
    mine = next(p for p in (tmp_cache / "embeddings").iterdir() if p != foreign)
    shutil.rmtree(mine)
    shutil.copytree(foreign, mine)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        emb = encode_cached(tiny_encoder, SENTS)
    assert any("meta.json of another entry" in str(w.message) for w in caught)
    assert emb.dim == 32 and emb.fingerprint == tiny_encoder.fingerprint


def test_failed_encoding_leaves_no_entry(tiny_encoder, tmp_cache):
    with pytest.raises(InputError):
        encode_cached(tiny_encoder, SENTS, keep=[[99], []])
    assert not list((tmp_cache / "embeddings").glob("*"))


def _damage_meta(entry, how):
    meta_path = entry / "meta.json"
    meta = json.loads(meta_path.read_text())
    if how in ("[]", "null", "3", '"text"'):
        meta_path.write_text(how)
    elif how == "truncated":
        meta_path.write_text(meta_path.read_text()[:50])
    elif how == "missing":
        meta_path.unlink()
    elif how.startswith("drop:"):
        meta.pop(how[5:])
        meta_path.write_text(json.dumps(meta))
    elif how == "edited":  # a field changed by hand: the checksum no longer fits
        meta["embeddings"]["layers"] = [0]
        meta_path.write_text(json.dumps(meta))
    elif how == "files-null":
        meta["files"] = None
        meta_path.write_text(json.dumps(meta))


@pytest.mark.parametrize(
    "how",
    ["[]", "null", "3", '"text"', "truncated", "missing", "drop:identity", "drop:files",
     "drop:embeddings", "drop:checksum", "edited", "files-null"],
)  # fmt: skip
def test_a_damaged_meta_json_is_refused_and_recomputed(tiny_encoder, tmp_cache, how):
    first = np.array(encode_cached(tiny_encoder, SENTS).vectors)
    entry = _entry(tmp_cache)
    _damage_meta(entry, how)
    key = entry.name
    with pytest.raises(CacheError, match=str(entry)):
        EmbeddingCache().load(key, {"any": "identity"})
    with pytest.warns(UserWarning, match="recomputing"):
        again = encode_cached(tiny_encoder, SENTS)
    np.testing.assert_array_equal(np.asarray(again.vectors), first)
    assert EmbeddingCache().entries()[0].problem == ""


@pytest.mark.parametrize("how", ["truncated", "garbage", "missing", "swapped"])
def test_every_file_of_an_entry_is_checked(tiny_encoder, tmp_cache, how):
    """index.npz damaged, missing or replaced by another entry's (other words, same sizes)."""
    other = [["A", "bank", "fell", "down", "."], ["We", "ran", "to", "the", "river", "mouth"]]
    encode_cached(tiny_encoder, other)
    (other_entry,) = list((tmp_cache / "embeddings").iterdir())
    first = encode_cached(tiny_encoder, SENTS)
    entry = next(p for p in (tmp_cache / "embeddings").iterdir() if p != other_entry)
    index = entry / "index.npz"
    if how == "truncated":
        index.write_bytes(index.read_bytes()[:-40])
    elif how == "garbage":
        index.write_bytes(b"\0" * index.stat().st_size)
    elif how == "missing":
        index.unlink()
    else:
        index.write_bytes((other_entry / "index.npz").read_bytes())
    with pytest.warns(UserWarning, match="index.npz"):
        again = encode_cached(tiny_encoder, SENTS)
    assert again.words == first.words == [w for s in SENTS for w in s]


def test_a_copied_model_shares_the_entries(tiny_model_dir, tiny_encoder, tmp_cache, tmp_path):
    encode_cached(tiny_encoder, SENTS)
    copy = Encoder(str(shutil.copytree(tiny_model_dir, tmp_path / "copy")), device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no refusal, no recomputation
        hit = encode_cached(copy, SENTS)
    assert hit.model_name == str(tmp_path / "copy")
    assert len(EmbeddingCache().entries()) == 1


def test_stale_temporaries_of_dead_writers_are_removed(tiny_encoder, tmp_cache):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    root = tmp_cache / "embeddings"
    root.mkdir(parents=True)
    dead_new = root / f".{'a' * 32}.{HOST}-{proc.pid}-0badc0de.tmp"
    dead_old = root / f".tmp-{'b' * 32}-{proc.pid}-0badc0de"
    alive = root / f".{'c' * 32}.{HOST}-{os.getpid()}-0badc0de.tmp"
    for path in (dead_new, dead_old, alive):
        path.mkdir()
        (path / "vectors.npy").write_bytes(b"\0" * 1000)
    cache = EmbeddingCache()
    assert cache.stale() == sorted([dead_new, dead_old])
    encode_cached(tiny_encoder, SENTS)  # a writer cleans up after dead ones
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".")) == [alive.name]


def test_entries_and_prune(tiny_encoder, tmp_cache):
    encode_cached(tiny_encoder, SENTS)
    encode_cached(tiny_encoder, SENTS, layers=[0])
    encode_cached(tiny_encoder, [SENTS[0]])
    cache = EmbeddingCache()
    entries = cache.entries()
    assert len(entries) == 3 and all(e.problem == "" and e.bytes > 0 for e in entries)
    assert {e.shape for e in entries} == {(11, 3, 32), (11, 1, 32), (5, 3, 32)}
    # the oldest use goes first under a size limit; a damaged entry always goes
    oldest = entries[-1]
    past = time.time() - 10 * 86400
    os.utime(cache.path(oldest.key) / "meta.json", (past, past))
    damaged = entries[0]
    (cache.path(damaged.key) / "index.npz").write_bytes(b"broken")
    assert "index.npz" in next(e.problem for e in cache.entries() if e.key == damaged.key)
    result = cache.prune(older_than_days=5)
    assert set(result.entries) == {oldest.key, damaged.key}
    assert [e.key for e in cache.entries()] == [entries[1].key]
    assert cache.prune(max_bytes=0).entries == (entries[1].key,)
    assert cache.entries() == []
