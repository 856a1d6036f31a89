"""Sense labels for a lemma's occurrences: the bi-encoder's answers, or the nearest centroid of
other occurrences of the same lemma.

:func:`biencoder_senses` asks a WSD bi-encoder (:mod:`workbench.wsd.biencoder`, the shipped one
by default) for each occurrence's best sense among the lemma's WordNet senses; it needs no
annotated occurrence, so it labels any text. The centroid way (:func:`predict_senses`) learns
the senses from annotated occurrences: SemCor's when SemCor is at hand, else the lemma's
WordNet usage examples (:func:`training_occurrences`). Any training occurrence that is
also one of the occurrences to label (same ``source``) is left out, so nothing is predicted from
itself (:func:`held_out`). Each occurrence then gets the sense whose centroid, the mean vector of
its training occurrences at a layer spec, is the most cosine-similar
(:func:`nearest_centroid`); :class:`SensePrediction` also counts
how often that agrees with the occurrence's own label.

Example::

    training = training_occurrences(load_wordnet(), "bank", semcor=load_dataset("semcor"))
    shown = encode_occurrences(enc, from_lines(read_demo("bank"), "bank"))
    result = predict_senses(shown, training, "last4-sum",
                            encode=functools.partial(encode_occurrences, enc))
    result.labels                    # one sense key per shown occurrence
    result.n_agree, result.n         # agreement with the gold labels
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.corpora.occurrences import (
    Occurrence,
    OccurrenceVectors,
    from_corpus,
    from_wordnet,
)
from workbench.corpora.readers import Corpus
from workbench.errors import InputError
from workbench.lexicon.wordnet import WordNet, load_wordnet
from workbench.wsd.biencoder import CONTEXT_LAYERS, BiEncoder
from workbench.wsd.disambiguate import target_lemmas

#: At most this many SemCor occurrences train the centroids (a seeded sample, in corpus order).
TRAINING_LIMIT = 1000
#: The training sources, for messages.
SOURCE_NAMES = {"semcor": "SemCor", "wordnet": "WordNet usage-example"}
#: The source of :func:`biencoder_senses`' predictions.
BIENCODER_SOURCE = "biencoder"


@dataclass(frozen=True)
class TrainingOccurrences:
    """Sense-annotated occurrences of a lemma and where they come from.

    Attributes:
        source: ``"semcor"`` or ``"wordnet"`` (usage examples).
        occurrences: the occurrences, each labelled with its sense key.
    """

    source: str
    occurrences: tuple[Occurrence, ...]


@dataclass(frozen=True)
class SensePrediction:
    """The predicted sense of each occurrence.

    Attributes:
        labels: one predicted sense key per occurrence, in order.
        scores: ``(n,)`` float32 cosine of each occurrence with its chosen centroid.
        source: where the training occurrences come from (``semcor`` / ``wordnet``).
        n_training: training occurrences used (none of them is one of the labelled ones).
        layers: the layer spec of the vectors compared.
        n_agree: occurrences whose prediction equals their own label (unlabelled ones never
            agree).
        n_left_out: training occurrences left out because they are among those labelled.
    """

    labels: tuple[str, ...]
    scores: np.ndarray
    source: str
    n_training: int
    layers: str
    n_agree: int
    n_left_out: int = 0

    @property
    def n(self) -> int:
        """Occurrences labelled."""
        return len(self.labels)

    def describe(self, lemma: str) -> str:
        """One sentence for a reader: how the senses were predicted and how often the
        prediction agrees with the gold labels."""
        if self.source == BIENCODER_SOURCE:
            return (
                f"Predicted: the WSD bi-encoder's best sense of each occurrence among the "
                f"{self.n_training} WordNet senses of “{lemma}” (its trained context vector "
                f"against each sense's gloss vector); agrees with the gold label for "
                f"{self.n_agree} of {self.n} occurrences."
            )
        name = SOURCE_NAMES.get(self.source, self.source)
        k = self.n_left_out
        left_out = (
            f" ({k} more {'is' if k == 1 else 'are'} among the points shown, so "
            f"{'it was' if k == 1 else 'they were'} left out)"
            if k
            else ""
        )
        return (
            f"Predicted: nearest sense centroid of {self.n_training} {name} occurrences of "
            f"“{lemma}” that are not on screen{left_out}, at layers {self.layers}; agrees with "
            f"the gold label for {self.n_agree} of {self.n} occurrences."
        )


def training_occurrences(
    wordnet: WordNet,
    lemma: str,
    pos: str | None = None,
    semcor: Corpus | None = None,
    limit: int = TRAINING_LIMIT,
) -> TrainingOccurrences:
    """The sense-annotated occurrences of ``lemma`` to learn its senses from: at most ``limit``
    of SemCor's when ``semcor`` is given, else every WordNet usage example of it.

    Raises:
        InputError: the source has no annotated occurrence of the lemma (as that POS).
    """
    if semcor is not None:
        return TrainingOccurrences("semcor", tuple(from_corpus(semcor, lemma, pos, limit)))
    return TrainingOccurrences("wordnet", tuple(from_wordnet(wordnet, lemma, pos)))


def held_out(training: Sequence[Occurrence], shown: Sequence[Occurrence]) -> tuple[Occurrence, ...]:
    """The training occurrences whose ``source`` is not the source of any shown occurrence
    (never predict an occurrence from itself), in order."""
    sources = {o.source for o in shown}
    return tuple(o for o in training if o.source not in sources)


def predict_senses(
    shown: OccurrenceVectors,
    training: TrainingOccurrences,
    layers: str,
    encode: Callable[[Sequence[Occurrence]], OccurrenceVectors],
) -> SensePrediction:
    """Label every shown occurrence with its nearest sense centroid at ``layers``.

    Args:
        shown: the occurrences to label and their vectors.
        training: from :func:`training_occurrences`; those that are also shown are left out.
        layers: the layer spec both sets of vectors are compared at (``"6"``, ``"last4-sum"``).
        encode: occurrences -> their vectors (e.g. ``partial(encode_occurrences, encoder)``,
            or a cached wrapper); called once, on the held-out training occurrences.

    Raises:
        InputError: no training occurrence is left (the message says how many were there and
            that all of them are shown), or none of them carries a label.
    """
    kept = held_out(training.occurrences, shown.occurrences)
    total = len(training.occurrences)
    if not kept:
        name = SOURCE_NAMES.get(training.source, training.source)
        raise InputError(
            f"all {total} {name} occurrences of the word are among those shown, and a sense is "
            "never predicted from the occurrence itself: none is left to learn the senses from. "
            "Show fewer occurrences, or another source, to colour them by predicted sense"
            if total
            else f"{name} has no sense-annotated occurrence of the word to learn its senses from"
        )
    vectors = encode(kept)
    labels, scores = nearest_centroid(
        vectors.emb.select(layers), vectors.labels, shown.emb.select(layers)
    )
    agree = sum(p == o.label for p, o in zip(labels, shown.occurrences) if o.label)
    return SensePrediction(
        tuple(labels), scores, training.source, len(kept), layers, agree, total - len(kept)
    )


def biencoder_senses(
    bi: BiEncoder,
    occurrences: Sequence[Occurrence],
    lemma: str,
    pos: str | None = None,
    wordnet: WordNet | None = None,
) -> SensePrediction:
    """Label every occurrence with the bi-encoder's best sense among the WordNet senses of
    ``lemma`` (of ``pos``; none given, of the POS its probe reads off each occurrence's vector,
    :mod:`workbench.wsd.pos_probe`, or of every POS without a probe); ``scores`` are the
    winners' scores (dot products over the query's norm,
    :meth:`~workbench.wsd.index.SenseIndex.candidate_scores`).

    Raises:
        InputError: no occurrence, or WordNet has no sense of ``lemma`` (as ``pos``).
    """
    wordnet = wordnet or load_wordnet()
    if not occurrences:
        raise InputError("no occurrence to label: the word does not occur in the text")
    pairs = target_lemmas(lemma, wordnet, pos)
    if not pairs:
        raise InputError(
            f"WordNet has no {pos + ' ' if pos else ''}sense of “{lemma}” to choose from"
        )
    index = bi.index(pairs, wordnet)
    emb = bi.encoder.encode(
        [list(o.words) for o in occurrences], keep=[[o.index] for o in occurrences]
    )
    vectors = emb.select(CONTEXT_LAYERS)
    probe = bi.pos_probe if pos is None and len({u for _, u in pairs}) > 1 else None
    likely = probe.predict(emb.select(probe.layers)) if probe is not None else [None] * len(vectors)
    labels, scores = [], []
    for vector, guess in zip(vectors, likely):
        ranked = [index.candidate_scores(vector, lem, upos) for lem, upos in pairs
                  if guess is None or upos == guess] or [
            index.candidate_scores(vector, lem, upos) for lem, upos in pairs
        ]  # fmt: skip
        best = max(ranked, key=lambda c: float(c.scores[0]) if len(c.scores) else float("-inf"))
        labels.append(best.keys[0])
        scores.append(float(best.scores[0]))
    n_senses = sum(len(wordnet.candidates(lem, upos)) for lem, upos in pairs)
    agree = sum(p == o.label for p, o in zip(labels, occurrences) if o.label)
    return SensePrediction(
        tuple(labels), np.array(scores, dtype=np.float32), BIENCODER_SOURCE, n_senses,
        CONTEXT_LAYERS, agree,
    )  # fmt: skip


def nearest_centroid(
    train: np.ndarray, train_labels: Sequence[str], query: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """Label each query with its most cosine-similar label centroid (the sense index's rule,
    for one lemma).

    Args:
        train: ``(n_train, dim)`` vectors with known labels.
        train_labels: ``n_train`` labels (``""`` = unlabelled, ignored).
        query: ``(n_query, dim)`` vectors to label.

    Returns:
        ``(labels, scores)``: ``n_query`` labels and ``(n_query,)`` float32 cosines.

    Raises:
        InputError: no labelled training vector.
    """
    train = np.asarray(train, dtype=np.float32)
    labels = np.asarray(train_labels, dtype=object)
    names = [lab for lab in dict.fromkeys(labels.tolist()) if lab]
    if not names:
        raise InputError("no labelled occurrence to learn senses from")
    cents = np.stack([train[labels == lab].mean(axis=0) for lab in names])
    cents /= np.maximum(np.linalg.norm(cents, axis=1, keepdims=True), 1e-12)
    q = np.asarray(query, dtype=np.float32)
    q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    sims = q @ cents.T
    best = sims.argmax(axis=1)
    return [names[i] for i in best], sims[np.arange(len(q)), best].astype(np.float32)
