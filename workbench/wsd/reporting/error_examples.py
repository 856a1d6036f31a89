"""A WSD system's errors in words: the sentence, the gold and the predicted sense's definitions.

:func:`error_examples` picks the wrong answers to show: for the lemmas with most errors, their
first few wrong instances; and a seeded sample of all the errors. Each :class:`ErrorExample`
carries the sentence with the word marked ``[thus]``, both keys with their WordNet definitions
(:func:`readable_definition`) and the answer's score margin. Everything in it is plain text:
the report's writers escape it.

Example::

    lemmas, sample = error_examples(table, corpus, wordnet)
    lemmas[0].sentence, lemmas[0].gold_definition, lemmas[0].predicted_definition
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from workbench.corpora.occurrences import sense_glosses
from workbench.corpora.readers import Corpus
from workbench.lexicon.wordnet import WordNet
from workbench.wsd.disambiguate import count_in_sentence
from workbench.wsd.reporting.instances import InstanceTable
from workbench.wsd.reporting.intervals import SEED


@dataclass(frozen=True)
class ErrorExample:
    """One wrong answer, in words.

    Attributes:
        id, lemma: the instance and its ``lemma.POS``; wrong, total: that lemma's errors and
            instances.
        sentence: the sentence, the word in ``[brackets]`` ("" when the corpus lacks it).
        gold, gold_definition: the first gold key and its WordNet definition.
        predicted, predicted_definition: the answer ("" when none) and its definition.
        margin: the answer's lead over the runner-up (NaN without one).
        text: the sentence as plain text (its words joined by spaces; "" when the corpus lacks
            it); word: the instance's word as written; occurrence: which occurrence of
            ``word`` in ``text`` it is (1: the first); pos: its POS (NOUN, VERB, ADJ, ADV).
        link: the app's WSD page showing it (:func:`workbench.wsd.reporting.links.
            error_link`; "" until a report sets it).
    """

    id: str
    lemma: str
    wrong: int
    total: int
    sentence: str
    gold: str
    gold_definition: str
    predicted: str
    predicted_definition: str
    margin: float
    text: str = ""
    word: str = ""
    occurrence: int = 1
    pos: str = ""
    link: str = ""


def readable_definition(text: str) -> str:
    """A WordNet definition as a reader wants it. NLTK's ``definition()`` (and WordNet's reader
    here, which gives the same) drops a gloss's quoted examples but keeps their separators and
    the attributions after them: ``in the habit; ; ; - Henry David Thoreau``; those are removed
    (``in the habit``). 726 of WordNet's 117,659 definitions change; the others stay as they are.
    """
    parts = (part.strip() for part in text.split(";"))
    return "; ".join(p for p in parts if p and not p.startswith("-"))


def _sentences(corpus: Corpus, ids: set[str]) -> dict[str, tuple[str, str, str, int]]:
    """Instance id -> (sentence with the word marked, plain sentence, word, occurrence)."""
    out = {}
    for sentence, inst in corpus.instances():
        if inst.id in ids:
            words = list(sentence.words)
            word = words[inst.index]
            marked = [f"[{w}]" if i == inst.index else w for i, w in enumerate(words)]
            before = count_in_sentence(" ".join(words[: inst.index]), word)
            out[inst.id] = (" ".join(marked), " ".join(words), word, before + 1)
    return out


def error_examples(
    table: InstanceTable,
    corpus: Corpus,
    wordnet: WordNet,
    top_lemmas: int = 10,
    per_lemma: int = 2,
    sample: int = 25,
    seed: int = SEED,
) -> tuple[list[ErrorExample], list[ErrorExample]]:
    """``(by_lemma, sample)``: the first ``per_lemma`` wrong instances of each of the
    ``top_lemmas`` lemmas with most errors (most errors first, ties by instances, then name),
    and ``sample`` wrong instances drawn without replacement with ``seed`` (in corpus order)."""
    names = [f"{lm}.{p}" for lm, p in zip(table.lemma, table.pos)]
    wrong_rows = np.flatnonzero(table.credit < 1)
    total = Counter(names)
    wrong = Counter(names[i] for i in wrong_rows)
    ranked = sorted(wrong, key=lambda n: (-wrong[n], -total[n], n))[:top_lemmas]
    chosen: list[int] = []
    for name in ranked:
        chosen += [int(i) for i in wrong_rows if names[i] == name][:per_lemma]
    rng = np.random.default_rng(seed)
    k = min(sample, len(wrong_rows))
    drawn = sorted(int(i) for i in rng.choice(wrong_rows, size=k, replace=False)) if k else []
    rows = set(chosen) | set(drawn)
    text = _sentences(corpus, {table.ids[i] for i in rows})
    keys = [k for i in rows for k in (table.gold[i][0], table.predicted[i]) if k]
    glosses = {k: readable_definition(g) for k, g in sense_glosses(wordnet, keys).items()}

    def example(i: int) -> ErrorExample:
        gold, predicted = table.gold[i][0], table.predicted[i] or ""
        marked, plain, word, occurrence = text.get(table.ids[i], ("", "", "", 1))
        return ErrorExample(
            table.ids[i], names[i], wrong[names[i]], total[names[i]], marked,
            gold, glosses.get(gold, ""), predicted, glosses.get(predicted, ""),
            float(table.margin[i]), plain, word, occurrence, table.pos[i],
        )  # fmt: skip

    return [example(i) for i in chosen], [example(i) for i in drawn]
