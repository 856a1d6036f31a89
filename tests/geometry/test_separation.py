"""Sense separation on planted clusters: known structure in, silhouette and 1-NN bounds out."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import silhouette_samples, silhouette_score

from workbench.errors import InputError
from workbench.geometry.corrections import make_correction
from workbench.geometry.separation import (
    sense_separation,
    separation_by_layer,
)


def planted(n_per: int = 40, n_senses: int = 3, dim: int = 32, noise: float = 0.05, seed: int = 0):
    """Occurrences around ``n_senses`` random orthogonal-ish directions; labels s0, s1, ..."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_senses, dim))
    x = np.concatenate([c + noise * rng.normal(size=(n_per, dim)) for c in centres])
    labels = [f"s{k}" for k in range(n_senses) for _ in range(n_per)]
    return x.astype(np.float32), labels


def test_well_separated_senses_score_near_one_and_every_neighbour_right():
    x, labels = planted()
    s = sense_separation(x, labels)
    assert s.silhouette > 0.9
    assert s.nn_accuracy == 1.0
    assert s.n_measured == 120 and s.n_senses == 3 and s.note == ""
    assert s.chance == pytest.approx(3 * 40 * 39 / (120 * 119))
    assert all(p.silhouette > 0.9 and p.nn_accuracy == 1.0 for p in s.senses)


def test_shuffled_labels_score_near_zero_and_chance():
    x, labels = planted(n_per=100)
    shuffled = list(np.random.default_rng(1).permutation(labels))
    s = sense_separation(x, shuffled)
    assert abs(s.silhouette) < 0.1
    # 1-NN of random labels: chance (~1/3) within a few standard errors
    assert abs(s.nn_accuracy - s.chance) < 3 * math.sqrt(s.chance * (1 - s.chance) / 300) + 0.02
    assert 0.3 < s.chance < 0.34


def test_silhouette_matches_scikit_learn_cosine():
    x, labels = planted(n_per=15, noise=0.8, seed=3)
    s = sense_separation(x, labels)
    assert s.silhouette == pytest.approx(silhouette_score(x, labels, metric="cosine"), abs=1e-5)
    per = silhouette_samples(x, labels, metric="cosine")
    lab = np.asarray(labels)
    for sense in s.senses:
        assert sense.silhouette == pytest.approx(per[lab == sense.label].mean(), abs=1e-5)


def test_a_sense_seen_once_is_counted_but_left_out():
    x, labels = planted(n_per=10, n_senses=2)
    x = np.concatenate([x, np.ones((1, x.shape[1]), np.float32)])
    labels = [*labels, "lonely"]
    s = sense_separation(x, labels)
    assert s.counts() == {"s0": 10, "s1": 10, "lonely": 1}
    lonely = s.senses[-1]
    assert not lonely.measured and math.isnan(lonely.silhouette)
    assert s.n_measured == 20 and s.n_senses == 2 and s.nn_accuracy == 1.0
    # raising min_count leaves only one sense: undefined, with the reason
    t = sense_separation(x, labels, min_count=11)
    assert math.isnan(t.silhouette) and math.isnan(t.nn_accuracy)
    assert "at least 2 senses" in t.note and "lonely: 1" in t.note


def test_unlabelled_occurrences_are_left_out():
    x, labels = planted(n_per=8, n_senses=2)
    s = sense_separation(np.concatenate([x, x[:3]]), [*labels, "", "", ""])
    assert s.n_unlabelled == 3 and s.n_measured == 16


def test_bad_input_raises_input_error():
    x, labels = planted(n_per=5, n_senses=2)
    with pytest.raises(InputError, match="labels"):
        sense_separation(x, labels[:-1])
    with pytest.raises(InputError, match="min_count"):
        sense_separation(x, labels, min_count=1)
    bad = x.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        sense_separation(bad, labels)


def test_by_layer_finds_the_separating_layer_raw_and_corrected():
    sep, labels = planted(n_per=30, n_senses=3, noise=0.05)
    rng = np.random.default_rng(5)
    noise = rng.normal(size=sep.shape).astype(np.float32)
    # hidden states 0..2: noise, the clusters, noise; one rogue dimension of large variance that
    # carries no sense dominates raw cosines (Timkey & van Schijndel 2021), z-scores tame it
    vectors = np.stack([noise, sep, noise[::-1]], axis=1)
    vectors[:, :, 0] += 30.0 * rng.normal(size=(len(labels), 1)).astype(np.float32)
    post = make_correction("zscore").fit(vectors)
    specs = ["0", "1", "2", "sum:1,2"]
    curve = separation_by_layer(vectors, labels, [0, 1, 2], post=post, specs=specs)
    assert curve.corrections == ("none", "zscore")
    assert curve.peak("silhouette", "zscore") == "1"
    assert curve.peak("nn_accuracy", "zscore") == "1"
    assert curve.get("1", "zscore").nn_accuracy == 1.0
    assert curve.get("0", "zscore").nn_accuracy < 0.6
    assert curve.get("1", "zscore").silhouette > 0.5 > curve.get("1", "none").silhouette
    assert set(curve.series("silhouette")) == {"none", "zscore"}
    assert len(curve.records()) == 8
    assert curve.table().columns[0] == "layer" and len(curve.table().rows) == 4
    with pytest.raises(InputError, match="no separation at layer"):
        curve.get("7")
