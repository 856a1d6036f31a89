"""The app's corpora, cached by name: WordNet, the framework datasets and reference corpora, a
word's occurrences, WordNet's glosses, and the corpora a corpus map can show.

Every function is cached (``st.cache_resource`` / ``st.cache_data``), so a rerun after an
unrelated widget reads nothing again.
"""

from __future__ import annotations

import streamlit as st

from workbench.corpora import occurrences as occ
from workbench.corpora.datasets import available_datasets as found
from workbench.corpora.occurrences import Occurrence, sense_glosses
from workbench.corpora.readers import Corpus, corpus_from_texts
from workbench.corpora.reference import (
    REFERENCE_SENTENCES,
    CorpusSample,
    load_reference_corpus,
    sample_corpus,
)
from workbench.errors import WorkbenchError
from workbench.lexicon.wordnet import WordNet, load_wordnet
from workbench.wsd import occurrence_senses
from workbench.wsd.occurrence_senses import TrainingOccurrences


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


@st.cache_data(show_spinner=False, max_entries=64)
def glosses(labels: tuple[str, ...]) -> dict[str, str]:
    """Label -> WordNet gloss (``""`` for labels that are not sense keys)."""
    return sense_glosses(wordnet(), labels)


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
