from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from workbench.encoding.cache import EmbeddingCache, encode_cached
from workbench.errors import CacheError

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
    import shutil

    encode_cached(default_encoder, SENTS)
    foreign = _entry(tmp_cache)
    encode_cached(tiny_encoder, SENTS)
    mine = next(p for p in (tmp_cache / "embeddings").iterdir() if p != foreign)
    shutil.rmtree(mine)
    shutil.copytree(foreign, mine)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        emb = encode_cached(tiny_encoder, SENTS)
    assert any("made by model 'all-MiniLM" in str(w.message) for w in caught)
    assert emb.dim == 32 and emb.fingerprint == tiny_encoder.fingerprint


def test_failed_encoding_leaves_no_entry(tiny_encoder, tmp_cache):
    from workbench.errors import InputError

    with pytest.raises(InputError):
        encode_cached(tiny_encoder, SENTS, keep=[[99], []])
    assert not list((tmp_cache / "embeddings").glob("*"))
