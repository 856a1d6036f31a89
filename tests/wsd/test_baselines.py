from __future__ import annotations

import json

import pytest

from workbench.corpora.datasets import load_dataset
from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.baselines import first_sense_predictions, mfs_predictions, sense_frequencies
from workbench.wsd.builds import semcor_frequencies
from workbench.wsd.scoring import score


def _corpus(items: list[tuple[str, str, str, tuple[str, ...]]]) -> Corpus:
    sentences = tuple(
        Sentence(f"s{i}", (lemma,), (lemma,), (pos,), (Instance(iid, 0, lemma, pos, keys),))
        for i, (iid, lemma, pos, keys) in enumerate(items)
    )
    return Corpus("toy", sentences)


def test_first_sense_and_mfs_on_a_toy_corpus():
    wn = load_wordnet()
    first, second = wn.candidates("bank", "NOUN")[:2]
    train = _corpus(
        [
            ("a", "bank", "NOUN", (second,)),
            ("b", "bank", "NOUN", (second,)),
            ("c", "bank", "NOUN", (first,)),
            ("d", "bank", "NOUN", (first, second)),  # half a count each
        ]
    )
    assert sense_frequencies(train)[("bank", "NOUN")][second] == pytest.approx(2.5)
    test = _corpus(
        [
            ("t1", "bank", "NOUN", (second,)),
            ("t2", "dog", "NOUN", ()),  # unseen in training: WordNet first sense
            ("t3", "notaword", "NOUN", ()),  # not in WordNet: no answer
        ]
    )
    assert first_sense_predictions(test, wn) == {"t1": first, "t2": "dog%1:05:00::"}
    assert mfs_predictions(test, train, wn) == {"t1": second, "t2": "dog%1:05:00::"}


def test_mfs_ties_follow_wordnet_order():
    wn = load_wordnet()
    first, second = wn.candidates("bank", "NOUN")[:2]
    train = _corpus([("a", "bank", "NOUN", (second,)), ("b", "bank", "NOUN", (first,))])
    test = _corpus([("t", "bank", "NOUN", ())])
    assert mfs_predictions(test, train, wn) == {"t": first}


def test_wordnet_first_sense_baseline_on_all(wsd_data):
    test = load_dataset("ALL", wsd_data)
    result = score(test.gold(), first_sense_predictions(test))
    assert result.answered == result.total == 7253
    assert result.f1 == pytest.approx(0.652, abs=0.002)  # published: 65.2


@pytest.mark.slow
def test_semcor_mfs_baseline_on_all(wsd_data):
    test, semcor = load_dataset("ALL", wsd_data), load_dataset("semcor", wsd_data)
    result = score(test.gold(), mfs_predictions(test, semcor))
    assert result.f1 == pytest.approx(0.654, abs=0.003)


def test_semcors_sense_counts_are_kept_and_a_damaged_copy_is_counted_again(
    wsd_data, tmp_cache, monkeypatch
):
    """The MFS baseline's counts come from the cache after the first count (no SemCor parse);
    a copy with a negative count is refused and SemCor counted again."""
    counts = semcor_frequencies()
    assert counts == sense_frequencies(load_dataset("semcor"))
    kept = next((tmp_cache / "wsd").glob("semcor-sense-counts-*.json"))

    def no_parse(name):
        raise AssertionError("SemCor was parsed again")

    monkeypatch.setattr("workbench.wsd.builds.load_dataset", no_parse)
    assert semcor_frequencies() == counts
    data = json.loads(kept.read_text())
    data["counts"][0][2] = {k: -5 for k in data["counts"][0][2]}
    kept.write_text(json.dumps(data))
    monkeypatch.undo()
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_cache))
    with pytest.warns(UserWarning, match="negative or not finite"):
        assert semcor_frequencies() == counts
