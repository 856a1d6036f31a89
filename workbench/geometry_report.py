"""Per-layer geometry analysis under every correction, as a table, figures and a report.

:func:`analyze_layers` takes the vectors of all layers of a corpus sample, fits each correction
(:mod:`workbench.standardize`) per layer on a reference part, and measures
(:mod:`workbench.geometry`) every layer raw and corrected, on the same seeded pairs of words.
:func:`geometry_report` turns the result into a :class:`workbench.report.Report`.

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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from threadpoolctl import threadpool_limits

from workbench import geometry as g
from workbench.errors import InputError
from workbench.geometry_figures import (  # noqa: F401 - re-exported with the analysis
    anisotropy_figure,
    rogue_figure,
    similarity_figure,
)
from workbench.report import Report, Section, Table
from workbench.standardize import CORRECTION_LABELS, POSTPROCESSORS, make_postprocessor


@dataclass(frozen=True)
class GeometryConfig:
    """Parameters of :func:`analyze_layers` (all of them change the numbers)."""

    n_pairs: int = 20_000  # random word pairs (from different sentences) per layer
    min_count: int = 5  # occurrences a word type needs for self-similarity and MEV (>= 2)
    top_k: int = 3  # rogue dimensions reported, and removed for informativity
    corrections: tuple[str, ...] = ("none", "center", "zscore", "abtt", "whiten")
    abtt_components: int | None = None  # D of all-but-the-top; None = round(dim / 100)
    whiten_components: int | None = None  # k of whitening; None = all dimensions
    fit_on: Literal["heldout", "same"] = "heldout"  # fit corrections on other sentences or same
    fit_fraction: float = 0.5  # share of sentences used for fitting when fit_on == "heldout"
    lowercase: bool = True  # word types compared case-insensitively
    random_state: int = 0  # seeds the sentence split, the pairs and the MEV baseline


@dataclass(frozen=True)
class LayerGeometry(g.LayerMeasures):
    """The measures of one layer (:class:`workbench.geometry.LayerMeasures`) under one
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
    pairs: g.Pairs,
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


def _check_config(config: GeometryConfig) -> None:
    unknown = [c for c in config.corrections if c not in POSTPROCESSORS]
    if unknown or not config.corrections:
        raise InputError(f"unknown corrections {unknown}; choose from {list(POSTPROCESSORS)}")
    if config.n_pairs < 1 or config.top_k < 1:
        raise InputError("n_pairs and top_k must be at least 1")


def _make(name: str, config: GeometryConfig):
    if name == "abtt":
        return make_postprocessor(name, n_components=config.abtt_components)
    if name == "whiten":
        return make_postprocessor(name, n_components=config.whiten_components)
    return make_postprocessor(name)


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
    _check_config(config)
    if np.ndim(vectors) != 3:
        raise InputError(f"vectors must be (n, n_layers, dim), got shape {np.shape(vectors)}")
    n, n_layers, _ = vectors.shape
    layers = tuple(range(n_layers)) if layers is None else tuple(int(v) for v in layers)
    if len(layers) != n_layers or len(words) != n or len(contexts) != n:
        raise InputError("words, contexts and layers must match the vectors' shape")
    contexts = np.asarray(contexts)
    types = np.asarray([w.lower() for w in words] if config.lowercase else list(words))
    fit, meas = split_contexts(contexts, config)
    pairs = g.sample_pairs(
        int(meas.sum()), config.n_pairs, contexts=contexts[meas], random_state=config.random_state
    )
    rows, total = [], n_layers * len(config.corrections)
    # Thousands of tiny eigendecompositions: BLAS threads only add contention (measured on 2
    # busy cores: 62 s with the default threads, 11 s with one, for 2 layers of 42k words).
    with threadpool_limits(limits=1, user_api="blas"):
        for slot, layer in enumerate(layers):
            layer_vectors = np.asarray(vectors[:, slot, :], dtype=np.float64)
            g.check_vectors(layer_vectors, name=f"layer {layer}")
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


# --------------------------------------------------------------------------- table


def _rogue_text(rogue: g.RogueDimensions) -> str:
    return ", ".join(
        f"d{int(d)} ({100 * s:.0f}%)" if math.isfinite(s) else f"d{int(d)}"
        for d, s in zip(rogue.top, rogue.share, strict=True)
    )


def geometry_table(result: GeometryResult) -> Table:
    """The main per-layer table: anisotropy under each correction, self- and intra-sentence
    similarity (raw and adjusted), top rogue dimensions of the raw vectors with their share."""
    k = result.config.top_k
    cols = ["layer"] + [f"anisotropy {CORRECTION_LABELS[c]}" for c in result.corrections]
    cols += ["self-sim", "self-sim adj.", "intra-sim", "intra-sim adj.", "MEV", "MEV adj."]
    cols += [f"top-{k} rogue dims (share)", f"top-{k} share"]
    first = result.corrections[0]
    rows = []
    for layer in result.layers:
        raw = result.get("none" if "none" in result.corrections else first, layer)
        row: list[Any] = [layer]
        row += [result.get(c, layer).anisotropy.value for c in result.corrections]
        row += [raw.self_similarity.value, raw.self_similarity_adjusted.value]
        row += [raw.intra_similarity.value, raw.intra_similarity_adjusted.value]
        row += [raw.mev.value, raw.mev_adjusted.value]
        row += [_rogue_text(raw.rogue), raw.rogue.top_share]
        rows.append(tuple(row))
    label = CORRECTION_LABELS["none" if "none" in result.corrections else first]
    notes = [
        f"Similarities, MEV and rogue dimensions of the {label} vectors; 'adj.' = minus the "
        "layer's baseline (anisotropy for similarities, size-matched random MEV for MEV).",
        f"Self-similarity and MEV average word types occurring {max(2, result.config.min_count)}"
        " times or more; 'undefined' means no word type occurs that often.",
    ]
    return Table(tuple(cols), tuple(rows), caption="Geometry per layer", notes=tuple(notes))


