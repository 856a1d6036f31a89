"""A word's senses seen through one model, layer and correction: its occurrences projected and
their sense separation measured. The Senses page's panes, ``workbench senses`` and the
fine-tuning before/after view make the same calls::

    occs = lemma_occurrences("bank", source="semcor", limit=200)  # workbench.corpora.occurrences
    enc = Encoder("runs/wsd/model")                   # any model directory or hub id
    ov = encode_occurrences(enc, occs)                # (n, n_layers + 1, dim), cached on disk
    post = fit_correction(enc, "zscore")              # workbench.geometry.reference
    view = sense_view(ov, "6", post, ProjectionConfig(random_state=0),
                      reference="auto", data={"lemma": "bank", "source": "semcor"})
    view.coords.shape                                 # (n, 2)
    view.separation.silhouette                        # at layer 6, z-scored
    view.curve.peak("nn_accuracy", "zscore")          # every hidden state, raw and z-scored

Several words in one projection (Context Atlas's picture): :func:`words_view`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.corpora.occurrences import (
    Occurrence,
    OccurrenceVectors,
)
from workbench.encoding.pooling import combine_layers
from workbench.errors import InputError, MismatchError
from workbench.fileio import sha256_words
from workbench.geometry.correction import Correction
from workbench.geometry.separation import (
    LayerSeparation,
    Separation,
    sense_separation,
    separation_by_layer,
)
from workbench.viz.export import ViewSettings
from workbench.viz.projection import ProjectionConfig, Projector

if TYPE_CHECKING:
    pass


def occurrences_sha256(occurrences: Sequence[Occurrence]) -> str:
    """SHA-256 of the occurrences as the encoder sees them (sentences and target positions)."""
    return sha256_words([list(o.words) for o in occurrences], [[o.index] for o in occurrences])


def _labels(ov: OccurrenceVectors, labels: Sequence[str] | None) -> list[str]:
    out = list(labels) if labels is not None else ov.labels
    if len(out) != len(ov.occurrences):
        raise InputError(f"{len(out)} labels for {len(ov.occurrences)} occurrences")
    return out


@dataclass(frozen=True)
class SenseView:
    """One word's occurrences through one model, layer spec and correction.

    Attributes:
        occurrences: the occurrences, row ``i`` of ``coords`` = ``occurrences[i]``.
        labels: their gold sense labels (``""`` = none).
        layer: the layer spec shown (``"6"``, ``"last4-sum"``).
        correction: the correction applied before projecting and measuring.
        coords: ``(n_occurrences, n_components)`` float32 projected coordinates (``(n, 0)``
            without a projection).
        separation: sense separation at ``layer`` after ``correction``.
        raw: sense separation at ``layer`` without correction (``separation`` when none).
        curve: separation at every hidden state, raw and corrected.
        settings: what made the view (written into every export).
    """

    occurrences: tuple[Occurrence, ...]
    labels: tuple[str, ...]
    layer: str
    correction: str
    coords: np.ndarray
    separation: Separation
    raw: Separation
    curve: LayerSeparation
    settings: ViewSettings


def corrected_vectors(
    ov: OccurrenceVectors, layer: str, post: Correction | None = None
) -> np.ndarray:
    """``(n_occurrences, dim)`` vectors at a layer spec, each layer corrected by ``post``
    (fitted per layer on the same hidden states) before layers are combined."""
    x = np.asarray(ov.vectors, dtype=np.float32)
    if post is not None:
        x = post.transform(x)
    return combine_layers(x, ov.emb.layers, layer, ov.emb.n_hidden)


def sense_view(
    ov: OccurrenceVectors,
    layer: str,
    post: Correction | None = None,
    projection: ProjectionConfig | None = None,
    reference: str = "",
    data: Mapping[str, Any] | None = None,
    labels: Sequence[str] | None = None,
    min_count: int = 2,
) -> SenseView:
    """Project and measure one word's occurrences at one layer spec after one correction.

    Args:
        ov: the occurrences and their layerwise vectors
            (:func:`workbench.corpora.occurrences.encode_occurrences`).
        layer: a layer spec (``"6"``, ``"last4-sum"``, ``"3,4,5"``).
        post: a correction fitted per layer on ``ov``'s hidden states
            (:func:`workbench.geometry.reference.fit_correction`), None for raw vectors.
        projection: the projection settings; None = no projection.
        reference: name of the corpus ``post`` was fitted on, for the settings.
        data: what was shown (lemma, source...), added to the settings.
        labels: the gold senses (default: the occurrences' labels).
        min_count: see :func:`workbench.geometry.separation.sense_separation`.
    """
    gold = _labels(ov, labels)
    correction = post.name if post is not None else "none"
    picked = corrected_vectors(ov, layer, post)
    coords = (
        Projector(projection).fit_transform(picked)
        if projection is not None
        else np.zeros((len(gold), 0), np.float32)
    )
    separation = sense_separation(picked, gold, min_count, layer, correction)
    raw = separation
    if post is not None:
        raw = sense_separation(corrected_vectors(ov, layer), gold, min_count, layer)
    curve = separation_by_layer(ov.vectors, gold, ov.emb.layers, post, None, ov.emb.n_hidden,
                                min_count)  # fmt: skip
    facts = {
        **(data or {}),
        "n_occurrences": len(gold),
        "occurrences_sha256": occurrences_sha256(ov.occurrences),
        "senses": separation.counts(),
    }
    settings = ViewSettings.of(ov.emb, "senses", layer, correction, reference, projection, facts)
    return SenseView(ov.occurrences, tuple(gold), layer, correction, coords, separation, raw,
                     curve, settings)  # fmt: skip


@dataclass(frozen=True)
class WordsView:
    """Several words' occurrences in one projection (Context Atlas's picture).

    Attributes:
        occurrences: every word's occurrences, word after word.
        lemmas: the word of each occurrence.
        labels: the gold sense of each occurrence (``""`` = none).
        coords: ``(n_occurrences, n_components)`` float32, one projection for all words.
        separation: lemma -> its sense separation at ``layer`` after the correction.
        settings: what made the view.
    """

    occurrences: tuple[Occurrence, ...]
    lemmas: tuple[str, ...]
    labels: tuple[str, ...]
    coords: np.ndarray
    separation: dict[str, Separation]
    settings: ViewSettings


def grid_layout(parts: Sequence[np.ndarray], gap: float = 0.25) -> np.ndarray:
    """The coordinates of several projections side by side: each ``(n_i, k)`` part scaled into
    a unit square (its first two axes, aspect kept) and put in its own cell of a grid of
    ``ceil(sqrt(n_parts))`` columns, left to right then top to bottom; returns the parts
    concatenated, ``(sum n_i, k)`` float32."""
    n_cols = max(1, math.ceil(math.sqrt(len(parts))))
    out = []
    for i, part in enumerate(parts):
        xy = np.asarray(part, dtype=np.float32).copy()
        low = xy[:, :2].min(axis=0) if len(xy) else np.zeros(2, np.float32)
        span = float(np.ptp(xy[:, :2], axis=0).max()) if len(xy) else 1.0
        xy[:, :2] = (xy[:, :2] - low) / (span or 1.0)
        xy[:, 0] += (i % n_cols) * (1 + gap)
        xy[:, 1] -= (i // n_cols) * (1 + gap)
        out.append(xy)
    return np.concatenate(out) if out else np.zeros((0, 2), np.float32)


def words_view(
    parts: Sequence[tuple[str, OccurrenceVectors]],
    layer: str,
    post: Correction | None = None,
    projection: ProjectionConfig | None = None,
    reference: str = "",
    data: Mapping[str, Any] | None = None,
    min_count: int = 2,
    apart: bool = False,
) -> WordsView:
    """Several words' occurrences, encoded by one model, in one projection at one layer spec;
    with ``apart``, each word in a projection of its own, the words side by side in a grid
    (:func:`grid_layout`), so that the senses within each word can be seen.

    Args:
        parts: ``(lemma, occurrence vectors)`` per word, all from the same model and layers.
        layer, post, projection, reference, data, min_count: as in :func:`sense_view`.
        apart: one projection per word instead of one for all.

    Raises:
        InputError: no word given; MismatchError: words encoded by different models.
    """
    if not parts:
        raise InputError("no word given: choose at least one word")
    first = parts[0][1].emb
    for lemma, ov in parts:
        if ov.emb.fingerprint != first.fingerprint or tuple(ov.emb.layers) != tuple(first.layers):
            raise MismatchError(f"the occurrences of {lemma!r} come from another model or layers")
    picked = [corrected_vectors(ov, layer, post) for _, ov in parts]
    x = np.concatenate(picked)
    if projection is None:
        coords = np.zeros((len(x), 0), np.float32)
    elif apart:
        coords = grid_layout([Projector(projection).fit_transform(v) for v in picked])
    else:
        coords = Projector(projection).fit_transform(x)
    correction = post.name if post is not None else "none"
    separation = {
        lemma: sense_separation(v, ov.labels, min_count, layer, correction)
        for (lemma, ov), v in zip(parts, picked)
    }
    occurrences = tuple(o for _, ov in parts for o in ov.occurrences)
    lemmas = tuple(lemma for lemma, ov in parts for _ in ov.occurrences)
    facts = {
        **(data or {}),
        "lemmas": {lemma: len(ov.occurrences) for lemma, ov in parts},
        "occurrences_sha256": occurrences_sha256(occurrences),
    }
    settings = ViewSettings.of(first, "words", layer, correction, reference, projection, facts)
    labels = tuple(o.label for o in occurrences)
    return WordsView(occurrences, lemmas, labels, coords, separation, settings)
