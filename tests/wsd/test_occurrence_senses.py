"""Senses of a lemma's occurrences from other occurrences: the training source, the leakage
filter, the nearest centroid at a layer spec, the agreement count."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.corpora.occurrences import Occurrence, OccurrenceVectors
from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import InputError
from workbench.wsd.occurrence_senses import (
    TrainingOccurrences,
    held_out,
    nearest_centroid,
    predict_senses,
    training_occurrences,
)

# s1 along x, s2 along y
SENSE_VECTOR = {"s1": np.array([1.0, 0.0, 0.0]), "s2": np.array([0.0, 1.0, 0.0])}


def _vectors(
    occurrences: list[Occurrence], direction: dict[str, np.ndarray], swap: bool = False
) -> OccurrenceVectors:
    """Two hidden states per occurrence, both along ``direction[source]``; with ``swap``,
    layer 0 has x and y swapped (the other sense's direction)."""
    rows = []
    for o in occurrences:
        v = direction[o.source]
        rows.append([v[[1, 0, 2]] if swap else v, v])
    n = len(occurrences)
    emb = LayerwiseEmbeddings(
        vectors=np.asarray(rows, dtype=np.float32),
        layers=(0, 1),
        words=[o.word for o in occurrences],
        sentence_index=np.arange(n, dtype=np.int64),
        word_index=np.array([o.index for o in occurrences], dtype=np.int64),
        spans=np.zeros((n, 2), dtype=np.int64),
        n_sentences=n,
        n_hidden=2,
        model_name="test",
        fingerprint="test",
        pooling="mean",
    )
    return OccurrenceVectors(tuple(occurrences), emb)


def _occ(source: str, label: str = "") -> Occurrence:
    return Occurrence(("the", "bank"), 1, label, source)


def test_predict_senses_leaves_out_the_shown_and_counts_agreement():
    rng = np.random.default_rng(0)
    direction = {}
    training = []
    for i, sense in enumerate(["s1", "s1", "s1", "s2", "s2", "s2"]):
        training.append(_occ(f"t{i}", sense))
        direction[f"t{i}"] = SENSE_VECTOR[sense] + rng.normal(scale=0.1, size=3)
    # a training occurrence that is also shown, with a wrong label: it must not be used
    training.append(_occ("shown0", "s3"))
    shown = [_occ("shown0", "s1"), _occ("shown1", "s2"), _occ("shown2", "s2"), _occ("shown3")]
    direction.update(shown0=SENSE_VECTOR["s1"], shown1=SENSE_VECTOR["s2"],
                     shown2=SENSE_VECTOR["s1"] + 0.01, shown3=SENSE_VECTOR["s2"])  # fmt: skip
    encoded: list[tuple[str, ...]] = []

    def encode(occurrences):
        encoded.append(tuple(o.source for o in occurrences))
        return _vectors(list(occurrences), direction)

    shown_vectors = _vectors(shown, direction, swap=True)
    result = predict_senses(
        shown_vectors, TrainingOccurrences("semcor", tuple(training)), "1", encode
    )
    assert encoded == [tuple(f"t{i}" for i in range(6))]  # shown0 left out, encoded once
    assert result.labels == ("s1", "s2", "s1", "s2")
    assert result.n_agree == 2 and result.n == 4  # shown2 is wrong, shown3 has no label
    assert result.n_training == 6 and result.source == "semcor" and result.layers == "1"
    assert result.n_left_out == 1  # shown0: on screen, so not learnt from
    assert result.scores.shape == (4,) and (result.scores > 0.9).all()
    assert result.describe("bank") == (
        "Predicted: nearest sense centroid of 6 SemCor occurrences of “bank” that are not on "
        "screen (1 more is among the points shown, so it was left out), at layers 1; "
        "agrees with the gold label for 2 of 4 occurrences."
    )
    # the layer spec picks the vectors compared: at layer 0 the shown senses swap places
    assert predict_senses(
        shown_vectors, TrainingOccurrences("semcor", tuple(training)), "0", encode
    ).labels == ("s2", "s1", "s2", "s1")


def test_nothing_left_to_learn_from_is_an_error():
    shown = [_occ("a", "s1")]
    assert held_out([_occ("a", "s1"), _occ("b", "s2")], shown) == (_occ("b", "s2"),)
    with pytest.raises(InputError, match="all 1 WordNet usage-example occurrences of the word "
                       "are among those shown.*none is left"):  # fmt: skip
        predict_senses(
            _vectors(shown, {"a": SENSE_VECTOR["s1"]}),
            TrainingOccurrences("wordnet", (_occ("a", "s1"),)),
            "1",
            lambda occurrences: pytest.fail("nothing should be encoded"),
        )
    with pytest.raises(InputError, match="SemCor has no sense-annotated occurrence"):
        predict_senses(
            _vectors(shown, {"a": SENSE_VECTOR["s1"]}),
            TrainingOccurrences("semcor", ()),
            "1",
            lambda occurrences: pytest.fail("nothing should be encoded"),
        )


class _WordNet:
    """Two senses of "bank", one usage example each (and one without the word)."""

    def candidates(self, lemma, pos):
        return ("bank%1:17:01::", "bank%1:14:00::") if (lemma, pos) == ("bank", "NOUN") else ()

    def synset(self, key):
        return {"bank%1:17:01::": "bank.n.01", "bank%1:14:00::": "depository.n.01"}[key]

    def examples(self, synset):
        return {"bank.n.01": ["they sat on the bank"], "depository.n.01": ["a loan"]}[synset]


def test_training_occurrences_prefer_semcor_else_wordnet():
    sentences = tuple(
        Sentence(f"s{i}", ("the", "bank"), ("the", "bank"), ("DET", "NOUN"),
                 (Instance(f"s{i}.t0", 1, "bank", "NOUN", (f"bank%1:17:0{i % 2}::",)),))
        for i in range(5)
    )  # fmt: skip
    semcor = Corpus("semcor", sentences)
    found = training_occurrences(_WordNet(), "bank", "NOUN", semcor=semcor, limit=3)
    assert found.source == "semcor" and len(found.occurrences) == 3
    assert all(o.source.startswith("s") and o.label.startswith("bank%") for o in found.occurrences)
    found = training_occurrences(_WordNet(), "Bank", "NOUN")
    assert found.source == "wordnet"
    assert [(o.label, o.word) for o in found.occurrences] == [("bank%1:17:01::", "bank")]
    with pytest.raises(InputError):
        training_occurrences(_WordNet(), "bank", "VERB", semcor=semcor)


def test_nearest_centroid_recovers_planted_labels():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 16)) * 5
    train = np.concatenate([c + rng.normal(size=(10, 16)) for c in centres])
    labels = [f"s{i}" for i in range(3) for _ in range(10)]
    query = centres + rng.normal(size=(3, 16)) * 0.5
    predicted, scores = nearest_centroid(train, labels, query)
    assert predicted == ["s0", "s1", "s2"] and (scores > 0.9).all()
    with pytest.raises(InputError):
        nearest_centroid(train, [""] * 30, query)
