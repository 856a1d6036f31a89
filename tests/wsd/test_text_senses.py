"""Every content word of plain text labelled by the shipped WSD bi-encoder
(:func:`workbench.wsd.text_senses.text_senses`), and a corpus map carrying those labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.errors import InputError
from workbench.lexicon.wordnet import load_wordnet
from workbench.viz.corpus_map import CorpusMap, CorpusMapConfig
from workbench.wsd.biencoder import load_biencoder
from workbench.wsd.disambiguate import disambiguate, target_lemmas
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.text_senses import text_senses

WORDS = [
    ["He", "sat", "on", "the", "bank", "of", "the", "river", "."],
    ["The", "bank", "raised", "its", "interest", "rates", "."],
]
TAGS = [
    ["PRON", "VERB", "ADP", "DET", "NOUN", "ADP", "DET", "NOUN", "PUNCT"],
    ["DET", "NOUN", "VERB", "PRON", "NOUN", "NOUN", "PUNCT"],
]


@pytest.fixture(scope="module")
def labelled():
    return text_senses(load_biencoder(), WORDS, TAGS, load_wordnet())


def test_content_words_get_the_sense_the_bi_encoder_answers_for_them_one_by_one(labelled):
    wordnet = load_wordnet()
    flat = [w for s in WORDS for w in s]
    tags = [t for s in TAGS for t in s]
    assert len(labelled.senses) == len(flat) == len(labelled.supersenses)
    for word, tag, key, supersense in zip(flat, tags, labelled.senses, labelled.supersenses):
        if tag in ("NOUN", "VERB"):
            lemmas = {lemma for lemma, _ in target_lemmas(word, wordnet, tag)}
            assert key and key.split("%")[0] in lemmas  # a sense of the word as tagged
            assert supersense == wordnet.lexname(wordnet.synset(key))
            assert supersense.startswith("noun." if tag == "NOUN" else "verb.")
        else:  # a function word or punctuation: no sense to choose from
            assert key == "" and supersense == ""
    # the batched answer is the one-word answer (the same bi-encoder, the tagger's POS)
    opened = OpenedSystem.of_biencoder(load_biencoder())
    one = disambiguate(opened, WORDS[1], 1, pos="NOUN")
    assert labelled.senses[len(WORDS[0]) + 1] == one.best.key
    river, money = labelled.senses[4], labelled.senses[len(WORDS[0]) + 1]
    assert river != money  # the two banks are told apart
    assert np.isnan(labelled.scores[3]) and np.isfinite(labelled.scores[4])
    assert labelled.n_labelled == sum(t in ("NOUN", "VERB") for t in tags)


def test_one_tag_per_word_is_required():
    with pytest.raises(InputError, match="one POS tag per word"):
        text_senses(load_biencoder(), WORDS, [TAGS[0], TAGS[1][:-1]])


def test_a_map_takes_the_labels_and_says_they_are_predicted(labelled):
    n = sum(len(s) for s in WORDS)
    table = pd.DataFrame({"word": [w for s in WORDS for w in s],
                          "pos": [t for s in TAGS for t in s],
                          "sense": [""] * n, "supersense": [""] * n})  # fmt: skip
    cmap = CorpusMap(np.zeros((n, 2), np.float32), table, [tuple(s) for s in WORDS],
                     CorpusMapConfig(), info={"corpus": "two sentences"})  # fmt: skip
    assert cmap.sentence_tags() == TAGS
    shown = cmap.with_senses(labelled.senses, labelled.supersenses)
    assert shown.table["sense"].tolist() == list(labelled.senses)
    assert shown.info["senses"] == "predicted" and "senses" not in cmap.info
    assert (cmap.table["sense"] == "").all()  # the map itself is left as it was
    with pytest.raises(InputError):
        cmap.with_senses(labelled.senses[:-1], labelled.supersenses)
