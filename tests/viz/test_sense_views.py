"""Sense views: one word through one model, layer and correction; several words in one map."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.corpora.occurrences import encode_occurrences, lemma_occurrences
from workbench.errors import InputError, MismatchError
from workbench.geometry.corrections import make_correction
from workbench.viz.projection import ProjectionConfig
from workbench.viz.sense_figures import sense_view_figure, separation_figure, words_figure
from workbench.viz.sense_views import (
    corrected_vectors,
    sense_view,
    words_view,
)

PCA = ProjectionConfig(method="pca", random_state=3)


@pytest.fixture(scope="module")
def bank(tiny_encoder):
    return encode_occurrences(tiny_encoder, lemma_occurrences("bank", "demo"))


def test_sense_view_projects_measures_and_records_settings(bank, tmp_cache):
    post = make_correction("zscore").fit(bank.vectors)
    view = sense_view(bank, "2", post, PCA, reference="demo", data={"lemma": "bank"})
    n = len(bank.occurrences)
    assert view.coords.shape == (n, 2) and view.labels == tuple(bank.labels)
    assert view.separation.correction == "zscore" and view.raw.correction == "none"
    assert view.curve.layers == ("0", "1", "2") and view.curve.corrections == ("none", "zscore")
    assert view.separation.silhouette == pytest.approx(view.curve.get("2", "zscore").silhouette)
    s = view.settings
    assert (s.layer, s.correction, s.reference, s.seed) == ("2", "zscore", "demo", 3)
    assert s.fingerprint == bank.emb.fingerprint and s.data["lemma"] == "bank"
    assert s.data["n_occurrences"] == n and len(s.data["occurrences_sha256"]) == 64
    # corrections apply per layer before layers are combined
    combined = corrected_vectors(bank, "sum:1,2", post)
    z = post.transform(bank.vectors)
    np.testing.assert_allclose(combined, z[:, 1] + z[:, 2], rtol=1e-5)
    fig = sense_view_figure(view)
    assert "silhouette" in fig.layout.title.text
    assert len(separation_figure({"a": view.curve, "b": view.curve}).data) == 2 * (2 + 2 + 1)


def test_a_view_without_projection_and_with_bad_labels(bank):
    view = sense_view(bank, "1")
    assert view.coords.shape == (len(bank.occurrences), 0) and view.raw is view.separation
    with pytest.raises(InputError, match="no projection"):
        sense_view_figure(view)
    with pytest.raises(InputError, match="labels"):
        sense_view(bank, "1", labels=["x"])


def test_several_words_in_one_projection_in_one_projection(bank, tiny_encoder, tmp_cache):
    bass = encode_occurrences(tiny_encoder, lemma_occurrences("bass", "demo"))
    atlas = words_view([("bank", bank), ("bass", bass)], "2", projection=PCA)
    n = len(bank.occurrences) + len(bass.occurrences)
    assert atlas.coords.shape == (n, 2) and set(atlas.lemmas) == {"bank", "bass"}
    assert set(atlas.separation) == {"bank", "bass"}
    fig = words_figure(atlas)
    assert {t.legendgroup for t in fig.data} == {"bank", "bass"}
    assert sum(len(t.x) for t in fig.data) == n
    other = dataclasses.replace(bass, emb=dataclasses.replace(bass.emb, fingerprint="other"))
    with pytest.raises(MismatchError):
        words_view([("bank", bank), ("bass", other)], "2")
    with pytest.raises(InputError):
        words_view([], "2")
