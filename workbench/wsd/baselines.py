"""The two classic WSD baselines: WordNet's first sense and the corpus most frequent sense.

Both return ``{instance id: sense key}`` for the instances they can answer (an instance whose
``(lemma, pos)`` is not in WordNet is left out: it counts against recall, not precision).

Example::

    >>> from workbench.corpora.readers import load_dataset
    >>> from workbench.wsd.scoring import score
    >>> test = load_dataset("ALL")
    >>> round(score(test.gold(), first_sense_predictions(test)).f1, 3)
    0.652
"""

from __future__ import annotations

from collections import Counter

from workbench.corpora.readers import Corpus
from workbench.lexicon.wordnet import WordNet, load_wordnet


def first_sense_predictions(corpus: Corpus, wordnet: WordNet | None = None) -> dict[str, str]:
    """WordNet's first sense of each instance's ``(lemma, pos)``.

    Args:
        corpus: the instances to answer.
        wordnet: default :func:`workbench.lexicon.wordnet.load_wordnet`.
    """
    wordnet = wordnet or load_wordnet()
    answers = {}
    for _, instance in corpus.instances():
        key = wordnet.first_sense(instance.lemma, instance.pos)
        if key is not None:
            answers[instance.id] = key
    return answers


#: ``(lemma, pos)`` -> Counter of gold sense keys (float counts): what the MFS baseline needs of
#: a training corpus.
SenseCounts = dict[tuple[str, str], Counter]


def sense_frequencies(training: Corpus) -> SenseCounts:
    """``(lemma, pos)`` -> Counter of gold sense keys in a training corpus.

    An instance with ``k`` gold keys adds ``1/k`` to each.
    """
    counts: dict[tuple[str, str], Counter] = {}
    for _, instance in training.instances():
        if not instance.keys:
            continue
        bucket = counts.setdefault((instance.lemma, instance.pos), Counter())
        for key in instance.keys:
            bucket[key] += 1 / len(instance.keys)  # type: ignore[assignment]  # float counts
    return counts


def mfs_predictions(
    corpus: Corpus, training: Corpus | SenseCounts, wordnet: WordNet | None = None
) -> dict[str, str]:
    """Most frequent sense in ``training`` per ``(lemma, pos)``, else WordNet's first sense.

    Ties are broken by WordNet order (the lower sense number wins).

    Args:
        corpus: the instances to answer.
        training: a sense-annotated corpus (SemCor), or its :func:`sense_frequencies`
            (:func:`workbench.wsd.builds.semcor_frequencies` keeps SemCor's on disk).
        wordnet: default :func:`workbench.lexicon.wordnet.load_wordnet`.
    """
    wordnet = wordnet or load_wordnet()
    counts = sense_frequencies(training) if isinstance(training, Corpus) else training
    answers = {}
    for _, instance in corpus.instances():
        seen = counts.get((instance.lemma, instance.pos))
        candidates = wordnet.candidates(instance.lemma, instance.pos)
        if seen:
            rank = {k: i for i, k in enumerate(candidates)}
            answers[instance.id] = max(seen, key=lambda k: (seen[k], -rank.get(k, len(rank))))
        elif candidates:
            answers[instance.id] = candidates[0]
    return answers
