"""What the app's figures are drawn from, cached by what made it: projections, a word's sense
views, the geometry of every layer, the nearest-neighbour pools and the corpus maps (made in the
background, :mod:`webapp.builds`).

Every function is cached (``st.cache_data`` / ``st.cache_resource`` or a background build), so a
rerun after an unrelated widget recomputes nothing; user errors become in-page messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable

import numpy as np
import streamlit as st

from webapp.builds import Build, background
from webapp.caches.corpora import map_corpus, wordnet
from webapp.loaded_model import encoder
from webapp.settings import Settings, current
from workbench.corpora.occurrences import OccurrenceVectors
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.geometry.analysis import GeometryConfig, GeometryResult, analyze_layers
from workbench.geometry.correction import Correction
from workbench.viz import sense_views
from workbench.viz.corpus_map import CorpusMap, CorpusMapConfig, corpus_map
from workbench.viz.neighbours import NeighbourPool, PoolPart
from workbench.viz.projection import ProjectionConfig, Projector, project_layers
from workbench.viz.sense_views import SenseView, WordsView


@st.cache_data(show_spinner="Projecting…", max_entries=128)
def projection(key: Hashable, _vectors: np.ndarray, config: ProjectionConfig) -> np.ndarray:
    """Coordinates of ``_vectors`` ``(n, dim)`` under ``config``; ``key`` names the vectors."""
    return Projector(config).fit_transform(np.asarray(_vectors))


@st.cache_data(show_spinner="Projecting every layer…", max_entries=32)
def layer_projections(key: Hashable, _vectors: np.ndarray, config: ProjectionConfig) -> np.ndarray:
    """``(n_layers, n, k)`` coordinates, each layer of ``_vectors`` ``(n, L, dim)`` on its own."""
    return project_layers(np.asarray(_vectors), config)


@st.cache_data(show_spinner="Measuring the senses…", max_entries=64)
def _measured_view(
    key: Hashable,
    _ov: OccurrenceVectors,
    layer: str,
    _post: Correction | None,
    reference: str,
    data: dict | None,
) -> SenseView:
    return sense_views.sense_view(_ov, layer, _post, None, reference, data)


def sense_view(
    key: Hashable,
    _ov: OccurrenceVectors,
    layer: str,
    _post: Correction | None,
    config: ProjectionConfig | None,
    reference: str = "",
    data: dict | None = None,
) -> SenseView:
    """:func:`workbench.viz.sense_views.sense_view` of ``_ov`` at ``layer`` after ``_post``;
    ``key`` names the vectors and the correction (model settings, occurrences, reference).

    The measures (separation at the layer and over every layer) and the projection are cached
    apart, so another projection setting or seed only fits a projection."""
    view = _measured_view(key, _ov, layer, _post, reference, data)
    if config is None:
        return view
    vectors = sense_views.corrected_vectors(_ov, layer, _post)
    coords = projection((key, layer, "sense-view"), vectors, config)
    shown = dataclasses.replace(view.settings, projection=config, seed=config.random_state)
    return dataclasses.replace(view, coords=coords, settings=shown)


@st.cache_data(show_spinner="Projecting the words together…", max_entries=16)
def words_view(
    key: Hashable,
    _parts: tuple[tuple[str, OccurrenceVectors], ...],
    layer: str,
    config: ProjectionConfig,
    data: dict | None = None,
    apart: bool = False,
) -> WordsView:
    """:func:`workbench.viz.sense_views.words_view` of several words' raw vectors (each word
    projected on its own with ``apart``); ``key`` names the words' occurrences and the model
    settings."""
    return sense_views.words_view(list(_parts), layer, None, config, data=data, apart=apart)


@st.cache_resource(show_spinner="Measuring every layer under every correction…", max_entries=8)
def geometry(key: Hashable, _emb: LayerwiseEmbeddings, config: GeometryConfig) -> GeometryResult:
    """:func:`workbench.geometry.analysis.analyze_layers` of ``_emb``, cached by ``key`` +
    config."""

    return analyze_layers(_emb.vectors, _emb.words, _emb.sentence_index, _emb.layers, config)


@st.cache_resource(show_spinner="Indexing the words…", max_entries=16)
def neighbour_pool(
    key: Hashable, _parts: tuple[PoolPart, ...], _post: Correction | None, layers: str
) -> NeighbourPool:
    """A :class:`workbench.viz.neighbours.NeighbourPool` over the words of ``_parts`` at
    ``layers`` (after the fitted correction ``_post`` if given); cached by ``key``."""

    return NeighbourPool(layers, post=_post).fit(_parts)


def corpus_map_build(
    source: str,
    config: CorpusMapConfig,
    upload: bytes | None = None,
    upload_name: str = "upload",
    settings: Settings | None = None,
) -> Build:
    """The corpus map of ``source`` for the model of ``settings`` (default: the sidebar's),
    made (or loaded from the cache dir) in the background once per model settings, corpus and
    config; ``build.result`` is the :class:`~workbench.viz.corpus_map.CorpusMap`. The server's
    preload starts the demo map's build with the default settings: the page finds it."""
    enc, wn = encoder(settings), wordnet()
    settings = settings or current()
    the_corpus = map_corpus(source, upload, upload_name)
    key = ("corpus-map", settings.key, source, the_corpus.sha256, config)
    kept = the_corpus.head(config.max_sentences) if config.max_sentences else the_corpus
    n_words = sum(len(s.words) for s in kept.sentences)

    def work(build: Build) -> CorpusMap:
        def progress(fraction: float, stage: str) -> None:
            build.fraction, build.stage = fraction, stage
            build.message = (
                f"Making the map of {the_corpus.name} ({n_words:,} words) once for "
                "this model, layer and correction; it is stored for next time, and goes on if "
                "you leave the page."
            )

        build.stage = "Loading the map…"
        return corpus_map(enc, the_corpus, config, wn, progress=progress)

    return background(key, work)
