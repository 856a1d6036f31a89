"""The gloss cache: a new process finds every vector stored by others, shard by shard, and
shards written after its first read are read on the next miss."""

from __future__ import annotations

import numpy as np

from workbench.wsd.gloss_cache import GlossCache

IDENTITY = {"gloss_encoder": "f412054b280245dd", "pooling": "mean"}


def test_a_new_reader_finds_what_other_writers_stored_and_what_they_store_later(tmp_path):
    rng = np.random.default_rng(0)
    vec = {t: rng.normal(size=4).astype(np.float32) for t in ("a", "b", "c", "d")}
    first, second = GlossCache(IDENTITY, 4, tmp_path), GlossCache(IDENTITY, 4, tmp_path)
    first.store(["a", "b"], np.stack([vec["a"], vec["b"]]))
    second.store(["c", "a"], np.stack([vec["c"], vec["a"]]))  # "a" stored twice, the same vector
    reader = GlossCache(IDENTITY, 4, tmp_path)
    found_vectors, found = reader.lookup(["c", "x", "a", "b"])
    assert found.tolist() == [True, False, True, True] and len(reader) == 3
    expected = np.stack([vec["c"], vec["a"], vec["b"]])
    np.testing.assert_array_equal(found_vectors[[0, 2, 3]], expected)
    assert not found_vectors[1].any()  # a row not found is 0
    first.store(["d"], vec["d"][None])  # after the reader's first read
    again, found = reader.lookup(["d", "b"])
    assert found.all() and len(reader) == 4
    np.testing.assert_array_equal(again, np.stack([vec["d"], vec["b"]]))
