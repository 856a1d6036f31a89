"""Low-dimensional projections of word vectors: UMAP, PCA or t-SNE behind one interface.

The :class:`Projector` follows scikit-learn's estimator contract: ``__init__`` only stores
parameters, :meth:`Projector.fit` returns ``self``, learned state ends in ``_``. Small inputs are
handled explicitly (``n_neighbors`` and ``perplexity`` are clipped to what the number of points
allows, and fewer than 3 points raise :class:`~workbench.errors.InputError`)::

    from workbench.viz.projection import ProjectionConfig, Projector, trustworthiness
    proj = Projector(ProjectionConfig(method="umap", n_components=2, random_state=0))
    coords = proj.fit_transform(vectors)          # (n_points, dim) -> (n_points, 2) float32
    trustworthiness(vectors, coords)              # in [0, 1], 1 = neighbourhoods kept
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from workbench.bounds import POSITIVE, PROBABILITY, SEED, Bound
from workbench.errors import InputError
from workbench.viz.compiled import import_umap

Method = Literal["umap", "pca", "tsne"]
METHODS: tuple[str, ...] = ("umap", "pca", "tsne")
MIN_POINTS = 3


@dataclass(frozen=True)
class ProjectionConfig:
    """Everything that changes a projection (its fields form the cache key of the app)."""

    method: Method = "umap"  # umap | pca | tsne
    n_components: int = 2  # 2 or 3
    n_neighbors: int = 15  # UMAP: size of the local neighbourhood (clipped to n_points - 1)
    min_dist: float = 0.1  # UMAP: how tightly points may pack, in [0, 1)
    metric: Literal["cosine", "euclidean"] = "cosine"  # UMAP and t-SNE input metric
    perplexity: float = 30.0  # t-SNE: clipped to (n_points - 1) / 3
    random_state: int | None = 0  # None: UMAP runs multi-threaded, not reproducible

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise InputError(f"unknown projection method {self.method!r}; use one of {METHODS}")
        if self.n_components not in (2, 3):
            raise InputError(f"n_components must be 2 or 3, got {self.n_components}")
        Bound(low=2, integer=True).check("n_neighbors", self.n_neighbors)
        PROBABILITY.check("min_dist", self.min_dist)
        POSITIVE.check("perplexity", self.perplexity)
        SEED.check("random_state", self.random_state, optional=True)


def _check_vectors(x: np.ndarray) -> np.ndarray:
    """Return ``x`` as a finite float32 ``(n_points, dim)`` array or raise InputError."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise InputError(f"vectors must have shape (n_points, dim), got {x.shape}")
    if x.shape[0] < MIN_POINTS:
        raise InputError(
            f"a projection needs at least {MIN_POINTS} points, got {x.shape[0]}; "
            "add sentences that contain the word"
        )
    if not np.isfinite(x).all():
        raise InputError("vectors contain NaN or infinite values")
    return x


def _make_estimator(cfg: ProjectionConfig, n_points: int) -> Any:
    """The underlying estimator for ``cfg``, with parameters clipped to ``n_points`` (a umap or
    scikit-learn estimator; neither package has type information)."""
    if cfg.method == "pca":
        from sklearn.decomposition import PCA

        return PCA(n_components=cfg.n_components, random_state=cfg.random_state)
    if cfg.method == "tsne":
        from sklearn.manifold import TSNE

        perplexity = min(cfg.perplexity, max(1.0, (n_points - 1) / 3))
        return TSNE(
            n_components=cfg.n_components,
            perplexity=perplexity,
            metric=cfg.metric,
            init="pca",
            random_state=cfg.random_state,
        )
    umap = import_umap()
    small = n_points <= cfg.n_components + 2  # spectral init needs a few more points
    return umap.UMAP(
        n_components=cfg.n_components,
        n_neighbors=min(cfg.n_neighbors, n_points - 1),
        min_dist=cfg.min_dist,
        metric=cfg.metric,
        init="random" if small else "spectral",
        random_state=cfg.random_state,
        n_jobs=1 if cfg.random_state is not None else -1,
    )


