"""The app's data caches: WordNet, corpora, encodings, projections, reference corpora, sense
indexes and WSD evaluations (the settings, model and memo they use live in :mod:`webapp.settings`,
:mod:`webapp.loaded_model` and :mod:`webapp.memo`, the background builds in :mod:`webapp.builds`).

Every function is cached (``st.cache_resource`` / ``st.cache_data`` or the in-process memo), so a
rerun after an unrelated widget recomputes nothing; user errors become in-page messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np
import streamlit as st

import webapp.loaded_model
from webapp.builds import Build, background
from webapp.feedback import user_errors, with_progress
from webapp.loaded_model import encoder
from webapp.memo import memo
from webapp.offered_models import check_offered
from webapp.settings import Settings, current
from workbench.corpora import occurrences as occ
from workbench.corpora.datasets import EVALUATION_SETS
from workbench.corpora.datasets import available_datasets as found
from workbench.corpora.occurrences import (
    Occurrence,
    OccurrenceVectors,
    sense_glosses,
)
from workbench.corpora.readers import Corpus, corpus_from_texts
from workbench.corpora.reference import (
    REFERENCE_SENTENCES,
    CorpusSample,
    load_reference_corpus,
    sample_corpus,
)
from workbench.encoding.cache import encode_cached
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.models import default_cache_dir
from workbench.errors import InputError, WorkbenchError
from workbench.fileio import sha256_bytes, sha256_words
from workbench.geometry.analysis import GeometryConfig, GeometryResult, analyze_layers
from workbench.geometry.correction import Correction
from workbench.geometry.reference import fit_reference
from workbench.lexicon.wordnet import WordNet, load_wordnet
from workbench.viz import sense_views
from workbench.viz.corpus_map import CorpusMap, CorpusMapConfig, corpus_map
from workbench.viz.neighbours import NeighbourPool, PoolPart
from workbench.viz.projection import ProjectionConfig, Projector, project_layers
from workbench.viz.sense_views import SenseView, WordsView
from workbench.wsd import occurrence_senses
from workbench.wsd.biencoder import BiEncoder
from workbench.wsd.evaluate import CorpusEvaluation, Stage, evaluate_corpus
from workbench.wsd.index import SenseIndex
from workbench.wsd.occurrence_senses import SensePrediction, TrainingOccurrences
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.reporting.document import EvalReport, eval_report, facts_of
from workbench.wsd.reporting.links import APP_URL
from workbench.wsd.systems import offered_systems, open_system
from workbench.wsd.systems.registry import DEFAULT_SYSTEM, SYSTEMS, system_label
from workbench.wsd.text_senses import TextSenses, text_senses

# --------------------------------------------------------------------------- data


@st.cache_resource(show_spinner="Loading WordNet…")
def wordnet() -> WordNet:
    return load_wordnet()


@st.cache_resource(show_spinner="Reading the corpus…", max_entries=4)
def corpus(name: str) -> Corpus:
    """A framework dataset or reference corpus by name (``semcor``, ``senseval2``, ...)."""
    return load_reference_corpus(name)


@st.cache_data(show_spinner=False)
def available_datasets() -> list[str]:
    """Names of the WSD datasets found on this machine (empty without the data)."""
    try:
        return sorted(found())
    except WorkbenchError:
        return []


# --------------------------------------------------------------------------- encodings


def text_key(text: str) -> str:
    """The short hash that names a typed text in cache keys and widget keys."""
    return sha256_bytes(text)[:16]


def warm_words(
    key: Hashable,
    sentences: list[list[str]],
    settings: Settings,
    keep: list[list[int]] | None = None,
) -> LayerwiseEmbeddings:
    """:func:`encode_words` outside a page (the server's preload): no progress bar; errors
    raise. Fills the same memo entry a page reads."""
    enc = webapp.loaded_model.encoder_for(settings)
    return memo("embeddings", 24).get(
        (settings.key, key), lambda: encode_cached(enc, sentences, keep=keep, progress=False)
    )


def warm_occurrences(
    key: Hashable, occurrences: Sequence[Occurrence], settings: Settings
) -> LayerwiseEmbeddings:
    """:func:`encode_occurrences` outside a page (the server's preload)."""
    sentences = [list(o.words) for o in occurrences]
    keep = [[o.index] for o in occurrences]
    return warm_words(("occurrences", key), sentences, settings, keep=keep)


def encode_words(
    key: Hashable,
    sentences: list[list[str]],
    keep: list[list[int]] | None = None,
    text: str = "Encoding…",
    settings: Settings | None = None,
) -> LayerwiseEmbeddings:
    """All layers of ``sentences`` (only the ``keep`` positions if given), memoised.

    ``key`` names the input (its hash); the model settings (``settings``, default the
    sidebar's) are added to it here.
    """

    enc = encoder(settings)
    full_key = ((settings or current()).key, key)

    def compute():
        return with_progress(
            text, lambda progress: encode_cached(enc, sentences, keep=keep, progress=progress)
        )

    def waiting():
        return st.spinner(
            f"{text} (under way already, for the server's preload or another visitor)"
        )

    with user_errors():
        return memo("embeddings", 24).get(full_key, compute, waiting)


def encode_occurrences(
    key: Hashable,
    occurrences: Sequence[Occurrence],
    text: str = "Encoding the occurrences…",
    settings: Settings | None = None,
) -> OccurrenceVectors:
    """:func:`workbench.corpora.occurrences.encode_occurrences`, memoised by ``key`` + the model
    settings (``settings``, default the sidebar's)."""
    if not occurrences:
        with user_errors():
            raise InputError("no occurrence of the word was found; try another word or source")
    emb = encode_words(
        ("occurrences", key),
        [list(o.words) for o in occurrences],
        keep=[[o.index] for o in occurrences],
        text=text,
        settings=settings,
    )
    return OccurrenceVectors(tuple(occurrences), emb)


def encode_occurrence_list(occurrences: Sequence[Occurrence]) -> OccurrenceVectors:
    """:func:`encode_occurrences`, memoised by the occurrences themselves (their words and
    target positions) + settings."""

    content = repr([(o.words, o.index) for o in occurrences]).encode()
    key = ("content", sha256_bytes(content)[:16])
    return encode_occurrences(key, occurrences, text="Encoding the training occurrences…")


# --------------------------------------------------------------------------- projections


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


# --------------------------------------------------------------------------- reference corpora

#: The reference corpora the app offers, by the library's names
#: (:func:`workbench.corpora.reference.load_reference_corpus`), with what a visitor reads.
REFERENCE_LABELS = {
    "demo": "demo texts (170 sentences)",
    "wordnet": "WordNet glosses and examples",
    "semcor": "SemCor",
}


def reference_options() -> list[str]:
    """Names of the reference corpora available here (demo texts and WordNet always)."""
    return [n for n in REFERENCE_LABELS if n != "semcor" or "semcor" in available_datasets()]


def reference_name(text: str) -> str:
    """A link's reference corpus as today's name: older links carry its label."""
    return {label: name for name, label in REFERENCE_LABELS.items()}.get(text, text)


@st.cache_resource(show_spinner="Preparing the reference corpus…", max_entries=8)
def reference_sample(name: str, n: int | None = REFERENCE_SENTENCES) -> CorpusSample:
    """The seeded sample of ``n`` sentences (None: all) of the reference corpus ``name`` that
    corrections are fitted on (:func:`workbench.corpora.reference.sample_corpus`; the demo
    texts, 170 sentences, are whole at the default size)."""
    return sample_corpus(corpus(name), n, random_state=0)


def reference_sentences(name: str, n: int | None = REFERENCE_SENTENCES) -> list[list[str]]:
    """The words of :func:`reference_sample`'s sentences."""
    return reference_sample(name, n).words


@st.cache_resource(show_spinner="Measuring every layer under every correction…", max_entries=8)
def geometry(key: Hashable, _emb: LayerwiseEmbeddings, config: GeometryConfig) -> GeometryResult:
    """:func:`workbench.geometry.analysis.analyze_layers` of ``_emb``, cached by ``key`` +
    config."""

    return analyze_layers(_emb.vectors, _emb.words, _emb.sentence_index, _emb.layers, config)


@st.cache_resource(show_spinner="Fitting the correction…", max_entries=16)
def fitted_correction(
    key: Hashable, kind: str, reference: str, _encoder, _emb: LayerwiseEmbeddings
) -> Correction:
    """The correction ``kind`` fitted per layer on the reference corpus ``reference``'s sample
    (:func:`reference_sample`), whose vectors ``_emb`` the model ``_encoder`` made:
    :func:`workbench.geometry.reference.fit_reference`. ``key``: the model settings."""
    return fit_reference(_encoder, kind, reference_sample(reference), emb=_emb)


def reference_correction(settings: Settings, reference: str, kind: str) -> Correction | None:
    """The correction ``kind`` for the model of ``settings``, fitted per layer on the reference
    corpus ``reference`` (:func:`reference_options`); None for ``"none"``."""
    if kind == "none":
        return None
    sentences = reference_sentences(reference)
    emb = encode_words(("reference", reference, len(sentences)), sentences,
                       text="Encoding the reference corpus…", settings=settings)  # fmt: skip
    return fitted_correction((settings.key, reference), kind, reference, encoder(settings), emb)


@st.cache_resource(show_spinner="Indexing the words…", max_entries=16)
def neighbour_pool(
    key: Hashable, _parts: tuple[PoolPart, ...], _post: Correction | None, layers: str
) -> NeighbourPool:
    """A :class:`workbench.viz.neighbours.NeighbourPool` over the words of ``_parts`` at
    ``layers`` (after the fitted correction ``_post`` if given); cached by ``key``."""

    return NeighbourPool(layers, post=_post).fit(_parts)


# --------------------------------------------------------------------------- occurrences


@st.cache_data(show_spinner="Finding the occurrences…", max_entries=64)
def occurrences(
    source: str,
    lemma: str,
    pos: str | None = None,
    limit: int | None = None,
    upload: bytes | None = None,
    upload_name: str = "upload",
    _corpus: Corpus | None = None,
) -> list[Occurrence]:
    """:func:`workbench.corpora.occurrences.lemma_occurrences` of ``lemma`` from ``source``
    (``demo``, ``wordnet``, ``upload`` or a corpus name, then ``_corpus`` is that corpus,
    loaded by :func:`corpus`), cached."""
    return occ.lemma_occurrences(
        lemma, source, pos, limit, wordnet=wordnet(), corpus=_corpus, upload=upload,
        upload_name=upload_name,
    )  # fmt: skip


@st.cache_data(show_spinner="Finding the training occurrences…", max_entries=64)
def training_occurrences(lemma: str, pos: str | None = None) -> TrainingOccurrences:
    """:func:`workbench.wsd.occurrence_senses.training_occurrences` of ``lemma``: SemCor's
    when SemCor is here, else WordNet's usage examples."""

    semcor = corpus("semcor") if "semcor" in available_datasets() else None
    return occurrence_senses.training_occurrences(wordnet(), lemma, pos, semcor)


def biencoder_prediction(
    bi: BiEncoder,
    occ_key: Hashable,
    occurrences: Sequence[Occurrence],
    lemma: str,
    pos: str | None,
) -> SensePrediction:
    """The bi-encoder's sense of each occurrence (:func:`workbench.wsd.occurrence_senses.
    biencoder_senses`), memoised by the bi-encoder and the occurrences."""
    key = (str(bi.directory), occ_key, lemma, pos)
    return memo("biencoder-senses", 16).get(
        key, lambda: occurrence_senses.biencoder_senses(bi, occurrences, lemma, pos, wordnet())
    )


@st.cache_data(show_spinner=False, max_entries=64)
def glosses(labels: tuple[str, ...]) -> dict[str, str]:
    """Label -> WordNet gloss (``""`` for labels that are not sense keys)."""
    return sense_glosses(wordnet(), labels)


# --------------------------------------------------------------------------- WSD

#: The evaluation sets offered, the smallest (SemEval-2007, the usual dev set) first, then ALL.
EVAL_DATASETS = ("semeval2007", *(d for d in EVALUATION_SETS if d != "semeval2007"))


@st.cache_resource(show_spinner=False, max_entries=8)
def opened_system(choice: str, settings_key: Hashable, _settings: Settings) -> OpenedSystem:
    """The WSD system ``choice`` for the model of ``_settings`` (``settings_key`` names them),
    opened once (:func:`workbench.wsd.systems.open_system`): a system's name, or the folder
    name of a saved index (:func:`saved_indexes`). Its model, bi-encoder and index load when
    first used."""
    saved = saved_indexes()
    system: str | Path = Path(saved[choice]) if choice in saved else choice
    enc = webapp.loaded_model.encoder_for(_settings)
    return open_system(system, _settings.model, device=_settings.device, encoder=enc)


def wsd_system(choice: str, settings: Settings | None = None) -> OpenedSystem:
    """:func:`opened_system` for the sidebar's model (``settings``, default the sidebar's;
    errors stop the page)."""
    s = settings or current()
    with user_errors():
        check_offered(s.model)
        return opened_system(choice, s.key, s)


def biencoder(settings: Settings | None = None) -> BiEncoder | None:
    """The WSD bi-encoder of the sidebar's model (the default system's, loaded once); None
    when the model has none (errors stop the page)."""
    opened = wsd_system(DEFAULT_SYSTEM, settings)
    if not opened.is_biencoder:
        return None
    with user_errors(), st.spinner("Loading the WSD bi-encoder…"):
        return opened.biencoder


def system_options(model: str | None, fingerprint: str, dtype: str) -> dict[str, str]:
    """System name -> its label in the system choice (:func:`workbench.wsd.systems.registry.
    system_label`: with the F1 measured for the model of ``fingerprint`` in ``dtype``, or the
    packaged model's, said so), for the systems of the registry that answer as themselves for
    ``model`` (:func:`workbench.wsd.systems.offered_systems`): the bi-encoder first (the
    default) when the model has one, the SemCor systems when SemCor is here, and the
    WordNet-only one."""
    return {name: system_label(name, fingerprint, dtype) for name in offered_systems(model)}


def saved_indexes() -> dict[str, str]:
    """Folder name -> path of the sense indexes saved by ``workbench wsd train --out`` in the
    cache dir (the systems' own cached indexes are offered by name instead)."""
    root = default_cache_dir() / "wsd-index"
    found = (
        sorted(p for p in root.glob("*") if (p / "meta.json").is_file()) if root.is_dir() else []
    )
    systems = tuple(f"{s.name}-{s.training}-" for s in SYSTEMS.values())
    return {
        p.name: str(p) for p in found if not p.name.startswith(systems) and p.name not in SYSTEMS
    }


def system_index_build(choice: str, opened: OpenedSystem) -> Build:
    """The index of ``opened``, a system whose index is built ahead (a SemCor system's), for
    the sidebar's model: loaded from the cache dir or built there once
    (:func:`workbench.wsd.builds.semcor_index`), in the background."""

    def work(build: Build) -> SenseIndex:
        def say(message: str) -> None:  # said once a build starts (not when it loads)
            build.message, build.stage = message, "Building the sense index…"

        def progress(fraction: float) -> None:
            build.fraction = min(max(float(fraction), 0.0), 1.0)

        build.stage = "Loading the sense index…"
        return opened.index(None, progress, say)

    return background(("system-index", current().key, choice), work)


#: What each stage of :func:`workbench.wsd.evaluate.evaluate_corpus` writes in the status box,
#: and the text of its progress bar (none: no bar).
WSD_STAGES = {
    "encode": ("Encoding {n:,} instances…", "Encoding the instances…"),
    "index": ("Encoding the glosses of the test lemmas' senses…",
              "Encoding the WordNet glosses…"),
    "predict": ("Predicting and scoring…", ""),
}  # fmt: skip


def wsd_evaluation(
    dataset: str, choice: str, system: OpenedSystem, n_sentences: int = 0
) -> tuple[Corpus, CorpusEvaluation]:
    """``(corpus, CorpusEvaluation)`` of ``system`` (the system choice ``choice``, opened by
    :func:`wsd_system`) on a framework dataset (its first ``n_sentences``, 0 = all), memoised
    by the settings, system and data; shows its progress."""
    key = (current().key, choice, dataset, n_sentences)

    def run() -> tuple[Corpus, CorpusEvaluation]:
        wn, test_corpus = wordnet(), corpus(dataset)
        if n_sentences:
            test_corpus = test_corpus.head(n_sentences)
        training = corpus("semcor") if "semcor" in available_datasets() else None
        with st.status(f"Evaluating {choice} on {dataset}…", expanded=True) as status:
            bar: list = []  # the running stage's progress bar and its text

            def clear() -> None:
                while bar:
                    bar.pop()[0].empty()

            def on_stage(stage: Stage) -> None:
                clear()  # a stage's bar goes once it is done
                if stage.seconds is None:
                    line, text = WSD_STAGES[stage.name]
                    status.write(line.format(n=test_corpus.n_instances))
                    if text:
                        bar.append((st.progress(0.0, text=text), text))

            def progress(fraction: float) -> None:
                for widget, text in bar:
                    widget.progress(min(max(float(fraction), 0.0), 1.0), text=text)

            try:
                done = evaluate_corpus(
                    system, test_corpus, wn, training, progress=progress, on_stage=on_stage
                )
            finally:
                clear()
            status.update(label=f"Evaluated {choice} on {dataset}", state="complete",
                          expanded=False)  # fmt: skip
        return test_corpus, done

    return memo("wsd-eval", 8).get(key, run)


def wsd_report(
    dataset: str, choice: str, system: OpenedSystem, n_sentences: int = 0, app_url: str = APP_URL
) -> EvalReport:
    """The evaluation report (:func:`workbench.wsd.reporting.document.eval_report`) of
    :func:`wsd_evaluation`, its errors linked to the WSD page of the app at ``app_url``;
    memoised like it (the evaluation runs first when it has not)."""
    s = current()
    key = (s.key, choice, dataset, n_sentences, app_url)

    def build() -> EvalReport:
        test_corpus, run = wsd_evaluation(dataset, choice, system, n_sentences)
        config = {"dataset": dataset, "first_sentences": n_sentences, "system": choice,
                  "model": s.model or "the packaged default", "device": s.device}  # fmt: skip
        with st.spinner("Writing the report: intervals, splits, errors in words…"):
            return eval_report(run, test_corpus, wordnet(), facts_of(system, run.index), config,
                               app_url=app_url, app_model=s.model)  # fmt: skip

    return memo("wsd-report", 8).get(key, build)


# --------------------------------------------------------------------------- corpus maps

#: The corpora a corpus map can show (SemCor when it is here), and their labels.
MAP_SOURCES = {
    "demo": "demo texts (170 sentences)",
    "wordnet": "WordNet glosses and examples (a seeded sample)",
    "semcor": "SemCor (gold senses)",
    "upload": "a text file",
}


def map_corpus(source: str, upload: bytes | None = None, upload_name: str = "upload") -> Corpus:
    """The corpus of a corpus map's ``source`` (:data:`MAP_SOURCES`)."""
    if source == "demo":
        return corpus("demo")
    if source == "upload":
        lines = occ.decode_text(upload or b"", upload_name)
        return corpus_from_texts(lines, upload_name)
    if source == "wordnet":
        return corpus_from_texts([" ".join(s) for s in reference_sentences("wordnet", 5000)],
                                 "wordnet-sample")  # fmt: skip
    return corpus(source)


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


def text_senses_build(bi: BiEncoder, cmap: CorpusMap) -> Build:
    """The WSD bi-encoder ``bi``'s predicted sense and supersense of every word of the map
    ``cmap`` (:func:`workbench.wsd.text_senses.text_senses` of its sentences and their tagged
    POS), in the background once per bi-encoder and text (a map at another layer or correction
    of the same text finds it); ``build.result`` is the
    :class:`~workbench.wsd.text_senses.TextSenses`. Started when a visitor first asks for the
    map's colours by predicted sense (the preload does not: on an empty cache it is long)."""
    words, tags = cmap.sentences, cmap.sentence_tags()
    key = ("text-senses", str(bi.directory), sha256_words(words), sha256_words(tags))
    name, n_words = cmap.info.get("corpus", "the text"), len(cmap)

    def work(build: Build) -> TextSenses:
        def progress(fraction: float, stage: str) -> None:
            build.fraction, build.stage = fraction, stage
            build.message = (
                f"Predicting the sense of every word of {name} ({n_words:,} words) with the WSD "
                "bi-encoder, once per text (the glosses it encodes are stored for next time); "
                "it goes on if you leave the page."
            )

        build.stage = "Predicting the senses…"
        return text_senses(bi, words, tags, wordnet(), progress)

    return background(key, work)
