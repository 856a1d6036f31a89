"""Sense index: centroids, candidate restriction, propagation, gloss combination, save/load."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from workbench.errors import DataError, InputError, MismatchError
from workbench.wsd.builds import system_index_path
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.index import SenseIndex
from workbench.wsd.predict import answers, predict
from workbench.wsd.store import (
    CORRECTION_STEM,
    FORMER_CORRECTION_STEM,
    INDEX_FILES,
    load_index,
    load_index_senses,
    save_index,
)
from workbench.wsd.systems.registry import SYSTEMS
from workbench.wsd.vectors import (
    SenseGraph,
    combine_rows,
    propagate,
    sense_centroids,
)

DIM = 8
INFO = EncoderInfo("toy", "fp-toy", DIM, 3, "mean")


def unit(i: int, dim: int = DIM) -> np.ndarray:
    v = np.zeros(dim, np.float32)
    v[i] = 1.0
    return v


def test_centroids_count_each_gold_key():
    vecs = np.array([[1, 0], [3, 0], [0, 2]], np.float32)
    keys, cents, counts = sense_centroids(
        vecs, [("a%1:00:00::",), ("a%1:00:00::", "b%1:00:00::"), ("b%1:00:00::",)]
    )
    assert keys == ("a%1:00:00::", "b%1:00:00::")
    np.testing.assert_allclose(cents, [[2, 0], [1.5, 1]])
    assert counts.tolist() == [2, 2]


def _toy_index(config: SenseIndexConfig | None = None) -> SenseIndex:
    # bank has two senses along axes 0 and 1; river's only sense is along axis 2
    vecs = np.stack([unit(0), unit(0) + 0.1 * unit(3), unit(1), unit(2), unit(2)])
    keys = [("bank%1:17:01::",), ("bank%1:17:01::",), ("bank%1:14:00::",), ("river%1:17:00::",)] * 1
    keys.append(("river%1:17:00::",))
    return SenseIndex(config or SenseIndexConfig(layers="-1")).fit(vecs, keys, info=INFO)


def test_candidate_restriction_never_returns_another_lemma():
    index = _toy_index()
    assert index.candidate_rows("bank", "NOUN") == (0, 2)
    query = unit(2) + 0.2 * unit(1)  # nearest centroid overall: river's
    preds = predict(index, np.stack([query, query]), ["bank", "river"], ["NOUN", "NOUN"])
    assert preds[0].key == "bank%1:14:00::"  # the nearest of bank's own senses
    assert preds[0].runner_up == "bank%1:17:01::"
    assert preds[0].score > preds[0].runner_up_score
    assert preds[0].source == "centroid" and preds[0].n_candidates == 2
    assert preds[1].key == "river%1:17:00::" and preds[1].runner_up is None
    assert np.isnan(preds[1].runner_up_score)
    # the same query with a global search would have answered river for bank
    global_best = index.keys_[int(np.argmax(index.vectors_ @ (query / np.linalg.norm(query))))]
    assert global_best.startswith("river%")


def test_backoff_and_unknown_lemmas():
    index = _toy_index()
    first = {("boat", "NOUN"): "boat%1:06:00::"}
    preds = predict(
        index,
        np.stack([unit(0)] * 3),
        ["boat", "bank", "the"],
        ["NOUN", "VERB", "DET"],
        backoff=lambda lemma, pos: first.get((lemma, pos)),
    )
    assert (preds[0].key, preds[0].source) == ("boat%1:06:00::", "backoff")
    assert np.isnan(preds[0].score)
    assert (preds[1].key, preds[1].source) == (None, "none")  # no verb senses, no back-off
    assert preds[2].key is None
    assert answers(["i0", "i1", "i2"], preds) == {"i0": "boat%1:06:00::"}


def toy_graph() -> SenseGraph:
    """animal > dog (dog, domestic_dog), cat; plant (no vectors), in two lexnames."""
    key_synsets = {
        "dog%1:05:00::": "dog.n.01",
        "domestic_dog%1:05:00::": "dog.n.01",
        "cat%1:05:00::": "cat.n.01",
        "animal%1:03:00::": "animal.n.01",
        "puppy%1:05:00::": "puppy.n.01",
        "tree%1:20:00::": "tree.n.01",
        "oak%1:20:00::": "oak.n.01",
    }
    hypernyms = {"dog.n.01": ["animal.n.01"], "cat.n.01": ["animal.n.01"],
                 "puppy.n.01": ["dog.n.01"], "oak.n.01": ["tree.n.01"]}  # fmt: skip
    lexnames = {"dog.n.01": "noun.animal", "cat.n.01": "noun.animal",
                "animal.n.01": "noun.Tops", "puppy.n.01": "noun.animal",
                "tree.n.01": "noun.plant", "oak.n.01": "noun.plant"}  # fmt: skip
    return SenseGraph.build(key_synsets, hypernyms, lexnames)


def test_propagation_on_a_toy_neighbourhood():
    graph = toy_graph()
    known = ["dog%1:05:00::", "cat%1:05:00::", "tree%1:20:00::"]
    vecs = np.stack([2 * unit(0), 4 * unit(1), unit(2)])
    prop = propagate(graph, known, vecs, level="lexname")
    got = {k: (int(level), v) for k, level, v in zip(prop.keys, prop.levels, prop.vectors)}
    # synset: domestic_dog shares dog's synset
    assert got["domestic_dog%1:05:00::"][0] == 1
    np.testing.assert_allclose(got["domestic_dog%1:05:00::"][1], 2 * unit(0))
    # hypernym: puppy's hypernym is dog.n.01, whose synset vector is dog's
    assert got["puppy%1:05:00::"][0] == 2
    np.testing.assert_allclose(got["puppy%1:05:00::"][1], 2 * unit(0))
    # hypernym: oak -> tree
    assert got["oak%1:20:00::"][0] == 2
    # lexname: animal.n.01 has no vector, no hypernym with one; noun.Tops has no vector at all
    assert "animal%1:03:00::" not in got
    # known keys are never overwritten
    assert not set(known) & set(got)

    # a lexname step: a key whose synset and hypernyms are empty, in a lexname with vectors
    graph2 = SenseGraph.build(
        {"dog%1:05:00::": "dog.n.01", "cat%1:05:00::": "cat.n.01", "fox%1:05:00::": "fox.n.01"},
        {},
        {"dog.n.01": "noun.animal", "cat.n.01": "noun.animal", "fox.n.01": "noun.animal"},
    )
    prop2 = propagate(graph2, known[:2], vecs[:2], level="lexname")
    assert prop2.keys == ("fox%1:05:00::",) and prop2.levels.tolist() == [3]
    np.testing.assert_allclose(prop2.vectors[0], unit(0) + 2 * unit(1))  # mean of synset means
    # lower levels stop earlier
    assert propagate(graph2, known[:2], vecs[:2], level="hypernym").keys == ()
    assert propagate(graph, known, vecs, level="synset").keys == ("domestic_dog%1:05:00::",)
    assert propagate(graph, known, vecs, level="none").keys == ()
    only = propagate(graph, known, vecs, level="lexname", targets=["oak%1:20:00::"])
    assert only.keys == ("oak%1:20:00::",)


def test_index_with_propagation_marks_its_predictions():
    graph = toy_graph()
    vecs = np.stack([unit(0), unit(1)])
    index = SenseIndex(SenseIndexConfig(layers="-1", propagate="hypernym")).fit(
        vecs, [("dog%1:05:00::",), ("cat%1:05:00::",)], info=INFO, graph=graph
    )
    assert index.origin_of("puppy%1:05:00::") == "hypernym"
    preds = predict(index, np.stack([unit(0)]), ["puppy"], ["NOUN"])
    assert (preds[0].key, preds[0].source, preds[0].detail) == (
        "puppy%1:05:00::", "propagated", "hypernym"
    )  # fmt: skip
    with pytest.raises(InputError, match="graph"):
        SenseIndex(SenseIndexConfig(propagate="synset")).fit(
            vecs, [("dog%1:05:00::",)] * 2, info=INFO
        )


def test_gloss_concat_scores_are_weighted_cosines():
    rng = np.random.default_rng(0)
    c, g, q = rng.normal(size=(3, DIM)).astype(np.float32)
    keys, rows, gloss_only = combine_rows(
        ["a%1:00:00::"], c[None], ["a%1:00:00::", "b%1:00:00::"], np.stack([g, g]), 0.3
    )
    assert keys == ["a%1:00:00::", "b%1:00:00::"] and gloss_only.tolist() == [False, True]
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1, rtol=1e-5)
    index = SenseIndex(SenseIndexConfig(layers="-1", gloss="concat", gloss_weight=0.3)).fit(
        c[None].repeat(2, 0), [("a%1:00:00::",)] * 2, info=INFO,
        gloss=(["a%1:00:00::", "b%1:00:00::"], np.stack([g, -g])),
    )  # fmt: skip
    cos = lambda x, y: float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))  # noqa: E731
    scores = index.candidate_scores(q, "a", "NOUN")
    assert scores.keys == ("a%1:00:00::",)
    assert scores.scores[0] == pytest.approx(0.7 * cos(q, c) + 0.3 * cos(q, g), abs=1e-5)
    assert index.origin_of("b%1:00:00::") == "gloss"
    pred = predict(index, q[None], ["b"], ["NOUN"])[0]
    assert pred.source == "gloss" and pred.score == pytest.approx(-cos(q, g), abs=1e-5)


def test_save_load_round_trip_and_mismatch(tmp_path):
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(40, DIM)).astype(np.float32) + 3.0
    keys = [(f"w{i % 5}%1:00:0{i % 2}::",) for i in range(40)]
    training = TrainingInfo("toy-corpus", "abc", 4, 40)
    index = SenseIndex(SenseIndexConfig(layers="-1", correction="zscore")).fit(
        vecs, keys, info=INFO, training=training
    )
    path = save_index(index, tmp_path / "toy.index")
    back = load_index(path, info=INFO, layers="2")  # -1 == hidden state 2 of 3
    assert back.keys_ == index.keys_ and back.config == index.config
    assert back.training_ == training and back.encoder_ == INFO
    np.testing.assert_array_equal(back.vectors_, index.vectors_)
    queries = rng.normal(size=(6, DIM)).astype(np.float32)
    lemmas = [f"w{i % 5}" for i in range(6)]
    a = predict(index, queries, lemmas, ["NOUN"] * 6)
    b = predict(back, queries, lemmas, ["NOUN"] * 6)
    assert a == b
    np.testing.assert_allclose(back.transform_queries(queries), index.transform_queries(queries))

    other = EncoderInfo("other", "fp-other", DIM, 3, "mean")
    with pytest.raises(MismatchError, match="fingerprint"):
        load_index(path, info=other)
    with pytest.raises(MismatchError, match="pooling"):
        load_index(path, info=EncoderInfo("toy", "fp-toy", DIM, 3, "first"))
    with pytest.raises(MismatchError, match="layer spec"):
        load_index(path, info=INFO, layers="last2-sum")
    with pytest.raises(MismatchError):
        back.transform_queries(np.zeros((2, DIM + 1), np.float32))
    (path / "senses.npz").write_bytes(b"broken")
    with pytest.raises(DataError):
        load_index(path)


def test_index_senses_are_read_without_the_vectors(tmp_path):
    rng = np.random.default_rng(2)
    vecs = rng.normal(size=(30, DIM)).astype(np.float32)
    keys = [(f"w{i % 4}%1:00:0{i % 3}::",) for i in range(30)]
    training = TrainingInfo("toy-corpus", "abc", 3, 30)
    index = SenseIndex(SenseIndexConfig(layers="-1")).fit(vecs, keys, info=INFO, training=training)
    path = save_index(index, tmp_path / "toy.index")
    senses = load_index_senses(path)
    assert senses.training == training and senses.keys == index.keys_
    np.testing.assert_array_equal(senses.counts, index.counts_)
    # the same directory without its vectors: the senses still read, the index does not
    with np.load(path / "senses.npz") as data:
        kept = {k: data[k] for k in ("keys", "origin", "counts")}
    np.savez(path / "senses.npz", **kept)
    assert load_index_senses(path).keys == index.keys_
    with pytest.raises(DataError, match="not a workbench sense index"):
        load_index(path)
    (path / "meta.json").write_text("[]")
    with pytest.raises(DataError, match="not a workbench sense index"):
        load_index_senses(path)


def test_config_validation():
    with pytest.raises(InputError):
        SenseIndexConfig(propagate="everything")
    with pytest.raises(InputError):
        SenseIndexConfig(gloss_weight=2.0)
    with pytest.raises(InputError):
        SenseIndexConfig(layers="last-three")
    assert "zscore" in SenseIndexConfig(correction="zscore").label
    bi = SenseIndexConfig(layers="-1", gloss="only", gloss_pooling="trained")
    assert bi.label == "L-1 raw against the gloss encoder's vectors"  # not "trained" glosses


def test_gloss_concat_without_any_corpus_row_gives_gloss_rows():
    # helium: one sense, no usage example, so no corpus row at all (an IndexError once)
    rng = np.random.default_rng(2)
    g = rng.normal(size=(2, DIM)).astype(np.float32)
    index = SenseIndex(SenseIndexConfig(layers="-1", gloss="concat")).fit(
        np.zeros((0, DIM), np.float32), [], info=INFO,
        gloss=(["helium%1:27:00::", "neon%1:27:00::"], g),
    )  # fmt: skip
    assert index.keys_ == ("helium%1:27:00::", "neon%1:27:00::")
    assert [index.origin_of(k) for k in index.keys_] == ["gloss", "gloss"]
    assert index.counts_.tolist() == [0, 0]
    pred = predict(index, g[:1], ["helium"], ["NOUN"])[0]
    assert pred.key == "helium%1:27:00::" and pred.score == pytest.approx(1.0, abs=1e-5)


def test_gloss_only_index_scores_every_candidate_the_same_way():
    # a sense with usage examples and one without get the same kind of row: the gloss vector
    rng = np.random.default_rng(3)
    g = rng.normal(size=(3, DIM)).astype(np.float32)
    keys = ["bass%1:06:00::", "bass%1:13:00::", "bass%5:00:00:low:03"]
    index = SenseIndex(SenseIndexConfig(layers="-1", gloss="only")).fit(
        np.zeros((0, DIM), np.float32), [], info=INFO, gloss=(keys, g)
    )
    assert index.dim == DIM and {index.origin_of(k) for k in keys} == {"gloss"}
    q = rng.normal(size=DIM).astype(np.float32)
    scores = index.candidate_scores(q, "bass", "NOUN")
    cos = g[:2] @ q / np.linalg.norm(g[:2], axis=1) / np.linalg.norm(q)
    assert dict(zip(scores.keys, scores.scores.tolist())) == pytest.approx(
        dict(zip(keys[:2], cos.tolist())), abs=1e-5
    )
    with pytest.raises(InputError, match="gloss vectors only"):
        SenseIndexConfig(gloss="only", propagate="lexname")
    with pytest.raises(InputError, match="gloss"):
        SenseIndex(SenseIndexConfig(gloss="only")).fit(
            np.zeros((0, DIM), np.float32), [], info=INFO
        )


def test_an_index_saved_before_the_correction_was_so_named_still_loads(tmp_path):
    """Indexes saved when the config said ``postprocess`` and the fitted correction was
    ``postprocessor.npz``/``.json`` load and answer as before; new ones are written with the
    new names; a named system's cache folder keeps its name across the rename."""
    rng = np.random.default_rng(2)
    vecs = rng.normal(size=(40, DIM)).astype(np.float32) + 3.0
    keys = [(f"w{i % 5}%1:00:0{i % 2}::",) for i in range(40)]
    index = SenseIndex(SenseIndexConfig(layers="-1", correction="zscore")).fit(
        vecs, keys, info=INFO, training=TrainingInfo("toy-corpus", "abc", 4, 40)
    )
    new = save_index(index, tmp_path / "new.index")
    assert {p.name for p in new.iterdir()} >= {f"{CORRECTION_STEM}.npz", f"{CORRECTION_STEM}.json"}
    assert json.loads((new / "meta.json").read_text())["config"]["correction"] == "zscore"
    old = tmp_path / "old.index"  # the same index in the layout of before
    shutil.copytree(new, old)
    for ext in ("npz", "json"):
        (old / f"{CORRECTION_STEM}.{ext}").rename(old / f"{FORMER_CORRECTION_STEM}.{ext}")
    meta = json.loads((old / "meta.json").read_text())
    meta["config"]["postprocess"] = meta["config"].pop("correction")
    (old / "meta.json").write_text(json.dumps(meta))
    for extra in {p.name for p in old.iterdir()} - set(INDEX_FILES):
        (old / extra).unlink()  # the ledger: an index of before the ledgers
    back = load_index(old, info=INFO)
    assert back.config == index.config and back.correction_ is not None
    queries = rng.normal(size=(6, DIM)).astype(np.float32)
    lemmas = [f"w{i % 5}" for i in range(6)]
    assert predict(back, queries, lemmas, ["NOUN"] * 6) == predict(
        index, queries, lemmas, ["NOUN"] * 6
    )
    identity = SYSTEMS["best"].config.identity()
    assert (
        identity["postprocess"] == SYSTEMS["best"].config.correction
        and "correction" not in identity
    )
    assert system_index_path(INFO, SYSTEMS["best"], "x").name.startswith("best-semcor-")