class Projector:
    """Project ``(n_points, dim)`` vectors to ``(n_points, n_components)``.

    Args:
        config: a :class:`ProjectionConfig`; keyword overrides are applied on top of it.
        **overrides: any :class:`ProjectionConfig` field, e.g. ``method="pca"``.

    Attributes (after :meth:`fit`):
        embedding_: ``(n_points, n_components)`` float32 coordinates of the fitted points.
        estimator_: the fitted umap / scikit-learn estimator.

    Example:
        >>> coords = Projector(method="pca").fit_transform(np.random.rand(10, 4))
        >>> coords.shape
        (10, 2)
    """

    def __init__(self, config: ProjectionConfig | None = None, **overrides: Any) -> None:
        self.config = replace(config or ProjectionConfig(), **overrides)

    def fit(self, x: np.ndarray) -> Projector:
        """Fit on ``x`` ``(n_points, dim)``; returns ``self``."""
        x = _check_vectors(x)
        if x.shape[1] < self.config.n_components:
            raise InputError(
                f"{x.shape[1]}-dimensional vectors cannot give "
                f"{self.config.n_components} components"
            )
        est = _make_estimator(self.config, x.shape[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # umap/numba chatter about n_jobs and spectral init
            coords = est.fit_transform(x)
        self.estimator_ = est
        self.embedding_ = np.asarray(coords, dtype=np.float32)
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        """Place new points ``(n, dim)`` in the fitted space (UMAP and PCA; t-SNE cannot)."""
        if not hasattr(self, "estimator_"):
            raise InputError("Projector is not fitted; call fit() first")
        if self.config.method == "tsne":
            raise InputError("t-SNE cannot place new points; use fit_transform or UMAP / PCA")
        x = np.asarray(x, dtype=np.float32)
        if x.ndim != 2:
            raise InputError(f"vectors must have shape (n_points, dim), got {x.shape}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(self.estimator_.transform(x), dtype=np.float32)

    def fit_transform(self, x: np.ndarray) -> np.ndarray:
        """Fit on ``x`` and return its ``(n_points, n_components)`` float32 coordinates."""
        return self.fit(x).embedding_


def project(x: np.ndarray, config: ProjectionConfig | None = None) -> np.ndarray:
    """Shortcut: ``Projector(config).fit_transform(x)``."""
    return Projector(config).fit_transform(x)


def project_layers(vectors: np.ndarray, config: ProjectionConfig | None = None) -> np.ndarray:
    """Project each layer on its own (for small multiples).

    Args:
        vectors: ``(n_points, n_layers, dim)``.
        config: the projection settings, shared by every layer.

    Returns:
        ``(n_layers, n_points, n_components)`` float32.
    """
    vectors = np.asarray(vectors)
    if vectors.ndim != 3:
        raise InputError(f"vectors must have shape (n_points, n_layers, dim), got {vectors.shape}")
    return np.stack([project(vectors[:, i], config) for i in range(vectors.shape[1])])


def trustworthiness(
    x: np.ndarray, coords: np.ndarray, n_neighbors: int = 5, metric: str = "cosine"
) -> float:
    """How well ``coords`` keeps the ``n_neighbors`` nearest neighbours of ``x`` (Venna & Kaski).

    Args:
        x: ``(n_points, dim)`` original vectors.
        coords: ``(n_points, k)`` projected coordinates.
        n_neighbors: neighbourhood size, clipped below ``n_points / 2``.
        metric: metric in the original space.

    Returns:
        A float in [0, 1]; 1 means every projected neighbourhood is a true one.
    """
    from sklearn.manifold import trustworthiness as _tw

    x = _check_vectors(x)
    coords = np.asarray(coords, dtype=np.float32)
    if coords.shape[0] != x.shape[0]:
        raise InputError(f"{coords.shape[0]} coordinates for {x.shape[0]} vectors")
    k = max(1, min(n_neighbors, (x.shape[0] - 1) // 2))
    return float(_tw(x, coords, n_neighbors=k, metric=metric))
