"""What the app's server loads before the first visitor, in order: the packaged model, WordNet,
every page's default view (Explore's neighbours, Geometry's table, Senses' default word, the
demo corpus map, WSD's default answer) in the order a visitor meets the pages, UMAP's compiled
code (on a new install compiled first in a process of its own, beside the model's load), then
the view a visitor turns to next (Geometry's WordNet corpus). The demo map coloured by predicted
sense is made when a visitor asks for it, in the background with its progress (on an empty cache
it encodes the glosses of every sense of the demo texts' words, long work on every core, which a
first visitor's pages should not share).

Every step warms the very cache entries the pages use (``st.cache_resource`` / the memo of
:mod:`webapp.memo`), so a page opened after a step finished draws from warm state; a page
opened before waits on the same entry, never computing anything twice. Adding a resource is one
line in :data:`STEPS` (a name and a function of no argument); :mod:`webapp.startup` runs them.

This module imports torch and the library: :mod:`webapp.startup` imports it inside the preload
thread, after the server answers its health check.

Example::

    for name, work in webapp.preload.STEPS:
        work()                                   # what the preload thread does, step by step
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import webapp.loaded_model
from webapp.caches import corpora, encodings, figures, indexes
from webapp.defaults import EXPLORE_TEXT, GEOMETRY_PAIRS, GEOMETRY_SAMPLE, WSD_TEXT, WSD_WORD
from webapp.panes import OFFERED_CORRECTIONS
from webapp.settings import Settings
from workbench.corpora.occurrences import demo_words
from workbench.encoding.alignment import split_words
from workbench.geometry.analysis import GeometryConfig
from workbench.viz.compiled import warm_elsewhere
from workbench.viz.corpus_map import CorpusMapConfig
from workbench.viz.neighbours import PoolPart, split_sentences
from workbench.viz.projection import ProjectionConfig, Projector
from workbench.wsd.disambiguate import target_lemmas
from workbench.wsd.systems.registry import DEFAULT_SYSTEM


def _model() -> None:
    webapp.loaded_model.encoder_for(Settings())


def _faiss() -> None:
    import faiss  # noqa: F401 - the first page searches with it right after the model


def _wordnet() -> None:
    corpora.wordnet()


def _datasets() -> None:
    corpora.available_datasets()


def _explore_view() -> None:
    """The Explore page's default view: its text, the demo reference corpus, the z-score fit."""
    settings = Settings()
    sentences = split_sentences(EXPLORE_TEXT)
    text_key = encodings.text_key(EXPLORE_TEXT)
    emb = encodings.warm_words(("text", text_key), sentences, settings)
    reference = "demo"
    ref = corpora.reference_sentences(reference)
    ref_emb = encodings.warm_words(("reference", reference, len(ref)), ref, settings)
    enc = webapp.loaded_model.encoder_for(settings)
    encodings.fitted_correction((settings.key, reference), "zscore", reference, enc, ref_emb)
    parts = (PoolPart("reference", ref, ref_emb), PoolPart("your text", sentences, emb))
    key = (settings.key, settings.layers, reference, text_key, False)
    figures.neighbour_pool(key, parts, None, settings.layers)


def _senses_view() -> None:
    """The Senses page's default view: the first demo word's occurrences, encoded."""
    settings, word = Settings(), demo_words()[0]
    found = corpora.occurrences("demo", word, None, None, None, "upload", _corpus=None)
    occ_key = ("demo", word, None, None, "")
    emb = encodings.warm_occurrences(occ_key, found, settings)
    config = ProjectionConfig(method="umap", n_components=2, n_neighbors=15, min_dist=0.1,
                              random_state=0)  # fmt: skip
    figures.projection(((settings.key, occ_key), settings.layers),
                       emb.select(settings.layers), config)  # fmt: skip


