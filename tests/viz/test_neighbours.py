"""Explore numerics: sentence splitting, word lookup, layerwise similarity, neighbours, the
neighbour pool of several corpora."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import InputError
from workbench.viz import neighbours as explore
from workbench.viz.neighbours import PoolPart


def test_split_sentences_lines_and_paragraphs():
    text = "The bank rose. We sat on the bank!\n\n  \nIt rained."
    assert explore.split_sentences(text) == [
        ["The", "bank", "rose", "."],
        ["We", "sat", "on", "the", "bank", "!"],
        ["It", "rained", "."],
    ]
    for empty in ("", "   \n\t"):
        with pytest.raises(InputError, match="empty"):
            explore.split_sentences(empty)
    with pytest.raises(InputError, match="more than"):
        explore.split_sentences("A b.\n" * (explore.MAX_SENTENCES + 1))


def test_find_word_and_counts_agree():
    sents = explore.split_sentences("Banks fail. The bank died.\nA river bank. He dies.")
    places = explore.find_word(sents, "bank")
    assert places == [(0, 0), (1, 1), (2, 2)]
    counts = dict(explore.word_counts(sents))
    assert counts["bank"] == len(places) and counts["banks"] == 1
    assert explore.word_counts(sents)[0] == ("bank", 3)
    ranked = [w for w, _ in explore.word_counts(explore.split_sentences("the cat and the cat."))]
    assert ranked == ["cat", "the", "and"]  # repeated content words before function words
    with pytest.raises(InputError, match="does not occur"):
        explore.find_word(sents, "money")


def test_layerwise_similarity():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(4, 3, 8)).astype(np.float32)
    v[2] = 2 * v[0]  # same direction at every layer
    v[3, 1] = -v[0, 1]
    sim = explore.layerwise_similarity(v, 0)
    assert sim.shape == (4, 3)
    np.testing.assert_allclose(sim[0], 1, atol=1e-6)
    np.testing.assert_allclose(sim[2], 1, atol=1e-6)
    assert sim[3, 1] == pytest.approx(-1, abs=1e-6)
    with pytest.raises(InputError):
        explore.layerwise_similarity(v, 9)


def test_neighbour_index_matches_brute_force():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 16)).astype(np.float32)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    index = explore.NeighbourIndex().fit(x)
    scores, rows = index.search(x[7], k=5, exclude=[7])
    expected = np.argsort(-(unit @ unit[7]))
    assert rows.tolist() == [r for r in expected if r != 7][:5]
    np.testing.assert_allclose(scores, (unit @ unit[7])[rows], atol=1e-5)
    assert 7 not in rows


def test_locate_rows_and_snippet():
    assert explore.locate_rows(np.array([0, 0, 1]), np.array([0, 2, 1]), [(1, 1), (0, 2)]) == [2, 1]
    with pytest.raises(InputError):
        explore.locate_rows(np.array([0]), np.array([0]), [(3, 3)])
    words = "a b c d e f g h".split()
    assert explore.snippet(words, 4, 1) == "… d [e] f …"
    assert explore.snippet(words, 0, 1) == "[a] b …"


def _emb(vectors: np.ndarray, sentences: list[list[str]]) -> LayerwiseEmbeddings:
    """Every word of ``sentences``, one row each, with ``vectors`` ``(n_words, 2, dim)``."""
    places = [(s, i) for s, words in enumerate(sentences) for i in range(len(words))]
    return LayerwiseEmbeddings(
        vectors=np.asarray(vectors, dtype=np.float32),
        layers=(0, 1),
        words=[sentences[s][i] for s, i in places],
        sentence_index=np.array([s for s, _ in places], dtype=np.int64),
        word_index=np.array([i for _, i in places], dtype=np.int64),
        spans=np.zeros((len(places), 2), dtype=np.int64),
        n_sentences=len(sentences),
        n_hidden=2,
        model_name="test",
        fingerprint="test",
        pooling="mean",
    )


class _DropFirst:
    """A 'correction' that zeroes dimension 0 (as removing a rogue dimension would)."""

    def transform(self, x: np.ndarray) -> np.ndarray:
        out = np.array(x, dtype=np.float32)
        out[..., 0] = 0
        return out


def test_neighbour_pool_rows_contexts_and_parts():
    ref = [["a", "river", "bank"], ["the", "money"]]
    text = [["my", "bank"]]
    # layer 1 (the searched one): bank(text) ~ bank(ref) > money > a > river; layer 0 is noise
    rng = np.random.default_rng(0)
    ref_vec = rng.normal(size=(5, 2, 3))
    ref_vec[:, 1] = [[0, 0, 1], [0.1, 1, 0], [1, 0.05, 0], [0, 0, -1], [0.8, 0.6, 0]]
    text_vec = rng.normal(size=(2, 2, 3))
    text_vec[:, 1] = [[0, -1, 0], [1, 0, 0.3]]
    parts = [PoolPart("reference", ref, _emb(ref_vec, ref)),
             PoolPart("your text", text, _emb(text_vec, text))]  # fmt: skip
    pool = explore.NeighbourPool("1").fit(parts)
    assert len(pool) == 7 and pool.vectors_.shape == (7, 3)
    assert pool.row(1, 1) == 6 and pool.locate(6) == (1, 1) and pool.locate(2) == (0, 2)
    assert pool.locate(4) == (0, 4) and pool.locate(5) == (1, 0)
    found = pool.nearest(1, 1, k=3, width=1)
    assert [n.word for n in found] == ["bank", "money", "a"]
    assert [n.part for n in found] == ["reference"] * 3
    assert [n.context for n in found] == ["… river [bank]", "the [money]", "[a] river …"]
    expected = 1 / (np.linalg.norm([1, 0, 0.3]) * np.linalg.norm([1, 0.05, 0]))
    np.testing.assert_allclose(found[0].cosine, expected, atol=1e-6)
    assert len(pool.nearest(1, 1, k=10)) == 6  # every word but the query itself
    # the correction is applied before the search: without dimension 0, "a" is nearest
    corrected = explore.NeighbourPool("1", post=_DropFirst()).fit(parts)
    assert corrected.nearest(1, 1, k=1)[0].word == "a"
    with pytest.raises(InputError):
        pool.row(1, 2)
    with pytest.raises(InputError):
        pool.locate(7)


def test_neighbour_pool_refuses_parts_from_other_layers():
    ref = [["a", "b"]]
    one = _emb(np.ones((2, 2, 3)), ref)
    other = _emb(np.ones((2, 2, 3)), ref)
    other.layers = (0, 2)
    with pytest.raises(InputError, match="same model"):
        explore.NeighbourPool("1").fit([PoolPart("x", ref, one), PoolPart("y", ref, other)])
    with pytest.raises(InputError):
        explore.NeighbourPool("1").fit([])
