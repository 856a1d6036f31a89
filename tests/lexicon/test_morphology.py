"""The light morphy agrees with NLTK's WordNet morphy."""

from __future__ import annotations

from workbench.corpora.occurrences import demo_sentences
from workbench.lexicon.morphology import base_forms, morphy
from workbench.lexicon.wordnet import load_wordnet


def test_agrees_with_nltk_morphy_on_demo_words_and_irregulars():
    reader = load_wordnet().reader
    words = {w.lower() for s in demo_sentences() for w in s}
    words |= {"geese", "died", "dying", "better", "ran", "went", "mice", "taller", "boxes"}
    for word in sorted(words):
        expected = {word}
        for pos in "nvar":
            expected.update(reader._morphy(word, pos))
        assert set(base_forms(word)) == expected, word


def test_examples():
    assert {"die"} <= base_forms("Died") and "goose" in base_forms("geese")
    assert "bank" in morphy("banks", "n") and morphy("xyzzy", "v") == []
