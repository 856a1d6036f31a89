"""Explore numerics: sentence splitting, word lookup, layerwise similarity, neighbours."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import InputError
from workbench.viz import neighbours as explore


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
