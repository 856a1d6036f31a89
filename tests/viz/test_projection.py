"""Projection: planted clusters come back, neighbourhoods are kept, small inputs are handled."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import InputError
from workbench.viz.projection import (
    METHODS,
    ProjectionConfig,
    Projector,
    project,
    project_layers,
    trustworthiness,
)


def _clusters(n_per: int = 40, k: int = 4, dim: int = 32, seed: int = 0):
    """``k`` well-separated Gaussian blobs: (k * n_per, dim) vectors and their labels."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, dim)) * 6
    x = np.concatenate([c + rng.normal(size=(n_per, dim)) for c in centres])
    return x.astype(np.float32), np.repeat(np.arange(k), n_per)


def _knn_purity(coords: np.ndarray, labels: np.ndarray, k: int = 5) -> float:
    """Share of each point's k nearest projected neighbours that carry its label."""
    d = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    nn = np.argsort(d, axis=1)[:, :k]
    return float((labels[nn] == labels[:, None]).mean())


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n_components", [2, 3])
def test_planted_clusters_come_back(method, n_components):
    x, labels = _clusters()
    coords = Projector(method=method, n_components=n_components, random_state=0).fit_transform(x)
    assert coords.shape == (len(x), n_components) and coords.dtype == np.float32
    assert np.isfinite(coords).all()
    assert _knn_purity(coords, labels) > 0.95
    assert trustworthiness(x, coords, metric="euclidean") > 0.9


def test_umap_trustworthiness_on_a_manifold():
    rng = np.random.default_rng(1)
    t = rng.uniform(0, 3 * np.pi, 300)
    x = np.stack([t * np.cos(t), rng.uniform(0, 10, 300), t * np.sin(t)], axis=1)  # swiss roll
    x = np.concatenate([x, rng.normal(scale=0.01, size=(300, 7))], axis=1)
    coords = project(x, ProjectionConfig(metric="euclidean", random_state=0))
    assert trustworthiness(x, coords, n_neighbors=10, metric="euclidean") > 0.97


def test_random_state_makes_umap_reproducible():
    x, _ = _clusters(n_per=20)
    a = Projector(random_state=3).fit_transform(x)
    b = Projector(random_state=3).fit_transform(x)
    np.testing.assert_allclose(a, b)


def test_fit_returns_self_and_state_ends_in_underscore():
    x, _ = _clusters(n_per=10)
    proj = Projector(method="pca")
    assert not hasattr(proj, "embedding_")
    assert proj.fit(x) is proj
    assert proj.embedding_.shape == (40, 2)
    np.testing.assert_allclose(proj.transform(x), proj.embedding_, atol=1e-4)


def test_umap_transform_places_new_points_near_their_cluster():
    x, labels = _clusters(n_per=30, seed=2)
    proj = Projector(random_state=0).fit(x[::2])
    new = proj.transform(x[1::2])
    fitted = proj.embedding_
    d = ((new[:, None, :] - fitted[None, :, :]) ** 2).sum(-1)
    assert (labels[::2][d.argmin(axis=1)] == labels[1::2]).mean() > 0.9


def test_tsne_cannot_transform():
    x, _ = _clusters(n_per=10)
    with pytest.raises(InputError, match="t-SNE"):
        Projector(method="tsne").fit(x).transform(x)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [3, 4, 7])
def test_tiny_inputs_work(method, n):
    x = np.random.default_rng(n).normal(size=(n, 16))
    coords = Projector(method=method, n_neighbors=15, perplexity=30).fit_transform(x)
    assert coords.shape == (n, 2) and np.isfinite(coords).all()


def test_bad_inputs_raise_input_errors():
    with pytest.raises(InputError, match="at least"):
        project(np.zeros((2, 5)))
    with pytest.raises(InputError, match="shape"):
        project(np.zeros((5,)))
    with pytest.raises(InputError, match="NaN"):
        project(np.full((5, 4), np.nan))
    with pytest.raises(InputError, match="method"):
        ProjectionConfig(method="mds")
    with pytest.raises(InputError, match="n_components"):
        ProjectionConfig(n_components=4)
    with pytest.raises(InputError, match="min_dist"):
        ProjectionConfig(min_dist=1.5)
    with pytest.raises(InputError, match="fitted"):
        Projector().transform(np.zeros((3, 3)))


def test_project_layers_projects_each_layer():
    x, labels = _clusters(n_per=15, k=3)
    noise = np.random.default_rng(0).normal(size=x.shape).astype(np.float32)
    stacked = np.stack([noise, x], axis=1)  # layer 0: no structure, layer 1: clusters
    coords = project_layers(stacked, ProjectionConfig(method="pca"))
    assert coords.shape == (2, 45, 2)
    assert _knn_purity(coords[1], labels) > _knn_purity(coords[0], labels) + 0.3
