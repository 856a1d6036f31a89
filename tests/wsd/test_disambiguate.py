"""The WordNet lemmas an index for a test set must cover, and which occurrence of a word is the
target (no model, a stand-in WordNet)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from workbench.errors import InputError
from workbench.wsd.disambiguate import count_in_sentence, find_target, instance_lemmas


class _WordNet:
    """Senses of bank (noun, verb), the person Banks and take_place (verb)."""

    SENSES = {("bank", "NOUN"), ("bank", "VERB"), ("banks", "NOUN"), ("take_place", "VERB")}

    def candidates(self, lemma, pos):
        return (f"{lemma}%x",) if (lemma, pos) in self.SENSES else ()


def test_instance_lemmas_are_the_distinct_wordnet_lemmas_of_the_instances():
    test = SimpleNamespace(
        lemmas=("bank", "bank", "banks", "took_place", "xyzzy"),
        pos=("NOUN", "NOUN", "NOUN", "VERB", "ADJ"),
    )
    assert instance_lemmas(test, _WordNet()) == (
        ("bank", "NOUN"),  # "banks": the person and the plural of bank
        ("banks", "NOUN"),
        ("take_place", "VERB"),  # the head word inflects
    )


def test_find_target_takes_the_nth_occurrence_and_counts_them():
    words = "The bank said the Bank of the bank took place".split()
    assert count_in_sentence(words, "bank") == 3
    assert count_in_sentence(" ".join(words), "took place") == 1
    assert count_in_sentence(words, "river") == 0 and count_in_sentence(words, " ") == 0
    assert find_target(words, "bank")[1] == 1
    assert find_target(words, "bank", 2)[1] == 4
    merged, at = find_target(words, "took place", 1)
    assert merged[at] == "took place" and len(merged) == len(words) - 1
    with pytest.raises(InputError, match="occurs 3 times in the sentence, so there is no occ"):
        find_target(words, "bank", 4)
