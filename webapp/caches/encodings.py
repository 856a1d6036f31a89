"""The model's vectors of the app's inputs, memoised by input and model settings (typed texts,
occurrences, reference corpora), and the corrections fitted on a reference corpus's vectors.

Every function is cached (``st.cache_resource`` or the in-process memo of :mod:`webapp.memo`,
shared with the server's preload), so a rerun after an unrelated widget encodes nothing.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import streamlit as st

import webapp.loaded_model
from webapp.caches.corpora import reference_sample, reference_sentences
from webapp.feedback import user_errors, with_progress
from webapp.loaded_model import encoder
from webapp.memo import memo
from webapp.settings import Settings, current
from workbench.corpora.occurrences import Occurrence, OccurrenceVectors
from workbench.encoding.cache import encode_cached
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import InputError
from workbench.fileio import sha256_bytes
from workbench.geometry.correction import Correction
from workbench.geometry.reference import fit_reference


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
