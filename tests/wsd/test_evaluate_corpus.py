"""One test corpus evaluated as the CLI and the app run it: encode, the system's index for the
test lemmas (the WordNet-only one here) unless it is in hand, baselines, predict and score
(:func:`workbench.wsd.evaluate.evaluate_corpus`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.errors import InputError
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.disambiguate import instance_index
from workbench.wsd.evaluate import (
    Stage,
    baseline_answers,
    evaluate,
    evaluate_corpus,
)
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.predict import MAX_CONTEXT, document_of, encode_instances, instance_sequences
from workbench.wsd.systems import open_system
from workbench.wsd.systems.wordnet import WORDNET_SYSTEM

#: The WordNet-only system's settings on the last layer (the tiny model has 3 hidden states).
TINY = dataclasses.replace(WORDNET_SYSTEM.config, layers="-1")


@pytest.fixture(scope="module")
def wordnet():
    return load_wordnet()


def _corpus(wordnet, name: str, rank: int) -> Corpus:
    """Three sentences; the gold of each instance is its lemma's ``rank``-th WordNet sense."""
    texts = [
        ("he sat on the bank of the stream", {4: "bank", 7: "stream"}),
        ("the bank lent her money", {1: "bank", 4: "money"}),
        ("fish swim in the stream", {0: "fish", 4: "stream"}),
    ]
    sentences = []
    for s, (text, targets) in enumerate(texts):
        words = tuple(text.split())
        instances = tuple(
            Instance(f"d000.s{s:03d}.t{i:03d}", at, lemma, "NOUN",
                     (wordnet.candidates(lemma, "NOUN")[rank],))
            for i, (at, lemma) in enumerate(sorted(targets.items()))
        )  # fmt: skip
        sentences.append(Sentence(f"d000.s{s:03d}", words, words, ("X",) * len(words), instances))
    return Corpus(name, tuple(sentences), sha256=f"{name}-{rank}")


def test_evaluate_corpus_runs_every_stage_as_the_pieces_do(tiny_encoder, wordnet):
    test, training = _corpus(wordnet, "toy", 0), _corpus(wordnet, "toytrain", 1)
    config = dataclasses.replace(TINY, gloss_weight=0.5)
    stages: list[Stage] = []
    system = open_system("wordnet", encoder=tiny_encoder, wordnet=wordnet,
                         changes={"layers": "-1", "gloss_weight": 0.5})  # fmt: skip
    run = evaluate_corpus(system, test, wordnet, training, on_stage=stages.append)
    labels = ["encode toy", "wordnet index for toy", "predict toy"]
    assert [(s.name, s.label, s.seconds is None) for s in stages] == [
        (name, label, start)
        for name, label in zip(("encode", "index", "predict"), labels)
        for start in (True, False)
    ]
    assert list(run.seconds) == labels
    assert [s.seconds for s in stages if s.seconds is not None] == list(run.seconds.values())
    assert run.seconds["predict toy"] == run.evaluation.seconds["predict"]
    # the WordNet-only index of the test lemmas, with the settings given
    assert run.index.config == config and run.index.training_.corpus.startswith("wordnet")
    assert sorted(run.instances.ids) == sorted(test.gold())
    # the same answers and scores as the pieces run one by one
    instances = encode_instances(tiny_encoder, test)
    index = instance_index(tiny_encoder, instances, wordnet, config)
    bases = baseline_answers(test, training, wordnet)
    expected = evaluate(index, instances, bases, backoff=wordnet.first_sense)
    assert run.evaluation.predictions == expected.predictions
    assert run.evaluation.datasets == expected.datasets
    whole = run.evaluation.datasets[-1]
    assert whole.name == "toy" and whole.n_instances == 6
    assert whole.baselines["wordnet_first_sense"].f1 == 1.0  # gold: each lemma's first sense
    assert whole.baselines["semcor_mfs"].f1 == 0.0  # training: the second sense


def test_evaluate_corpus_with_an_index_and_no_baselines(tiny_encoder, wordnet, tmp_cache):
    test = _corpus(wordnet, "toy", 0)
    fractions: list[float] = []  # in an empty cache: encoded here, progress reported
    system = open_system("wordnet", encoder=tiny_encoder, changes={"layers": "-1"})
    first = evaluate_corpus(system, test, wordnet, progress=fractions.append)
    assert fractions and all(0.0 <= f <= 1.0 for f in fractions)
    index = first.index
    stages: list[Stage] = []
    run = evaluate_corpus(OpenedSystem.of_index(tiny_encoder, index), test, wordnet,
                          baselines=False, on_stage=stages.append)  # fmt: skip
    assert run.index is index  # the given index answers: none is built
    assert [s.name for s in stages] == ["encode", "encode", "predict", "predict"]
    assert list(run.seconds) == ["encode toy", "predict toy"]
    assert run.evaluation.datasets[-1].baselines == {}
    assert run.evaluation.predictions == first.evaluation.predictions


def test_context_reads_each_instance_with_its_documents_neighbours(wordnet):
    """``context=1``: each sequence is the sentence with its document's sentence before and
    after it, the instances' positions shifted by the words before; another document's
    sentence is never read; 0 is the sentence alone; out of range is refused."""
    test = _corpus(wordnet, "toy", 0)
    other = Sentence("d001.s000", ("far", "away"), ("far", "away"), ("X", "X"), ())
    test = Corpus("toy", (*test.sentences, other), sha256="toy-doc")
    alone, keep0, _ = instance_sequences(test, 0)
    assert alone == [list(s.words) for s in test.sentences[:3]]
    seqs, keep, meta = instance_sequences(test, 1)
    words = [list(s.words) for s in test.sentences[:3]]
    assert seqs == [words[0] + words[1], words[0] + words[1] + words[2], words[1] + words[2]]
    assert keep[0] == keep0[0] and keep[1] == [8 + p for p in keep0[1]]
    assert keep[2] == [5 + p for p in keep0[2]]  # "far away" (d001) is not read with d000
    for seq, position, inst in meta:
        assert seqs[seq][position] == test.sentences[int(inst.id[6:9])].words[inst.index]
    assert document_of("senseval2.d000.s001") == "senseval2.d000"
    assert document_of("my-sentence") is None and document_of("a.b") is None
    with pytest.raises(InputError, match="context must be 0 to"):
        instance_sequences(test, MAX_CONTEXT + 1)


def test_evaluate_corpus_with_context_scores_the_same_instances(tiny_encoder, wordnet):
    test = _corpus(wordnet, "toy", 0)
    system = open_system("wordnet", encoder=tiny_encoder, changes={"layers": "-1"})
    alone = evaluate_corpus(system, test, wordnet, baselines=False)
    read = evaluate_corpus(system, test, wordnet, baselines=False, context=1)
    assert read.instances.ids == alone.instances.ids
    first = alone.instances.vectors("-1")
    assert not np.allclose(read.instances.vectors("-1"), first)  # the neighbours were read