def correction_table(result: GeometryResult) -> Table:
    """Per layer and correction: anisotropy +- SE, adjusted self- and intra-sentence similarity,
    the top rogue-dimension share and the informativity r^2 without the top dimensions."""
    k = result.config.top_k
    cols = ("layer", "correction", "anisotropy", "SE", "self-sim adj.", "intra-sim adj.",
            f"top-{k} share", f"r2 without top-{k}")  # fmt: skip
    rows = [
        (r.layer, CORRECTION_LABELS[r.correction], r.anisotropy.value, r.anisotropy.sem,
         r.self_similarity_adjusted.value, r.intra_similarity_adjusted.value,
         r.rogue.top_share, r.rogue.informativity)
        for r in result.rows
    ]  # fmt: skip
    return Table(cols, tuple(rows), caption="Every correction, every layer", digits=4)


# --------------------------------------------------------------------------- report


def most_anisotropic_layer(result: GeometryResult) -> int:
    """The layer whose uncorrected vectors have the largest anisotropy."""
    base = "none" if "none" in result.corrections else result.corrections[0]
    return max(result.layers, key=lambda layer: result.get(base, layer).anisotropy.value)


def result_data(result: GeometryResult) -> dict[str, Any]:
    """Everything measured, JSON-ready (per-dimension contributions included)."""
    return {
        "sizes": {
            "fit_words": result.n_fit_words,
            "measure_words": result.n_measure_words,
            "measure_sentences": result.n_measure_sentences,
            "word_types": result.n_types,
        },
        "layers": [
            {
                "layer": r.layer,
                "correction": r.correction,
                **{
                    name: {"value": m.value, "sem": m.sem, "n": m.n, "note": m.note}
                    for name, m in (
                        ("anisotropy", r.anisotropy),
                        ("self_similarity", r.self_similarity),
                        ("self_similarity_adjusted", r.self_similarity_adjusted),
                        ("intra_similarity", r.intra_similarity),
                        ("intra_similarity_adjusted", r.intra_similarity_adjusted),
                        ("mev", r.mev),
                        ("mev_baseline", r.mev_baseline),
                        ("mev_adjusted", r.mev_adjusted),
                    )
                },
                "rogue": {
                    "top": r.rogue.top,
                    "share": r.rogue.share,
                    "informativity_r2": r.rogue.informativity,
                    "expected_cosine": r.rogue.expected_cosine,
                    "contributions": r.rogue.contributions,
                },  # fmt: skip
            }
            for r in result.rows
        ],
    }


def _summary(result: GeometryResult) -> str:
    cfg = result.config
    split = (
        f"Corrections were fitted per layer on {result.n_fit_words} words (a seeded random "
        f"{cfg.fit_fraction:.0%} of the sentences); every measure is taken on the other, "
        f"held-out {result.n_measure_words} words ({result.n_measure_sentences} sentences, "
        f"{result.n_types} word types)."
        if cfg.fit_on == "heldout"
        else f"Corrections were fitted and measured on the same {result.n_measure_words} words."
    )
    return (
        f"{split}\n\nAnisotropy is the mean cosine of {cfg.n_pairs} seeded random pairs of words "
        "from different sentences (Ethayarajh 2019), the same pairs for every layer and "
        "correction. Rogue dimensions (Timkey & van Schijndel 2021): the dimensions with the "
        "largest |mean u_i v_i / (|u||v|)|; share = |contribution| / sum of |contributions|; "
        f"r2 = squared correlation between full cosine and cosine without the top-{cfg.top_k}."
    )


def geometry_report(
    result: GeometryResult,
    config: Mapping[str, Any] | Any,
    rogue_layer: int | None = None,
    command: str = "",
    title: str = "Anisotropy and standardization per layer",
) -> Report:
    """The full report: main table, correction table, three figures, JSON data.

    Args:
        result: from :func:`analyze_layers`.
        config: the full configuration (model, fingerprint, corpus, hashes, sample, seed, ...);
            the analysis config is added under ``"geometry"``.
        rogue_layer: layer of the rogue-dimension figure (default: the most anisotropic one).
        command: the command line that made it.
        title: the report title.
    """
    layer = most_anisotropic_layer(result) if rogue_layer is None else rogue_layer
    base = "none" if "none" in result.corrections else result.corrections[0]
    full_config = {**dict(config), "geometry": result.config}
    sections = (
        Section("Per-layer table", _summary(result), (geometry_table(result),)),
        Section(
            "Figures",
            figures=(
                anisotropy_figure(result),
                similarity_figure(result, base),
                rogue_figure(result, layer),
            ),
        ),  # fmt: skip
        Section("All corrections", tables=(correction_table(result),)),
    )
    return Report(title, full_config, sections, data=result_data(result), command=command)
