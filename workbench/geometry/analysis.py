"""Per-layer geometry analysis under every correction: the numbers.

:func:`analyze_layers` takes the vectors of all layers of a corpus sample, fits each correction
(:mod:`workbench.geometry.corrections`) per layer on a reference part, and measures
(:mod:`workbench.geometry.measures`) every layer raw and corrected, on the same seeded pairs of
words. :func:`workbench.geometry.report.geometry_report` turns the result into a report.

By default (``fit_on="heldout"``) the sample's sentences are split in two at random (seeded):
the corrections are fitted on one half and every measure is taken on the other half, so a
corrected anisotropy near 0 is not an artefact of measuring on the fitting data.
``fit_on="same"`` fits and measures on all sentences.

Example::

    emb = encode_cached(Encoder(), sentences)
    result = analyze_layers(emb.vectors, emb.words, emb.sentence_index, emb.layers)
    report = geometry_report(result, config={"model": emb.model_name})
    write_report(report, "out/", stem="geometry")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from threadpoolctl import threadpool_limits

from workbench.errors import InputError
from workbench.geometry import measures as g
from workbench.geometry.corrections import CORRECTION_LABELS, CORRECTIONS, make_correction
from workbench.geometry.pairs import Pairs, check_vectors, sample_pairs


@dataclass(frozen=True)
class GeometryConfig:
    """Parameters of :func:`analyze_layers` (all of them change the numbers)."""

    n_pairs: int = 20_000  # random word pairs (from different sentences) per layer
    min_count: int = 5  # occurrences a word type needs for self-similarity and MEV (>= 2)
    top_k: int = 3  # rogue dimensions reported, and removed for informativity
    corrections: tuple[str, ...] = tuple(CORRECTION_LABELS)  # all of them, raw ("none") first
    abtt_components: int | None = None  # D of all-but-the-top; None = round(dim / 100)
    whiten_components: int | None = None  # k of whitening; None = all dimensions
    fit_on: Literal["heldout", "same"] = "heldout"  # fit corrections on other sentences or same
    fit_fraction: float = 0.5  # share of sentences used for fitting when fit_on == "heldout"
    lowercase: bool = True  # word types compared case-insensitively
    random_state: int = 0  # seeds the sentence split, the pairs and the MEV baseline


@dataclass(frozen=True)
class LayerGeometry(g.LayerMeasures):
    """The measures of one layer (:class:`workbench.geometry.measures.LayerMeasures`) under one
    correction."""

    correction: str = "none"
    layer: int = 0


@dataclass(frozen=True)
class GeometryResult:
    """The output of :func:`analyze_layers`.

    Attributes:
        layers: hidden-state index of each analysed layer.
        corrections: corrections in the order analysed.
        rows: one :class:`LayerGeometry` per (correction, layer).
        n_fit_words, n_measure_words, n_measure_sentences, n_types: sizes of the two parts
            (types: distinct word types in the measured part).
        config: the :class:`GeometryConfig` used.
    """

    layers: tuple[int, ...]
    corrections: tuple[str, ...]
    rows: tuple[LayerGeometry, ...]
    n_fit_words: int
    n_measure_words: int
    n_measure_sentences: int
    n_types: int
    config: GeometryConfig

    def get(self, correction: str, layer: int) -> LayerGeometry:
        """The measures of one layer under one correction."""
        for row in self.rows:
            if row.correction == correction and row.layer == layer:
                return row
        raise KeyError((correction, layer))


def measure_layer(
    x: np.ndarray,
    types: np.ndarray,
    contexts: np.ndarray,
    pairs: Pairs,
    config: GeometryConfig,
    correction: str = "none",
    layer: int = 0,
) -> LayerGeometry:
    """All measures of one layer's ``(n, dim)`` vectors on the given pairs."""
    m = g.measure_all(
        x, types, contexts, pairs, min_count=config.min_count, top_k=config.top_k,
        random_state=config.random_state, name=f"layer {layer} ({correction})",
    )  # fmt: skip
    return LayerGeometry(**vars(m), correction=correction, layer=layer)


def split_contexts(contexts: np.ndarray, config: GeometryConfig) -> tuple[np.ndarray, np.ndarray]:
    """Boolean row masks ``(fit, measure)``: a seeded split by sentence (or all rows twice)."""
    if config.fit_on == "same":
        every = np.ones(len(contexts), dtype=bool)
        return every, every
    if config.fit_on != "heldout":
        raise InputError(f"fit_on must be 'heldout' or 'same', got {config.fit_on!r}")
    if not 0 < config.fit_fraction < 1:
        raise InputError(f"fit_fraction must be between 0 and 1, got {config.fit_fraction}")
    unique = np.unique(contexts)
    if unique.size < 4:
        raise InputError(f"a held-out split needs at least 4 sentences, got {unique.size}")
    rng = np.random.default_rng(config.random_state)
    n_fit = min(max(2, round(unique.size * config.fit_fraction)), unique.size - 2)
    fit_ctx = rng.permutation(unique)[:n_fit]
    fit = np.isin(contexts, fit_ctx)
    return fit, ~fit


