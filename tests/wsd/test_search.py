"""The torch range search (workbench.wsd.search) against FAISS: the same neighbours.

Run here on the CPU; on a machine with a GPU the same search runs on cuda (SenseIndex
``search="auto"`` picks it when FAISS has no GPU build).
"""

from __future__ import annotations

import sys

import faiss
import numpy as np
import pytest

from workbench.errors import DataError, InputError
from workbench.wsd.config import EncoderInfo, SenseIndexConfig
from workbench.wsd.index import SenseIndex
from workbench.wsd.predict import predict
from workbench.wsd.search import TorchRangeSearch

RNG = np.random.default_rng(0)


def unit_rows(n: int, dim: int) -> np.ndarray:
    x = RNG.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def faiss_range_search(rows, queries, starts, stops, k):
    index = faiss.IndexFlatIP(rows.shape[1])
    index.add(rows)
    scores = np.full((len(queries), k), np.nan, np.float32)
    found = np.full((len(queries), k), -1, np.int64)
    for i, (a, b) in enumerate(zip(starts, stops)):
        if b <= a:
            continue
        params = faiss.SearchParameters(sel=faiss.IDSelectorRange(int(a), int(b)))
        d, j = index.search(queries[i : i + 1], k, params=params)
        ok = j[0] >= 0
        scores[i, ok], found[i, ok] = d[0, ok], j[0, ok]
    return scores, found


@pytest.mark.parametrize("k", [1, 2, 5])
def test_same_neighbours_as_faiss(k, monkeypatch):
    rows, queries = unit_rows(3000, 48), unit_rows(900, 48)
    starts = RNG.integers(0, 2990, 900)
    stops = starts + RNG.integers(0, 40, 900)  # empty, shorter than k, and long ranges
    stops = np.minimum(stops, 3000)
    monkeypatch.setattr("workbench.wsd.search.CHUNK_ELEMENTS", 48 * 40 * 64)  # many chunks
    scores, found = TorchRangeSearch(rows, "cpu").search(queries, starts, stops, k)
    ref_scores, ref_found = faiss_range_search(rows, queries, starts, stops, k)
    np.testing.assert_array_equal(found, ref_found)
    np.testing.assert_allclose(scores, ref_scores, atol=1e-5)
    assert ((found >= starts[:, None]) & (found < stops[:, None]) | (found == -1)).all()
    assert (found[stops - starts == 0] == -1).all()


def test_bad_shapes_are_named():
    search = TorchRangeSearch(unit_rows(10, 4), "cpu")
    with pytest.raises(InputError, match="width 3"):
        search.search(unit_rows(2, 3), np.zeros(2, np.int64), np.ones(2, np.int64), 1)


def test_sense_index_torch_and_faiss_agree():
    info = EncoderInfo("toy", "fp-toy", 16, 3, "mean")
    lemmas = [f"lemma{i}" for i in range(40)]
    keys, vecs = [], []
    for i, lemma in enumerate(lemmas):
        for s in range(1 + i % 6):
            centre = unit_rows(1, 16)[0]
            for _ in range(3):
                keys.append((f"{lemma}%1:0{s}:00::",))
                vecs.append(centre + 0.3 * RNG.standard_normal(16).astype(np.float32))
    vecs = np.asarray(vecs, np.float32)
    cfg = SenseIndexConfig(layers="-1")
    by_faiss = SenseIndex(cfg, search="faiss").fit(vecs, keys, info=info)
    by_torch = SenseIndex(cfg, search="torch").fit(vecs, keys, info=info)
    queries = RNG.standard_normal((500, 16)).astype(np.float32)
    q_lemmas = [lemmas[i] for i in RNG.integers(0, 40, 500)]
    a = predict(by_faiss, queries, q_lemmas, ["NOUN"] * 500)
    b = predict(by_torch, queries, q_lemmas, ["NOUN"] * 500)
    assert [p.key for p in a] == [p.key for p in b]
    assert [p.runner_up for p in a] == [p.runner_up for p in b]
    np.testing.assert_allclose([p.score for p in a], [p.score for p in b], atol=1e-5)
    assert by_faiss.search_ == "faiss:cpu" and by_torch.search_ == "torch:cpu"
    auto = SenseIndex(cfg).fit(vecs, keys, info=info)
    predict(auto, queries[:5], q_lemmas[:5], ["NOUN"] * 5)
    assert auto.search_ == "faiss:cpu"  # no GPU here: FAISS on the CPU


def test_torch_search_needs_no_faiss(monkeypatch):
    """A machine without FAISS (a GPU box given only torch) still searches with torch, and
    ``auto`` picks it; asking FAISS to search there is a one-line error naming the package."""
    monkeypatch.setitem(sys.modules, "faiss", None)  # `import faiss` now raises ImportError
    info = EncoderInfo("toy", "fp-toy", 8, 3, "mean")
    vecs = unit_rows(12, 8)
    keys = [(f"lemma{i % 3}%1:0{i % 2}:00::",) for i in range(12)]
    cfg = SenseIndexConfig(layers="-1")
    by_torch = SenseIndex(cfg, search="torch").fit(vecs, keys, info=info)
    preds = predict(by_torch, vecs[:4], ["lemma0", "lemma1", "lemma2", "lemma0"], ["NOUN"] * 4)
    assert all(p.key and p.key.startswith(lemma) for p, lemma in
               zip(preds, ["lemma0", "lemma1", "lemma2", "lemma0"]))  # fmt: skip
    assert by_torch.search_ == "torch:cpu"
    auto = SenseIndex(cfg).fit(vecs, keys, info=info)
    assert [p.key for p in predict(auto, vecs[:4], ["lemma0"] * 4, ["NOUN"] * 4)] == [
        p.key for p in predict(by_torch, vecs[:4], ["lemma0"] * 4, ["NOUN"] * 4)
    ]
    assert auto.search_ == "torch:cpu"
    by_faiss = SenseIndex(cfg, search="faiss").fit(vecs, keys, info=info)
    with pytest.raises(DataError, match="FAISS is not installed"):
        predict(by_faiss, vecs[:2], ["lemma0", "lemma1"], ["NOUN"] * 2)
