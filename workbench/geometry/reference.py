"""A correction fitted on a reference corpus: encode a seeded sample (through the cache) and fit
a correction per layer on it, recording the model fingerprint, layers, pooling and the
sample's hash in its provenance.

Every correction fitted on a reference corpus goes through :func:`fit_reference`: the command
line and the Senses views by name (:func:`fit_correction`), the app with the sample's vectors it
already holds.

Example::

    sample = sample_corpus(load_reference_corpus("auto"), 2000, random_state=0)
    z = fit_reference(Encoder(), "zscore", sample)       # per-layer Standardizer
    z = fit_correction(Encoder(), "zscore", "demo")      # the same, by the corpus's name
"""

from __future__ import annotations

import os
from typing import Any

from workbench.corpora.reference import (
    REFERENCE_SENTENCES,
    CorpusSample,
    load_reference_corpus,
    sample_corpus,
)
from workbench.encoding.cache import encode_cached
from workbench.encoding.pooling import Pooling
from workbench.geometry.correction import Correction
from workbench.geometry.corrections import make_correction


def fit_reference(
    encoder: Any,
    kind: str,
    sample: CorpusSample,
    layers: list[int] | None = None,
    pooling: Pooling | None = None,
    emb: Any = None,
    **params: Any,
) -> Correction:
    """Encode ``sample`` (through the cache) and fit a correction per layer on it.

    Args:
        encoder: a :class:`workbench.Encoder`.
        kind: one of :data:`workbench.geometry.corrections.CORRECTIONS`.
        sample: from :func:`workbench.corpora.reference.sample_corpus`.
        layers: hidden-state indices (None = all).
        pooling: subword pooling (None = the encoder's).
        emb: the sample's :class:`~workbench.encoding.embeddings.LayerwiseEmbeddings` when the
            caller holds them already (then nothing is encoded; ``layers`` and ``pooling`` are
            theirs).
        **params: passed to :func:`workbench.geometry.corrections.make_correction`.

    Returns:
        The fitted correction; its ``provenance_`` names the model, layers, pooling, corpus
        and sample hash.
    """
    if emb is None:
        emb = encode_cached(encoder, sample.words, layers=layers, pooling=pooling)
    name = f"{sample.corpus} sample ({sample.unit}={sample.requested}, seed={sample.random_state})"
    return make_correction(kind, **params).fit_embeddings(emb, name, sample.sha256)


def fit_correction(
    encoder: Any,
    correction: str,
    reference: str = "auto",
    n_sentences: int | None = REFERENCE_SENTENCES,
    random_state: int = 0,
    data_dir: str | os.PathLike | None = None,
) -> Correction | None:
    """A correction fitted per layer (every hidden state) on a seeded sample of a reference
    corpus named ``reference`` (:func:`fit_reference`); None for ``"none"``.

    Args:
        encoder: the model whose vectors will be corrected.
        correction: a name of :data:`workbench.geometry.corrections.CORRECTIONS`.
        reference: ``"auto"``, ``"demo"``, ``"semcor"``, ``"wordnet"`` or a text file
            (:func:`workbench.corpora.reference.load_reference_corpus`).
        n_sentences: sentences sampled from it (None: all).
        random_state: the sample's seed.
        data_dir: the WSD data directory.
    """
    if correction == "none":
        return None
    sample = sample_corpus(load_reference_corpus(reference, data_dir), n_sentences,
                           random_state=random_state)  # fmt: skip
    return fit_reference(encoder, correction, sample)