def check_config(config: GeometryConfig) -> None:
    """Refuse a config :func:`analyze_layers` cannot run, before any work (the command line
    calls it before loading a corpus or a model).

    Raises:
        InputError: unknown or no corrections, ``n_pairs`` or ``top_k`` below 1, ``fit_on``
            not ``heldout`` / ``same``, or a ``fit_fraction`` outside (0, 1).
    """
    unknown = [c for c in config.corrections if c not in CORRECTIONS]
    if unknown or not config.corrections:
        raise InputError(f"unknown corrections {unknown}; choose from {list(CORRECTIONS)}")
    if config.n_pairs < 1 or config.top_k < 1:
        raise InputError("n_pairs and top_k must be at least 1")
    if config.fit_on not in ("heldout", "same"):
        raise InputError(f"fit_on must be 'heldout' or 'same', got {config.fit_on!r}")
    if config.fit_on == "heldout" and not 0 < config.fit_fraction < 1:
        raise InputError(f"fit_fraction must be between 0 and 1, got {config.fit_fraction}")


def _make(name: str, config: GeometryConfig):
    if name == "abtt":
        return make_correction(name, n_components=config.abtt_components)
    if name == "whiten":
        return make_correction(name, n_components=config.whiten_components)
    return make_correction(name)


def analyze_layers(
    vectors: np.ndarray,
    words: Sequence[str],
    contexts: Sequence[int] | np.ndarray,
    layers: Sequence[int] | None = None,
    config: GeometryConfig | None = None,
    progress: Any = None,
) -> GeometryResult:
    """Measure every layer raw and under every correction.

    Args:
        vectors: ``(n, n_layers, dim)`` word vectors (a memory map is fine: read per layer).
        words: ``(n,)`` the words (their types, lowercased unless ``config.lowercase`` is False).
        contexts: ``(n,)`` sentence of each word.
        layers: hidden-state index of each slot of axis 1 (default ``0..n_layers-1``).
        config: a :class:`GeometryConfig`.
        progress: optional callable ``(done, total)`` called after each (layer, correction).

    Returns:
        A :class:`GeometryResult`.

    Raises:
        InputError: bad shapes, fewer than two vectors, NaN/inf, an unknown correction.
    """
    config = config or GeometryConfig()
    check_config(config)
    if np.ndim(vectors) != 3:
        raise InputError(f"vectors must be (n, n_layers, dim), got shape {np.shape(vectors)}")
    n, n_layers, _ = vectors.shape
    layers = tuple(range(n_layers)) if layers is None else tuple(int(v) for v in layers)
    if len(layers) != n_layers or len(words) != n or len(contexts) != n:
        raise InputError("words, contexts and layers must match the vectors' shape")
    contexts = np.asarray(contexts)
    types = np.asarray([w.lower() for w in words] if config.lowercase else list(words))
    fit, meas = split_contexts(contexts, config)
    pairs = sample_pairs(
        int(meas.sum()), config.n_pairs, contexts=contexts[meas], random_state=config.random_state
    )
    rows, total = [], n_layers * len(config.corrections)
    # Thousands of tiny eigendecompositions: BLAS runs on one thread, as more threads only add
    # contention (docs/benchmarks.md, "Geometry").
    with threadpool_limits(limits=1, user_api="blas"):
        for slot, layer in enumerate(layers):
            layer_vectors = np.asarray(vectors[:, slot, :], dtype=np.float64)
            check_vectors(layer_vectors, name=f"layer {layer}")
            for name in config.corrections:
                pp = _make(name, config).fit(layer_vectors[fit])
                x = pp.transform(layer_vectors[meas])
                rows.append(
                    measure_layer(x, types[meas], contexts[meas], pairs, config, name, layer)
                )
                if progress is not None:
                    progress(len(rows), total)
    return GeometryResult(
        layers, tuple(config.corrections), tuple(rows), int(fit.sum()), int(meas.sum()),
        int(np.unique(contexts[meas]).size), int(np.unique(types[meas]).size), config,
    )  # fmt: skip


# --------------------------------------------------------------------------- result helpers


def most_anisotropic_layer(result: GeometryResult) -> int:
    """The layer whose uncorrected vectors have the largest anisotropy."""
    base = "none" if "none" in result.corrections else result.corrections[0]
    return max(result.layers, key=lambda layer: result.get(base, layer).anisotropy.value)
