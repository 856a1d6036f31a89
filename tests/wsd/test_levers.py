"""The bi-encoder's test-time levers: smoothing over WordNet's relations changes a known score
by its formula (a toy graph, then the shipped model on 'bank'), the sense prior adds
λ · log p of add-one smoothed counts (and flips an answer when large enough), and both are
named options that reports record and other systems refuse."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from workbench.cli.main import main
from workbench.errors import InputError, ModelLoadError
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import (
    CONTEXT_LAYERS,
    gloss_sense_index,
    load_biencoder,
    shipped_biencoder,
)
from workbench.wsd.config import EncoderInfo, TrainingInfo
from workbench.wsd.disambiguate import disambiguate
from workbench.wsd.gloss_cache import GlossCache
from workbench.wsd.index import ORIGINS
from workbench.wsd.levers import (
    DEFAULT_LEVERS,
    LEVERS_FILE,
    NO_LEVERS,
    PriorIndex,
    TestTimeLevers,
    folder_f1,
    folder_levers,
    log_prior,
    smoothed_rows,
    with_prior,
)
from workbench.wsd.predict import predict
from workbench.wsd.systems import open_system

DIM = 8


def unit(i: int) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i] = 1.0
    return v


def test_smoothing_on_a_known_graph_adds_lambda_times_the_mean_neighbour_score():
    rng = np.random.default_rng(0)
    gloss = {name: rng.normal(size=DIM).astype(np.float32) for name in "abcde"}
    graph = {"a": ("b", "c"), "b": ("a",), "c": (), "d": ("b", "c", "e")}
    asked: list[list[str]] = []

    def vectors_of(names):
        asked.append(list(names))
        return np.stack([gloss[n] for n in names])

    synsets = ["a", "b", "c", "d"]
    rows = smoothed_rows(synsets, np.stack([gloss[s] for s in synsets]), graph.__getitem__,
                         vectors_of, 0.3)  # fmt: skip
    assert asked == [["a", "b", "c", "e"]]  # every neighbour's vector asked for once
    q = rng.normal(size=DIM).astype(np.float32)
    for i, s in enumerate(synsets):
        expected = gloss[s] @ q
        if graph[s]:
            expected += 0.3 * np.mean([gloss[n] @ q for n in graph[s]])
        assert rows[i] @ q == pytest.approx(expected, rel=1e-5, abs=1e-5)
    assert np.array_equal(rows[2], gloss["c"])  # no neighbours: the row as it was
    plain = smoothed_rows(synsets, np.stack([gloss[s] for s in synsets]), graph.__getitem__,
                          vectors_of, 0.0)  # fmt: skip
    assert np.array_equal(plain, np.stack([gloss[s] for s in synsets])) and len(asked) == 1


def test_wordnet_relations_are_nltks_hypernyms_hyponyms_similar_tos_and_verb_groups():
    wn = load_wordnet()
    for key in ("plant%1:03:00::", "good%3:00:01::", "strike%2:35:01::", "bank%1:17:01::"):
        name = wn.synset(key)
        nltk = wn.reader.synset(name)
        expected = {s.name() for s in nltk.hypernyms() + nltk.instance_hypernyms()
                    + nltk.hyponyms() + nltk.instance_hyponyms() + nltk.similar_tos()
                    + nltk.verb_groups()}  # fmt: skip
        assert set(wn.related(name)) == expected and expected
    assert wn.related(wn.synset("bank%1:17:01::"), ("@",)) == ("slope.n.01",)
    flora = wn.reader.synset("flora.n.01")  # a name that did not come from a sense key: NLTK's
    assert wn.related("flora.n.01", ("@",)) == ("collection.n.01",)
    assert set(wn.related("flora.n.01")) == {s.name() for s in flora.hypernyms() + flora.hyponyms()}


def test_the_shipped_bi_encoder_smoothed_scores_bank_by_the_formula():
    bi = load_biencoder(device="cpu")
    wn = load_wordnet()
    lam = 0.5
    plain = bi.index([("bank", "NOUN")], wn)
    smoothed = bi.index([("bank", "NOUN")], wn, smoothing=lam)
    words = "He sat on the bank of the river".split()
    vector = bi.encoder.encode([words], keep=[[4]]).select(CONTEXT_LAYERS)[0]
    before = plain.candidate_scores(vector, "bank", "NOUN")
    after = smoothed.candidate_scores(vector, "bank", "NOUN")
    q = vector / np.linalg.norm(vector)
    base = dict(zip(before.keys, before.scores.tolist()))
    changed = 0
    for key, score in zip(after.keys, after.scores.tolist()):
        related = wn.related(wn.synset(key))
        extra = lam * float((bi.gloss_vectors(related, wn) @ q).mean()) if related else 0.0
        assert score == pytest.approx(base[key] + extra, abs=1e-4)
        changed += bool(related)
    assert changed >= 8  # bank's noun senses nearly all have neighbours


def test_a_smoothed_index_encodes_the_neighbours_glosses_under_its_one_progress(
    tmp_path, monkeypatch
):
    bi = load_biencoder(device="cpu")
    wn = load_wordnet()
    monkeypatch.setattr(bi, "cache", GlossCache(json.loads(bi.cache.identity), bi.cache.dim,
                                                tmp_path))  # fmt: skip  # nothing cached yet
    passes: list[int] = []
    encode = bi.encode_texts

    def counted(texts, progress=None):
        passes.append(len(texts))
        return encode(texts, progress)

    monkeypatch.setattr(bi, "encode_texts", counted)
    seen: list[float] = []
    smoothed = bi.index([("plant", "NOUN")], wn, seen.append, smoothing=0.25)
    assert seen and seen == sorted(seen) and seen[-1] == 1.0  # one bar, rising once to the end
    synsets = {wn.synset(k) for k in wn.candidates("plant", "NOUN")}
    neighbours = set().union(*(wn.related(s) for s in synsets)) - synsets
    texts = len(bi.cache)  # each gloss encoded once, now cached
    assert texts >= len(synsets) + len(neighbours) - 2  # (two synsets may share a definition)
    assert passes == [texts]  # candidates and neighbours in the one pass the bar follows
    again: list[float] = []
    assert np.array_equal(bi.index([("plant", "NOUN")], wn, again.append, 0.25).vectors_,
                          smoothed.vectors_) and again == []  # fmt: skip  # all read back


def test_the_log_prior_is_add_one_smoothed_over_a_lemmas_candidates():
    keys = ["x%1:00:00::", "x%1:00:01::", "x%1:00:02::", "y%2:00:00::"]
    counts = {"x%1:00:00::": 3.0, "x%1:00:02::": 1.0}
    got = log_prior(keys, counts)
    assert got == pytest.approx(np.log([4 / 7, 1 / 7, 2 / 7, 1.0]), abs=1e-6)


def _toy_index():
    keys = ["x%1:00:00::", "x%1:00:01::", "x%1:00:02::"]
    rows = np.stack([2 * unit(0), unit(1), unit(2)])
    info = EncoderInfo("toy", "fp-toy", DIM, 3, "mean")
    return gloss_sense_index(keys, rows, info, TrainingInfo("toy"), {"x%1:00:01::": 5})


def test_the_prior_adds_lambda_log_p_to_each_score_and_flips_an_answer_when_large():
    index = _toy_index()
    counts = {("x", "NOUN"): Counter({"x%1:00:01::": 9.0})}
    query = (unit(0) + unit(1)).reshape(1, -1)
    before = index.candidate_scores(query[0], "x", "NOUN")
    assert before.keys[0] == "x%1:00:00::"
    for lam in (0.1, 1.0):
        biased = with_prior(index, counts, lam)
        assert isinstance(biased, PriorIndex) and biased.keys_ == index.keys_
        after = biased.candidate_scores(query[0], "x", "NOUN")
        logp = dict(zip(index.keys_, log_prior(index.keys_, {"x%1:00:01::": 9.0}).tolist()))
        base = dict(zip(before.keys, before.scores.tolist()))
        for key, score in zip(after.keys, after.scores.tolist()):
            assert score == pytest.approx(base[key] + lam * logp[key], abs=1e-5)
        top = predict(biased, query, ["x"], ["NOUN"])[0]
        assert top.key == after.keys[0] and top.score == pytest.approx(after.scores[0], abs=1e-5)
    # log(10/12) - log(1/12) = log 10 = 2.30 per lambda against a score gap of 2/sqrt2 - 1/sqrt2
    assert predict(with_prior(index, counts, 0.1), query, ["x"], ["NOUN"])[0].key == "x%1:00:00::"
    assert predict(with_prior(index, counts, 1.0), query, ["x"], ["NOUN"])[0].key == "x%1:00:01::"
    assert with_prior(index, counts, 0.0) is index
    assert ORIGINS[int(with_prior(index, counts, 1.0).origin_[0])] == "gloss"


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), 101.0])
def test_a_lever_weight_must_be_a_finite_non_negative_number(bad):
    with pytest.raises(InputError, match="weight from 0 to 100"):
        TestTimeLevers(smoothing=bad)


def test_a_lever_given_overrides_the_folders_and_one_not_given_takes_it():
    own = TestTimeLevers(smoothing=0.25, prior=0.0)
    assert DEFAULT_LEVERS.over(own) == own
    assert TestTimeLevers(smoothing=0.0).over(own) == NO_LEVERS
    assert TestTimeLevers(prior=0.1).over(own) == TestTimeLevers(smoothing=0.25, prior=0.1)
    assert DEFAULT_LEVERS.over(DEFAULT_LEVERS) == NO_LEVERS  # nothing recorded: both off
    assert not TestTimeLevers(smoothing=0.0).active and TestTimeLevers(prior=0.1).active
    assert TestTimeLevers(prior=0.1).describe() == {"smoothing": 0.0, "prior": 0.1}


def test_a_folder_records_its_levers_and_a_damaged_record_is_refused(tmp_path):
    assert folder_levers(tmp_path) == NO_LEVERS  # no file: both off
    (tmp_path / LEVERS_FILE).write_text('{"smoothing": 0.5, "note": "chosen on SE07"}')
    assert folder_levers(tmp_path) == TestTimeLevers(smoothing=0.5, prior=0.0)
    for bad in ('{"smoothing": -1}', '{"smoothing": "0.5"}', '{"prior": true}', "[0.5]",
                '{"smoothing": 1e400}', "{"):  # fmt: skip
        (tmp_path / LEVERS_FILE).write_text(bad)
        with pytest.raises(ModelLoadError, match=LEVERS_FILE):
            folder_levers(tmp_path)


def test_the_shipped_bi_encoder_answers_with_its_recorded_smoothing(capsys):
    shipped = shipped_biencoder()
    assert shipped is not None and folder_levers(shipped) == TestTimeLevers(0.25, 0.0)
    assert open_system().levers == TestTimeLevers(smoothing=0.25, prior=0.0)
    assert open_system(levers=TestTimeLevers(smoothing=0.0)).levers == NO_LEVERS
    words = ["She", "plays", "the", "bass", "in", "a", "jazz", "band"]
    own = disambiguate(open_system(), words, 3)
    off = disambiguate(open_system(levers=NO_LEVERS), words, 3)
    by_key = {c.key: c.score for c in off.candidates}
    assert {c.key for c in own.candidates} == set(by_key)  # both score every candidate
    assert any(abs(by_key[c.key] - c.score) > 1e-4 for c in own.candidates)  # smoothed
    assert main(["wsd", "disambiguate", "He sat on the bank", "--word", "bank"]) == 0
    assert "test-time levers: smoothing 0.25" in capsys.readouterr().out
    assert main(["wsd", "disambiguate", "He sat on the bank", "--word", "bank",
                 "--smoothing", "0"]) == 0  # fmt: skip
    assert "test-time levers" not in capsys.readouterr().out


def test_the_levers_are_recorded_and_refused_where_they_cannot_apply(capsys, tiny_model_dir):
    assert shipped_biencoder() is not None
    opened = open_system(levers=TestTimeLevers(smoothing=0.2, prior=0.1))
    assert opened.levers is not None and opened.levers.label == "smoothing 0.2, prior 0.1"
    assert opened.with_pos_probe(None).levers == opened.levers
    assert open_system(levers=NO_LEVERS).levers == NO_LEVERS
    with pytest.raises(InputError, match="levers of the bi-encoder"):
        open_system("wordnet", levers=TestTimeLevers(prior=0.1))
    handed_over = open_system(model=str(tiny_model_dir), levers=TestTimeLevers(smoothing=0.5))
    assert handed_over.name != "biencoder" and "(smoothing 0.5) do not apply" in handed_over.note
    code = main(["wsd", "disambiguate", "He sat on the bank", "--word", "bank",
                 "--smoothing", "0.25"])  # fmt: skip
    assert code == 0 and "test-time levers: smoothing 0.25" in capsys.readouterr().out
    code = main(["wsd", "disambiguate", "He sat on the bank", "--word", "bank",
                 "--system", "wordnet", "--prior", "0.1"])  # fmt: skip
    assert code == 2 and "levers of the bi-encoder" in capsys.readouterr().err


def test_a_folder_records_the_f1_of_its_levers_only_as_a_score(tmp_path):
    """``folder_f1``: the levers file's ``f1_all``, a number from 0 to 100; anything else
    (text, a boolean, NaN, out of range) or no file is None."""
    assert folder_f1(tmp_path) is None
    for value, expected in ((75.32, 75.3), (80, 80.0), ("75", None), (True, None),
                            (float("nan"), None), (101, None), (-1, None)):  # fmt: skip
        (tmp_path / LEVERS_FILE).write_text(json.dumps({"smoothing": 0.25, "f1_all": value}))
        assert folder_f1(tmp_path) == expected, value
    assert folder_levers(tmp_path) == TestTimeLevers(smoothing=0.25, prior=0.0)
