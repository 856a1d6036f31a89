"""End-to-end WSD with the real packaged model: a SemCor subset -> SemEval-2007, disambiguate."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.corpora.datasets import load_dataset
from workbench.errors import InputError, MismatchError
from workbench.lexicon.wordnet import key_lemma_pos, load_wordnet
from workbench.wsd.baselines import first_sense_predictions
from workbench.wsd.config import EncoderInfo, SenseIndexConfig
from workbench.wsd.disambiguate import disambiguate
from workbench.wsd.evaluate import evaluate
from workbench.wsd.predict import answers, build_index, encode_instances, predict, train_index
from workbench.wsd.scoring import score
from workbench.wsd.sources import gloss_vectors, sense_graph, synset_sentence
from workbench.wsd.store import load_index, save_index
from workbench.wsd.systems import open_system

N_TRAIN_SENTENCES = 2000

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wordnet():
    return load_wordnet()


@pytest.fixture(scope="module")
def corpora(wsd_data):
    semcor = load_dataset("semcor", wsd_data)
    return semcor, semcor.head(N_TRAIN_SENTENCES), load_dataset("semeval2007", wsd_data)


@pytest.fixture(scope="module")
def encoded(default_encoder, corpora):
    _, train, test = corpora
    return encode_instances(default_encoder, train), encode_instances(default_encoder, test)


def test_instances_are_aligned(encoded, corpora):
    training, test = encoded
    assert len(test) == 455 == corpora[2].n_instances
    assert training.embeddings.vectors.shape[1:] == (7, 384)
    # the row of every instance holds the instance's own word
    by_id = {inst.id: (sentence, inst) for sentence, inst in corpora[2].instances()}
    for i in range(0, len(test), 37):
        row = test.rows[i]
        sentence, instance = by_id[test.ids[i]]
        assert test.embeddings.words[row] == sentence.words[instance.index]
    assert test.vectors("last4-sum").shape == (455, 384)


def test_end_to_end_semcor_subset_to_semeval2007(default_encoder, encoded, corpora, wordnet):
    training, test = encoded
    gold = test.gold()
    index = train_index(
        training, SenseIndexConfig(layers="last4-sum"), EncoderInfo.of(default_encoder)
    )
    wn1 = {"wordnet_first_sense": first_sense_predictions(corpora[2], wordnet)}
    result = evaluate(index, test, wn1, backoff=wordnet.first_sense)
    system = result.datasets[-1].system
    assert system.total == 455 and system.answered == 455
    # a random candidate as a floor: the index must do far better
    rng = np.random.default_rng(0)
    random_answers = {
        i: rng.choice(wordnet.candidates(lemma, pos))
        for i, lemma, pos in zip(test.ids, test.lemmas, test.pos)
    }
    floor = score(gold, random_answers).f1
    assert system.f1 > floor + 0.15, (system.f1, floor)
    assert system.f1 > 0.45
    # every answer is a candidate of its own lemma and POS, and sources add up
    for lemma, pos, pred in zip(test.lemmas, test.pos, result.predictions.values()):
        assert pred.key in wordnet.candidates(lemma, pos)
    counts = result.datasets[-1].source_counts
    assert sum(counts.values()) == 455 and set(counts) <= {"centroid", "backoff"}
    assert counts["backoff"] > 0  # 2,000 SemCor sentences leave lemmas unseen
    assert result.errors and result.errors[0].n_wrong >= result.errors[-1].n_wrong


def test_standardized_index_and_round_trip(default_encoder, tiny_encoder, encoded, tmp_path):
    training, test = encoded
    index = train_index(training, SenseIndexConfig(layers="3", correction="zscore"),
                        EncoderInfo.of(default_encoder))  # fmt: skip
    path = save_index(index, tmp_path / "semcor-subset.index")
    back = load_index(path, EncoderInfo.of(default_encoder), layers="3")
    vecs = test.vectors("3")
    a = predict(index, vecs, test.lemmas, test.pos)
    b = predict(back, vecs, test.lemmas, test.pos)
    assert [(p.key, p.runner_up) for p in a] == [(p.key, p.runner_up) for p in b]
    np.testing.assert_allclose([p.runner_up_score for p in a], [p.runner_up_score for p in b])
    with pytest.raises(MismatchError):
        load_index(path, EncoderInfo.of(tiny_encoder))
    with pytest.raises(MismatchError):
        load_index(path, EncoderInfo.of(default_encoder), layers="last4-sum")


def test_propagation_and_glosses_cover_every_instance(default_encoder, encoded, wordnet):
    training, test = encoded
    keys = sorted({k for lemma, pos in set(zip(test.lemmas, test.pos))
                   for k in wordnet.candidates(lemma, pos)})  # fmt: skip
    gloss = gloss_vectors(default_encoder, wordnet, "last4-sum", keys=keys)
    assert gloss[1].shape == (len(keys), 384)
    config = SenseIndexConfig(layers="last4-sum", propagate="lexname", gloss="concat")
    index = train_index(training, config, EncoderInfo.of(default_encoder),
                        graph=sense_graph(wordnet), gloss=gloss, targets=keys)  # fmt: skip
    preds = predict(index, test.vectors("last4-sum"), test.lemmas, test.pos, wordnet.first_sense)
    sources = {p.source for p in preds}
    assert "backoff" not in sources and "propagated" in sources
    assert all(p.key in wordnet.candidates(lemma, pos)
               for p, lemma, pos in zip(preds, test.lemmas, test.pos))  # fmt: skip


def test_gloss_vectors_both_poolings(default_encoder, wordnet):
    keys = ["bank%1:17:01::", "bank%1:14:00::", "depository_financial_institution%1:14:00::"]
    names, defs = gloss_vectors(default_encoder, wordnet, "6", keys=keys, pooling="definition")
    assert names == tuple(sorted(keys)) and defs.shape == (3, 384)
    # the keys of one synset share its definition vector; another synset's differs
    assert names[0] == "bank%1:14:00::" and names[2].startswith("depository")  # bank.n.02
    np.testing.assert_allclose(defs[0], defs[2])
    assert not np.allclose(defs[0], defs[1])
    # it is the mean of the definition words of "<lemmas> - <definition>"
    words, start = synset_sentence(wordnet.reader.synset("bank.n.01"))
    assert words[start - 1] == "-" and words[start : start + 2] == ["sloping", "land"]
    emb = default_encoder.encode([words], keep=[list(range(start, len(words)))])
    np.testing.assert_allclose(defs[names.index("bank%1:17:01::")], emb.select("6").mean(0),
                               rtol=1e-4, atol=1e-5)  # fmt: skip
    names2, lemma = gloss_vectors(default_encoder, wordnet, "6", keys=keys, pooling="lemma")
    assert names2 == names and lemma.shape == (3, 384)
    assert not np.allclose(lemma[0], lemma[2])  # per key: each lemma's own vector
    with pytest.raises(InputError):
        gloss_vectors(default_encoder, wordnet, "6", keys=keys, pooling="sentence")


def test_build_index_fetches_wordnet_inputs(default_encoder, encoded):
    training, _ = encoded
    index = build_index(default_encoder, training, SenseIndexConfig(layers="6", propagate="synset"))
    assert index.summary()["rows_by_origin"]["synset"] > 0
    assert all(key_lemma_pos(k) for k in index.keys_[:50])


def test_disambiguate_after_install_without_semcor(default_encoder, wordnet, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))  # a data dir without SemCor
    best = open_system("best", encoder=default_encoder)  # without SemCor: the WordNet-only one
    river = disambiguate(best, "He sat on the bank of the river", "bank")
    # the WordNet-only index answers (gloss vectors), and says that it loses to the first sense
    assert "wordnet" in river.training.corpus and river.system == "wordnet"
    assert "below WordNet's first sense" in river.note
    assert river.best.key.startswith("bank%")
    assert {c.pos for c in river.candidates} == {"NOUN", "VERB"}  # no POS given: both
    assert len(river.candidates) == len(wordnet.candidates("bank", "NOUN")) + len(
        wordnet.candidates("bank", "VERB")
    )
    scores = [c.score for c in river.candidates]
    assert scores == sorted(scores, reverse=True)
    money = disambiguate(best, "She deposited the money at the bank", "bank", pos="NOUN")
    assert money.best.key in {"bank%1:14:00::", "bank%1:06:00::"}
    assert "deposited the money" in money.to_text().replace("[", "").replace("]", "")
    phrase = disambiguate(best, "The meeting took place in Paris", "took place")
    assert phrase.words[phrase.target] == "took place"
    assert phrase.best.key.startswith("take_place%2")
    with pytest.raises(InputError, match="not a word"):
        disambiguate(best, "He sat on the bank", "river")


def test_answers_leave_out_unanswered(encoded, default_encoder):
    training, test = encoded
    index = train_index(training, SenseIndexConfig(layers="6"), EncoderInfo.of(default_encoder))
    preds = predict(index, test.vectors("6"), test.lemmas, test.pos, backoff=None)
    got = answers(test.ids, preds)
    assert len(got) == sum(p.source == "centroid" for p in preds) < len(test)