@pytest.mark.parametrize("correction", ["zscore", "center", "abtt", "whiten", "none"])
def test_a_saved_index_with_a_correction_answers_one_occurrence(tmp_path, correction):
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(40, DIM)).astype(np.float32) + 3.0
    keys = [(f"w{i % 5}%1:00:0{i % 2}::",) for i in range(40)]
    index = SenseIndex(SenseIndexConfig(layers="-1", correction=correction)).fit(
        vecs, keys, info=INFO
    )
    back = load_index(save_index(index, tmp_path / "one.index"), info=INFO)
    query = rng.normal(size=(1, DIM)).astype(np.float32)
    assert predict(back, query, ["w1"], ["NOUN"]) == predict(index, query, ["w1"], ["NOUN"])
    assert len(predict(back, query, ["w1"], ["NOUN"])) == 1
    scores = back.candidate_scores(query[0], "w1", "NOUN")
    assert set(scores.keys) == {"w1%1:00:00::", "w1%1:00:01::"}
    # fitting a correction still needs a spread: one training vector is refused, naming the
    # correction and the corpus (it said "X: need at least two vectors, got 1")
    single = SenseIndex(SenseIndexConfig(layers="-1", correction=correction))
    if correction != "none":
        expected = (
            f"a {correction} correction is fitted on the training vectors, and one.xml gives 1"
        )
        with pytest.raises(InputError, match=expected):
            single.fit(vecs[:1], keys[:1], info=INFO, training=TrainingInfo("one.xml", "a", 1, 1))
