"""Part-of-speech tags for plain text, offline: closed-class words, WordNet and a few rules.

Plain sentences (the demo texts, an uploaded file) carry no POS. :func:`tag_words` gives each
word one tag of the universal tagset SemCor and the evaluation sets use (``NOUN``, ``VERB``,
``ADJ``, ``ADV``, ``DET``, ``ADP``, ``PRON``, ``CONJ``, ``PRT``, ``NUM``, ``.``, ``X``):

1. punctuation and numbers by their characters; function words (determiners, pronouns,
   prepositions, conjunctions, particles, auxiliaries) from a fixed table (:data:`CLOSED`);
2. any other word: the WordNet POS its base forms have (``morphy``), each scored by the
   SemCor tag counts WordNet records for them plus half its number of senses;
3. its neighbours: after a determiner, a possessive or an adjective a noun or adjective is
   preferred to a verb; after ``to``, a modal or a subject pronoun a verb; ``-ly`` reads as an
   adverb where WordNet allows it;
4. a word WordNet does not know: by its ending (``-ly`` ADV, ``-ing``/``-ed`` VERB, ``-ous``,
   ``-ful``, ``-able``, ``-ive``, ``-al``, ``-ic`` ADJ), else NOUN.

:func:`tag_corpus` tags the sentences of a corpus that carry no POS. Its accuracy against
SemCor's gold tags is measured in docs/results.md ("POS tags for plain text").

Example::

    tag_words(["The", "bank", "raised", "its", "rates", "."], load_wordnet())
    # ('DET', 'NOUN', 'VERB', 'PRON', 'NOUN', '.')
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from workbench.corpora.readers import Corpus
from workbench.fileio import sha256_json
from workbench.lexicon.morphology import morphy
from workbench.lexicon.wordnet import UPOS_TO_WN, WordNet

#: The tags of a word whose POS is not known.
UNTAGGED = frozenset({"", "X"})
#: Changes whenever the rules change: part of a tagged corpus's hash, so cached maps follow.
TAGGER_VERSION = 2

#: The tags :func:`tag_words` gives (the universal tagset of SemCor and the evaluation sets).
TAGS: tuple[str, ...] = ("NOUN", "VERB", "ADJ", "ADV", "DET", "ADP", "PRON", "CONJ", "PRT",
                         "NUM", ".", "X")  # fmt: skip


def _table(**words: str) -> dict[str, str]:
    return {w: tag for tag, text in words.items() for w in text.split()}


#: Function words and their tag (lower case), as SemCor tags them.
CLOSED: dict[str, str] = _table(
    DET="the a an this these that those some any no each every either neither another both all "
    "which whatever whichever there",
    PRON="i me my mine myself you your yours yourself yourselves he him his himself she her hers "
    "herself it its itself we us our ours ourselves they them their theirs themselves who whom "
    "whose what someone somebody something anyone anybody anything everyone everybody "
    "everything nobody nothing one's",
    ADP="of in on at by for with from into onto upon about above across after against along "
    "among around as before behind below beneath beside besides between beyond during except "
    "inside like near off outside over per since than through throughout toward towards under "
    "underneath unlike until till via within without because although though whether while "
    "if unless whereas",
    CONJ="and or but nor plus yet",
    PRT="to 's '",
    VERB="is am are was were be been being have has had having do does did will would shall "
    "should can could may might must 're 've 'm 'll 'd",
    ADV="not n't never also too very so then when where why how however here now just only "
    "even still already often always sometimes perhaps thus therefore",
)
#: Words after which a verb is the likelier reading (modals, ``to``, subject pronouns).
BEFORE_VERB = frozenset(
    "to will would shall should can could may might must i we they you he she it who "
    "'ll 'd n't not do does did".split()
)
#: How much likelier a verb reading is after one of :data:`BEFORE_VERB` ("will bank", "I run").
VERB_AFTER = 20.0
_NUMBER = re.compile(r"^[+-]?(\d[\d,.]*|\d*\.\d+)(st|nd|rd|th|s)?$")
_SUFFIXES = (("ly", "ADV"), ("ing", "VERB"), ("ed", "VERB"), ("ous", "ADJ"), ("ful", "ADJ"),
             ("able", "ADJ"), ("ible", "ADJ"), ("ive", "ADJ"), ("al", "ADJ"), ("ic", "ADJ"),
             ("less", "ADJ"))  # fmt: skip
_NUMBERS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
    "hundred thousand million billion".split()
)


def _lexical_scores(word: str, wordnet: WordNet) -> dict[str, float]:
    """WordNet's POS for ``word`` (via its base forms), each scored by the SemCor tag counts
    of its senses (``index.sense``) plus half its number of senses; empty when WordNet does
    not know it."""
    form = word.lower().replace(" ", "_")
    scores: dict[str, float] = {}
    for upos, wn_pos in UPOS_TO_WN.items():
        keys = [k for base in dict.fromkeys(morphy(form, wn_pos))
                for k in wordnet.candidates(base, upos)]  # fmt: skip
        if keys:
            scores[upos] = sum(wordnet.senses[k].tag_count for k in keys) + 0.5 * len(keys)
    return scores


def _unknown(word: str) -> str:
    lower = word.lower()
    for suffix, tag in _SUFFIXES:
        if lower.endswith(suffix) and len(lower) > len(suffix) + 2:
            return tag
    return "NOUN"


def tag_words(words: Sequence[str], wordnet: WordNet) -> tuple[str, ...]:
    """One universal POS tag per word of one sentence (:data:`TAGS`), by the rules of the
    module's docstring."""
    tags: list[str] = []
    for i, word in enumerate(words):
        lower = word.lower()
        prev = words[i - 1].lower() if i else ""
        prev_tag = tags[-1] if tags else ""
        if not any(c.isalnum() for c in word):
            tags.append(".")
            continue
        if _NUMBER.match(lower) or lower in _NUMBERS:
            tags.append("NUM")
            continue
        if lower in CLOSED:
            tag = CLOSED[lower]
            if lower == "that" and prev_tag in ("NOUN", "VERB"):
                tag = "ADP"  # "the fact that", "said that": a complementizer
            tags.append(tag)
            continue
        scores = _lexical_scores(word, wordnet)
        if not scores:
            tags.append(_unknown(word) if i == 0 or not word[0].isupper() else "NOUN")
            continue
        if prev_tag in ("DET", "ADJ") or (prev_tag == "PRON" and prev not in BEFORE_VERB):
            scores = {t: s * (0.2 if t == "VERB" else 1.0) for t, s in scores.items()}
            if len(scores) > 1 and "NOUN" in scores and "ADJ" not in scores:
                scores["NOUN"] *= 2
        elif prev in BEFORE_VERB and "VERB" in scores:
            scores["VERB"] *= VERB_AFTER
        if lower.endswith("ly") and "ADV" in scores:
            scores["ADV"] *= 5
        if lower.endswith(("ed", "ing")) and "VERB" in scores and prev_tag not in ("DET",):
            scores["VERB"] *= 2
        tags.append(max(scores, key=lambda t: (scores[t], t == "NOUN")))
    return tuple(tags)


def tag_corpus(corpus: Corpus, wordnet: WordNet) -> Corpus:
    """``corpus`` with every sentence that carries no POS (only :data:`UNTAGGED` tags, as plain
    text read by :func:`~workbench.corpora.readers.corpus_from_texts` has) tagged by
    :func:`tag_words` (its tagged sentences kept as they are); where any was tagged, its hash
    names the tagger too (:data:`TAGGER_VERSION`), so what was cached of the untagged corpus is
    not reused."""
    untagged = [i for i, s in enumerate(corpus.sentences) if set(s.pos) <= UNTAGGED]
    if not untagged:
        return corpus
    sentences = list(corpus.sentences)
    for i in untagged:
        sentences[i] = dataclasses.replace(sentences[i], pos=tag_words(sentences[i].words, wordnet))
    digest = sha256_json({"corpus": corpus.sha256, "pos_tagger": TAGGER_VERSION})
    return dataclasses.replace(corpus, sentences=tuple(sentences), sha256=digest)
