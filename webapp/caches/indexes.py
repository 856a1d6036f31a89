"""The app's WSD systems, their sense indexes and what they answer: the systems opened once per
model (the app's one door to :func:`workbench.wsd.systems.open_system`), the systems offered and
the saved indexes, a SemCor system's index built in the background, evaluations and their
reports, the bi-encoder's predicted senses of occurrences and of a corpus map's text.

Every function is cached (``st.cache_resource``, the in-process memo of :mod:`webapp.memo` or a
background build of :mod:`webapp.builds`); user errors become in-page messages.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path

import streamlit as st

import webapp.loaded_model
from webapp.builds import Build, background
from webapp.caches.corpora import corpus, wordnet
from webapp.feedback import user_errors
from webapp.memo import memo
from webapp.offered_models import check_offered
from webapp.settings import Settings, current
from workbench.corpora.datasets import EVALUATION_SETS
from workbench.corpora.occurrences import Occurrence
from workbench.corpora.readers import Corpus
from workbench.fileio import sha256_words
from workbench.viz.corpus_map import CorpusMap
from workbench.wsd import occurrence_senses
from workbench.wsd.biencoder import BiEncoder
from workbench.wsd.builds import mfs_counts, saved_index_folders
from workbench.wsd.evaluate import CorpusEvaluation, Stage, evaluate_corpus
from workbench.wsd.index import SenseIndex
from workbench.wsd.occurrence_senses import SensePrediction
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.reporting.document import EvalReport, eval_report, facts_of
from workbench.wsd.reporting.links import APP_URL
from workbench.wsd.systems import offered_systems, open_system
from workbench.wsd.systems.registry import DEFAULT_SYSTEM, system_label
from workbench.wsd.text_senses import TextSenses, text_senses


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
    cache dir (:func:`workbench.wsd.builds.saved_index_folders`; the systems' own cached indexes
    are offered by name instead)."""
    return {p.name: str(p) for p in saved_index_folders()}


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
        training = mfs_counts()  # SemCor's sense counts, as the command line scores them
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
