"""POS tags for plain text: function words from the table, content words from WordNet and their
neighbours, unknown words by their endings; a corpus's tagged sentences are kept."""

from __future__ import annotations

import pytest

from workbench.corpora.occurrences import from_lines, with_pos
from workbench.corpora.readers import corpus_from_texts
from workbench.corpora.tagging import TAGS, tag_corpus, tag_words
from workbench.errors import InputError
from workbench.lexicon.wordnet import load_wordnet


@pytest.fixture(scope="module")
def wordnet():
    return load_wordnet()


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ("The bank raised its rates .", "DET NOUN VERB PRON NOUN ."),
        ("They fish in the river", "PRON VERB ADP DET NOUN"),
        ("I bought a fish and two books", "PRON VERB DET NOUN CONJ NUM NOUN"),
        ("She will run quickly to the blorfish", "PRON VERB VERB ADV PRT DET NOUN"),
        ("A calm sea", "DET ADJ NOUN"),
        ("I bank at the bank", "PRON VERB ADP DET NOUN"),
        ("They will bank on it", "PRON VERB VERB ADP PRON"),
    ],
)
def test_sentences_get_their_tags(wordnet, sentence, tags):
    assert tag_words(sentence.split(), wordnet) == tuple(tags.split())


def test_unknown_words_go_by_their_endings(wordnet):
    tags = tag_words(["It", "was", "zorbishly", "flumptious", "and", "glorbing"], wordnet)
    assert tags == ("PRON", "VERB", "ADV", "ADJ", "CONJ", "VERB")
    assert set(tag_words("Mr. Xq , 1,200 or 3.5 ( 42nd ) !".split(), wordnet)) <= set(TAGS)


def test_a_corpus_is_tagged_where_it_has_no_pos(wordnet):
    plain = corpus_from_texts(["The dog barked .", "A cat sat"], "plain")
    tagged = tag_corpus(plain, wordnet)
    assert [s.pos for s in tagged.sentences] == [
        ("DET", "NOUN", "VERB", "."),
        ("DET", "NOUN", "VERB"),
    ]
    assert tagged.sha256 != plain.sha256 and tagged.name == plain.name  # cached apart
    assert tag_corpus(tagged, wordnet) is tagged  # already tagged: kept as it is


def test_an_upload_s_occurrences_by_the_target_s_tag(wordnet):
    lines = ["I bank at the bank .", "They will bank on it .", "The river bank flooded ."]
    found = from_lines(lines, "bank")
    nouns = [(o.words[:2], o.index) for o in with_pos(found, "NOUN", wordnet)]
    verbs = [(o.words[:2], o.index) for o in with_pos(found, "VERB", wordnet)]
    assert nouns == [(("I", "bank"), 4), (("The", "river"), 2)]
    assert verbs == [(("I", "bank"), 1), (("They", "will"), 2)]
    assert with_pos(found, "ADV", wordnet) == []
    with pytest.raises(InputError, match="unknown POS 'noun'"):
        with_pos(found, "noun", wordnet)