def _geometry_view() -> None:
    """The Geometry page's default view: its default corpus and sample, encoded, and every
    layer measured under every correction (the page's table and figures)."""
    settings = Settings()
    reference = corpora.reference_options()[0]  # the demo texts, whole
    sentences = corpora.reference_sentences(reference, None)
    key = ("reference", reference, len(sentences))
    emb = encodings.warm_words(key, sentences, settings)
    config = GeometryConfig(n_pairs=GEOMETRY_PAIRS)
    figures.geometry((settings.key, reference, len(sentences)), emb, config)


def _geometry_wordnet() -> None:
    """The Geometry page's other corpus, WordNet's glosses and examples: read, its default
    sample encoded and every layer measured, so that the page's switch to it draws from warm
    state (read and measured on demand, it kept a visitor waiting: docs/benchmarks.md)."""
    settings = Settings()
    sentences = corpora.reference_sentences("wordnet", GEOMETRY_SAMPLE)
    key = ("reference", "wordnet", len(sentences))
    emb = encodings.warm_words(key, sentences, settings)
    config = GeometryConfig(n_pairs=GEOMETRY_PAIRS)
    figures.geometry((settings.key, "wordnet", len(sentences)), emb, config)


def _corpus_map_view() -> None:
    """The Corpus map page's default view: the demo texts' map at the model's last layer,
    uncorrected (made once and stored in the cache dir, loaded from there after)."""
    settings = Settings()
    enc = webapp.loaded_model.encoder_for(settings)
    config = CorpusMapConfig(
        layer=str(enc.n_layers), correction=OFFERED_CORRECTIONS[0], max_sentences=0
    )
    build = figures.corpus_map_build("demo", config, settings=settings)
    while not build.done:
        time.sleep(0.1)
    if build.error is not None:
        raise build.error


def _wsd_answer() -> None:
    """The WSD page's default system for the packaged model (the bi-encoder shipped for it),
    opened as the page opens it, and the glosses of the page's default word (its first answer
    is then a context pass away)."""
    settings = Settings()
    opened = indexes.opened_system(DEFAULT_SYSTEM, settings.key, settings)
    if opened.name == DEFAULT_SYSTEM:
        opened.index(target_lemmas(WSD_WORD, corpora.wordnet()))
        opened.encoder.encode([split_words(WSD_TEXT)], progress=False)


def _umap_elsewhere() -> None:
    """UMAP's first compilation on this machine, started in a process of its own (on the core
    the model's load leaves; :func:`workbench.viz.compiled.warm_elsewhere`), which this
    process's first fit waits for; nothing where numba's cache already holds it."""
    warm_elsewhere()


def _umap() -> None:
    """UMAP's numba code, compiled once per process (the first fit of a process compiles)."""
    points = np.random.default_rng(0).normal(size=(30, 8))
    Projector(n_neighbors=5, random_state=0).fit(points)


#: How many of :data:`STEPS` the first page a visitor opens (Explore) needs: the later ones
#: stand aside while a visitor's page runs (:func:`webapp.startup.yield_to_visitors`).
FIRST_VIEW_STEPS = 4
#: What the server loads at start, in order: UMAP's compilation started in another process
#: (it returns at once), the model, then each page's default view in
#: the order a visitor meets the pages (Explore, Geometry, Senses, Corpus map, WSD), then the
#: views a visitor turns to next (the demo map by sense, Geometry's WordNet corpus).
STEPS: tuple[tuple[str, Callable[[], None]], ...] = (
    ("UMAP's first compilation, elsewhere", _umap_elsewhere),
    ("the packaged model", _model),
    ("FAISS", _faiss),
    ("the Explore page's default view", _explore_view),
    ("WordNet", _wordnet),
    ("the list of datasets", _datasets),
    ("the Geometry page's default view", _geometry_view),
    ("UMAP's compiled code", _umap),
    ("the Senses page's default view", _senses_view),
    ("the Corpus map page's default view", _corpus_map_view),
    ("the WSD bi-encoder", _wsd_answer),
    ("the Geometry page's WordNet corpus", _geometry_wordnet),
)
