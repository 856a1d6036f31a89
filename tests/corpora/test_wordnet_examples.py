"""WordNet's usage examples and glosses as sense-tagged sentences: each example locates the
lemma of its synset, a gloss gives one sentence per lemma."""

from __future__ import annotations

import pytest

from workbench.corpora.wordnet_examples import ExampleConfig, ExampleStats, iter_examples, locate
from workbench.lexicon.wordnet import key_lemma_pos, load_wordnet


@pytest.fixture(scope="module")
def wn():
    return load_wordnet()


def test_locate_lemma_in_example(wn):
    assert locate(["He", "took", "place", "early"], "take_place", "v", wn) == 1
    assert locate(["she", "ran", "home"], "run", "v", wn) == 1
    assert locate(["two", "geese"], "goose", "n", wn) == 1
    assert locate(["nothing", "here"], "bank", "n", wn) is None


def test_examples_corpus_locates_its_targets(wn):
    stats = ExampleStats()
    config = ExampleConfig(pos=("VERB", "ADJ"), limit=400)
    sentences = list(iter_examples(config, wn, stats))
    assert len(sentences) == 400
    assert stats.matched >= 400  # counted per synset: the last one may go past the limit
    for sentence in sentences:
        (inst,) = sentence.instances
        (key,) = inst.keys
        assert (inst.lemma, inst.pos) == key_lemma_pos(key)
        word = sentence.words[inst.index].lower()
        parts = inst.lemma.split("_")
        assert len(word.split(" ")) == len(parts)
        assert wn.synset(key) in sentence.id  # the sentence is an example of the key's synset
    assert stats.examples == stats.matched + stats.skipped


def test_glosses_give_one_sentence_per_lemma(wn):
    config = ExampleConfig(pos=("NOUN",), examples=False, glosses="all", limit=50)
    sentences = list(iter_examples(config, wn))
    first = sentences[0]
    assert first.instances[0].index == 0 and first.words[1] == ":"
    keys = [s.instances[0].keys[0] for s in sentences]
    assert len(set(keys)) == len(keys)
