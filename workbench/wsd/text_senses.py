"""Every content word of a plain text labelled with a WSD bi-encoder's predicted sense and
supersense: what a corpus map of text without gold senses is coloured by.

:func:`text_senses` reads the text once (every sentence through the bi-encoder's context encoder
in its batches, keeping only the words that can have a WordNet sense), builds one gloss index
for every ``(lemma, POS)`` pair the words can be (each gloss encoded once, then kept on disk by
the bi-encoder's gloss cache) and gives each word the best-scored of its candidate senses. A
word's POS is the one the text's tagger gave it (:func:`workbench.corpora.tagging.tag_words`):
a word tagged DET, or tagged NOUN with no noun sense in WordNet, gets no sense.

Example::

    bi = load_biencoder()
    words = [["He", "sat", "on", "the", "bank"]]
    labels = text_senses(bi, words, [["PRON", "VERB", "ADP", "DET", "NOUN"]])
    labels.senses        # ('he%1:...', 'sit%2:...', '', '', 'bank%1:17:01::')
    labels.supersenses   # ('noun.person', 'verb.contact', '', '', 'noun.object')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.errors import InputError
from workbench.lexicon.wordnet import UPOS_TO_WN, WordNet, load_wordnet
from workbench.wsd.biencoder import CONTEXT_LAYERS, BiEncoder
from workbench.wsd.disambiguate import target_lemmas

#: ``progress(fraction, stage)``: called as the words are labelled (fraction 0-1 of the work).
LabelProgress = Callable[[float, str], None]


@dataclass(frozen=True)
class TextSenses:
    """The predicted sense of every word of a text, sentence by sentence, flattened.

    Attributes:
        senses: one WordNet sense key per word, ``""`` for a word with none to choose from.
        supersenses: the sense's lexicographer class (``noun.artifact``), ``""`` without one.
        scores: ``(n_words,)`` float32 score of the chosen sense (NaN without one).
        n_senses: candidate senses scored in all.
    """

    senses: tuple[str, ...]
    supersenses: tuple[str, ...]
    scores: np.ndarray
    n_senses: int

    @property
    def n_labelled(self) -> int:
        """Words that got a sense."""
        return sum(1 for s in self.senses if s)


def text_senses(
    bi: BiEncoder,
    words: Sequence[Sequence[str]],
    pos: Sequence[Sequence[str]],
    wordnet: WordNet | None = None,
    progress: LabelProgress | None = None,
) -> TextSenses:
    """Label every word of ``words`` (sentences as word lists) with ``bi``'s best sense among
    the WordNet senses of its ``pos`` (universal tags, one per word; NOUN, VERB, ADJ and ADV
    words can have one).

    Raises:
        InputError: ``pos`` does not give one tag per word.
    """
    wordnet = wordnet or load_wordnet()
    if len(pos) != len(words) or any(len(p) != len(w) for p, w in zip(pos, words)):
        raise InputError("text_senses needs one POS tag per word of every sentence")
    pairs_of: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
    keep: list[list[int]] = []
    for sentence, tags in zip(words, pos):
        kept = []
        for i, (word, tag) in enumerate(zip(sentence, tags)):
            if tag not in UPOS_TO_WN:
                continue
            lookup = (word.lower(), tag)
            if lookup not in pairs_of:
                pairs_of[lookup] = target_lemmas(word, wordnet, tag)
            if pairs_of[lookup]:
                kept.append(i)
        keep.append(kept)
    n_words = sum(len(s) for s in words)
    senses, supersenses = [""] * n_words, [""] * n_words
    scores = np.full(n_words, np.nan, dtype=np.float32)
    pairs = sorted({p for found in pairs_of.values() for p in found})
    if not pairs:
        return TextSenses(tuple(senses), tuple(supersenses), scores, 0)

    def glosses(fraction: float) -> None:
        if progress is not None:
            progress(0.7 * fraction, "Encoding the glosses of the words' senses…")

    index = bi.index(pairs, wordnet, glosses)
    if progress is not None:
        progress(0.7, "Reading the words in context…")
    has_words = [i for i, k in enumerate(keep) if k]
    emb = bi.encoder.encode(
        [list(words[i]) for i in has_words], keep=[keep[i] for i in has_words], progress=False
    )
    vectors = emb.select(CONTEXT_LAYERS)  # (n_kept, dim), sentence by sentence
    starts = np.cumsum([0, *(len(s) for s in words)])
    row = 0
    for i in has_words:
        for at in keep[i]:
            best = None
            for lemma, upos in pairs_of[(words[i][at].lower(), pos[i][at])]:
                scored = index.candidate_scores(vectors[row], lemma, upos)
                if len(scored.scores) and (best is None or scored.scores[0] > best[1]):
                    best = (scored.keys[0], float(scored.scores[0]))
            if best is not None:
                flat = int(starts[i]) + at
                senses[flat], scores[flat] = best
                supersenses[flat] = wordnet.lexname(wordnet.synset(best[0]))
            row += 1
    return TextSenses(tuple(senses), tuple(supersenses), scores, len(index.keys_))
