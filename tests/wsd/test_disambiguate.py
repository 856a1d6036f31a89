"""The WordNet lemmas an index for a test set must cover (no model, a stand-in WordNet)."""

from __future__ import annotations

from types import SimpleNamespace

from workbench.wsd.disambiguate import instance_lemmas


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
