"""A correction fitted on a reference corpus: encode a seeded sample (through the cache) and fit
a post-processor per layer on it, recording the model fingerprint, layers, pooling and the
sample's hash in its provenance.

Example::

    sample = sample_corpus(load_reference_corpus("auto"), 2000, random_state=0)
    z = fit_reference(Encoder(), "zscore", sample)       # per-layer Standardizer
"""

from __future__ import annotations

from typing import Any

from workbench.corpora.reference import CorpusSample
from workbench.encoding.cache import encode_cached
from workbench.encoding.pooling import Pooling
from workbench.geometry.corrections import make_postprocessor
from workbench.geometry.postprocess import PostProcessor


def fit_reference(
    encoder: Any,
    kind: str,
    sample: CorpusSample,
    layers: list[int] | None = None,
    pooling: Pooling | None = None,
    **params: Any,
) -> PostProcessor:
    """Encode ``sample`` (through the cache) and fit a post-processor per layer on it.

    Args:
        encoder: a :class:`workbench.Encoder`.
        kind: one of :data:`workbench.geometry.corrections.POSTPROCESSORS`.
        sample: from :func:`workbench.corpora.reference.sample_corpus`.
        layers: hidden-state indices (None = all).
        pooling: subword pooling (None = the encoder's).
        **params: passed to :func:`workbench.geometry.corrections.make_postprocessor`.

    Returns:
        The fitted post-processor; its ``provenance_`` names the model, layers, pooling, corpus
        and sample hash.
    """
    emb = encode_cached(encoder, sample.words, layers=layers, pooling=pooling)
    name = f"{sample.corpus} sample ({sample.unit}={sample.requested}, seed={sample.random_state})"
    return make_postprocessor(kind, **params).fit_embeddings(emb, name, sample.sha256)
