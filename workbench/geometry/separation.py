"""How well a word's senses separate in its vectors, layer by layer.

Two measures over the occurrences of one word, each labelled with its gold sense:

* the **silhouette** of the gold senses under cosine distance (Rousseeuw 1987): per occurrence
  ``(b - a) / max(a, b)``, ``a`` its mean distance to the other occurrences of its sense, ``b`` its
  mean distance to the occurrences of the nearest other sense; the mean over occurrences, in
  [-1, 1] (1: tight, well apart senses; 0: senses overlap; < 0: occurrences sit nearer another
  sense);
* **leave-one-out 1-NN sense accuracy**: the share of occurrences whose most cosine-similar other
  occurrence has the same sense. Its chance level is :attr:`Separation.chance`, the probability that
  a random other occurrence shares the sense, ``sum_k n_k (n_k - 1) / (n (n - 1))``.

Which occurrences count: unlabelled ones (``""``) and the occurrences of a sense with fewer than
``min_count`` (default 2) occurrences are left out of both measures, neither scored nor used as
neighbours: a sense seen once has no other occurrence to be near (its silhouette is 0 by
convention and its 1-NN is always wrong), so it would measure the sample size, not the geometry.
They are still listed in :attr:`Separation.senses` with ``measured=False``. With fewer than two
measured senses both measures are undefined (NaN) and :attr:`Separation.note` says why.

Corrections (z-scores, ...) come from :mod:`workbench.geometry.corrections`, fitted on a
reference corpus; each layer is measured raw and corrected::

    curve = separation_by_layer(ov.vectors, ov.labels, ov.emb.layers, post=zscore)
    curve.series("silhouette")      # {"none": [7 values], "zscore": [7 values]}
    curve.peak("nn_accuracy", "zscore")   # the layer where 1-NN sense accuracy peaks
    sense_separation(ov.emb.select("last4-sum"), ov.labels)   # one layer (combination)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from workbench.encoding.pooling import combine_layers
from workbench.errors import InputError
from workbench.geometry.correction import Correction
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.reports.tables import Table

Measure = Literal["silhouette", "nn_accuracy"]
MEASURES: tuple[str, ...] = ("silhouette", "nn_accuracy")
#: How tables and figures name each measure.
MEASURE_LABELS: dict[str, str] = {
    "silhouette": "silhouette of gold senses (cosine)",
    "nn_accuracy": "leave-one-out 1-NN sense accuracy",
}


@dataclass(frozen=True)
class SenseSeparation:
    """One sense of a :class:`Separation`.

    Attributes:
        label: the sense label (sense key).
        n: its occurrences.
        measured: False when it has fewer than ``min_count`` occurrences (left out).
        silhouette: mean silhouette of its occurrences (NaN when not measured).
        nn_accuracy: share of its occurrences whose nearest other occurrence shares the sense.
    """

    label: str
    n: int
    measured: bool
    silhouette: float = math.nan
    nn_accuracy: float = math.nan


@dataclass(frozen=True)
class Separation:
    """Sense separation of one set of vectors (one layer or layer combination, one correction).

    Attributes:
        layer: the layer spec measured (``"6"``, ``"last4-sum"``; ``""`` when not given).
        correction: the correction applied first (``"none"``, ``"zscore"``, ...).
        silhouette: mean cosine silhouette of the gold senses over the measured occurrences.
        nn_accuracy: leave-one-out 1-NN sense accuracy over the measured occurrences.
        chance: 1-NN accuracy of a random neighbour, ``sum_k n_k (n_k - 1) / (n (n - 1))``.
        n_measured: occurrences measured.
        n_unlabelled: occurrences without a label (left out).
        senses: every sense, most frequent first (ties: label order).
        note: why the measures are undefined (NaN), else ``""``.
    """

    layer: str
    correction: str
    silhouette: float
    nn_accuracy: float
    chance: float
    n_measured: int
    n_unlabelled: int
    senses: tuple[SenseSeparation, ...]
    note: str = ""

    @property
    def n_senses(self) -> int:
        """Senses measured."""
        return sum(s.measured for s in self.senses)

    def value(self, measure: Measure | str) -> float:
        """``silhouette`` or ``nn_accuracy``."""
        if measure not in MEASURES:
            raise InputError(f"unknown separation measure {measure!r}; use one of {MEASURES}")
        return float(getattr(self, measure))

    def counts(self) -> dict[str, int]:
        """Occurrences per sense, most frequent first."""
        return {s.label: s.n for s in self.senses}


#: The least ``min_count`` a separation takes: a sense of one occurrence has no neighbour of
#: its own sense, and no silhouette (the command line's ``--min-count`` is bounded by it).
LEAST_MIN_COUNT = 2


def _check(vectors: np.ndarray, labels: Sequence[str], ndim: int) -> np.ndarray:
    x = np.asarray(vectors, dtype=np.float32)
    shape = "(n_occurrences, dim)" if ndim == 2 else "(n_occurrences, n_layers, dim)"
    if x.ndim != ndim:
        raise InputError(f"vectors must have shape {shape}, got {x.shape}")
    if x.shape[0] != len(labels):
        raise InputError(f"{x.shape[0]} vectors but {len(labels)} sense labels")
    if not np.isfinite(x).all():
        raise InputError("vectors contain NaN or infinite values")
    return x


def sense_separation(
    vectors: np.ndarray,
    labels: Sequence[str],
    min_count: int = 2,
    layer: str = "",
    correction: str = "none",
) -> Separation:
    """Silhouette and leave-one-out 1-NN sense accuracy of one set of vectors.

    Args:
        vectors: ``(n_occurrences, dim)`` vectors of one word's occurrences (already corrected,
            if at all; ``layer`` and ``correction`` only name what was measured).
        labels: ``n_occurrences`` gold sense labels; ``""`` = unlabelled (left out).
        min_count: senses with fewer occurrences are left out (at least 2).
        layer: the layer spec the vectors come from, for the record.
        correction: the correction applied to them, for the record.

    Returns:
        A :class:`Separation`; silhouette and 1-NN are NaN (with a ``note``) when fewer than two
        senses have ``min_count`` occurrences.

    Example:
        >>> x = np.array([[1, 0], [1, 0.1], [0, 1], [0.1, 1]])
        >>> s = sense_separation(x, ["a", "a", "b", "b"])
        >>> round(s.nn_accuracy, 2), s.silhouette > 0.9
        (1.0, True)
    """
    if min_count < LEAST_MIN_COUNT:
        raise InputError(f"min_count must be at least {LEAST_MIN_COUNT}, got {min_count}")
    x = _check(vectors, labels, 2)
    labels_arr = np.asarray([str(lab) for lab in labels], dtype=object)
    names, counts = np.unique(labels_arr[labels_arr != ""], return_counts=True)
    order = sorted(range(len(names)), key=lambda i: (-counts[i], names[i]))
    count_of = {str(names[i]): int(counts[i]) for i in order}
    kept = [lab for lab, n in count_of.items() if n >= min_count]
    n_unlabelled = int((labels_arr == "").sum())
    if len(kept) < 2:
        note = (
            f"needs at least 2 senses with {min_count} or more occurrences each; found "
            f"{len(kept)} ({', '.join(f'{lab}: {n}' for lab, n in count_of.items()) or 'none'})"
        )
        absent = tuple(SenseSeparation(lab, n, lab in kept) for lab, n in count_of.items())
        return Separation(layer, correction, math.nan, math.nan, math.nan, 0, n_unlabelled,
                          absent, note)  # fmt: skip
    rows = np.flatnonzero(np.isin(labels_arr, kept))
    lab = labels_arr[rows]
    xs = x[rows].astype(np.float64)
    xs /= np.maximum(np.linalg.norm(xs, axis=1, keepdims=True), 1e-12)
    sims = xs @ xs.T
    np.fill_diagonal(sims, -np.inf)
    hit = lab[sims.argmax(axis=1)] == lab
    dist = np.clip(1.0 - sims, 0.0, 2.0)
    np.fill_diagonal(dist, 0.0)
    sil = _silhouette_samples(dist, lab)
    n = len(rows)
    sizes = np.array([count_of[k] for k in kept], dtype=np.float64)
    chance = float((sizes * (sizes - 1)).sum() / (n * (n - 1)))
    senses: list[SenseSeparation] = []
    for name, count in count_of.items():
        if name in kept:
            m = lab == name
            senses.append(SenseSeparation(name, count, True, float(sil[m].mean()),
                                          float(hit[m].mean())))  # fmt: skip
        else:
            senses.append(SenseSeparation(name, count, False))
    return Separation(layer, correction, float(sil.mean()), float(hit.mean()), chance, n,
                      n_unlabelled, tuple(senses))  # fmt: skip


def _silhouette_samples(dist: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-sample silhouette from a ``(n, n)`` distance matrix (every cluster has >= 2 points,
    at least 2 clusters): scikit-learn's definition, computed from one matrix product."""
    names, inverse = np.unique(labels, return_inverse=True)
    onehot = np.zeros((len(labels), len(names)))
    onehot[np.arange(len(labels)), inverse] = 1.0
    sums = dist @ onehot  # (n, n_clusters): summed distance to each cluster
    sizes = onehot.sum(axis=0)
    own = sizes[inverse]
    a = sums[np.arange(len(labels)), inverse] / (own - 1)
    mean_to = sums / sizes
    mean_to[np.arange(len(labels)), inverse] = np.inf
    b = mean_to.min(axis=1)
    denom = np.maximum(a, b)
    return np.where(denom > 0, (b - a) / np.where(denom > 0, denom, 1.0), 0.0)


@dataclass(frozen=True)
class LayerSeparation:
    """:class:`Separation` at every layer, raw and after a correction.

    Attributes:
        layers: the layer specs measured, in order (the x axis of a curve).
        corrections: ``("none",)`` or ``("none", <the correction>)``.
        rows: ``len(corrections) * len(layers)`` results, correction-major.
    """

    layers: tuple[str, ...]
    corrections: tuple[str, ...]
    rows: tuple[Separation, ...]

    def get(self, layer: str, correction: str = "none") -> Separation:
        """The result at one layer spec and correction."""
        if layer not in self.layers or correction not in self.corrections:
            raise InputError(
                f"no separation at layer {layer!r} with correction {correction!r}; measured "
                f"layers {list(self.layers)}, corrections {list(self.corrections)}"
            )
        return self.rows[self.corrections.index(correction) * len(self.layers)
                         + self.layers.index(layer)]  # fmt: skip

    def series(self, measure: Measure | str) -> dict[str, list[float]]:
        """Correction -> the measure at every layer (NaN where undefined)."""
        return {c: [self.get(layer, c).value(measure) for layer in self.layers]
                for c in self.corrections}  # fmt: skip

    def peak(self, measure: Measure | str, correction: str = "none") -> str:
        """The layer where ``measure`` is highest (the first of ties; ``""`` if all NaN)."""
        values = np.array(self.series(measure)[correction], dtype=np.float64)
        if np.isnan(values).all():
            return ""
        return self.layers[int(np.nanargmax(values))]

    def counts(self) -> dict[str, int]:
        """Occurrences per sense (the same at every layer), most frequent first."""
        return self.rows[0].counts()

    def records(self) -> list[dict[str, object]]:
        """One plain dict per layer and correction (for CSV and JSON export)."""
        return [
            {
                "layer": r.layer, "correction": r.correction, "silhouette": r.silhouette,
                "nn_accuracy": r.nn_accuracy, "chance": r.chance, "n_measured": r.n_measured,
                "n_senses": r.n_senses, "note": r.note,
            }
            for r in self.rows
        ]  # fmt: skip

    def table(self, caption: str = "") -> Table:
        """Layers as rows; silhouette and 1-NN accuracy per correction as columns."""
        columns = ["layer"]
        for c in self.corrections:
            columns += [f"silhouette {CORRECTION_LABELS.get(c, c)}",
                        f"1-NN {CORRECTION_LABELS.get(c, c)}"]  # fmt: skip
        columns.append("1-NN chance")
        rows = []
        for layer in self.layers:
            row: list[object] = [layer]
            for c in self.corrections:
                r = self.get(layer, c)
                row += [r.silhouette, r.nn_accuracy]
            row.append(self.get(layer).chance)
            rows.append(tuple(row))
        notes = tuple(dict.fromkeys(r.note for r in self.rows if r.note))
        return Table(tuple(columns), tuple(rows), caption=caption, notes=notes)


def separation_by_layer(
    vectors: np.ndarray,
    labels: Sequence[str],
    layers: Sequence[int],
    post: Correction | None = None,
    specs: Sequence[str] | None = None,
    n_hidden: int | None = None,
    min_count: int = 2,
) -> LayerSeparation:
    """:func:`sense_separation` at every layer, raw and (if ``post`` is given) corrected.

    Args:
        vectors: ``(n_occurrences, n_layers, dim)``, slot ``i`` = hidden state ``layers[i]``.
        labels: ``n_occurrences`` gold sense labels (``""`` = unlabelled).
        layers: hidden-state index of each slot.
        post: a correction fitted per layer on the same ``layers``; None = raw only.
        specs: the layer specs to measure (default: every hidden state of ``layers``, as
            ``"0"``, ``"1"``...); combinations such as ``"last4-sum"`` may be added.
        n_hidden: the model's hidden-state count (default ``max(layers) + 1``).
        min_count: see :func:`sense_separation`.

    Returns:
        A :class:`LayerSeparation`.
    """
    x = _check(vectors, labels, 3)
    if x.shape[1] != len(layers):
        raise InputError(f"{x.shape[1]} layer slots but {len(layers)} layer indices")
    specs = tuple(str(s) for s in (specs if specs is not None else layers))
    n_hidden = n_hidden if n_hidden is not None else max(layers) + 1
    variants: list[tuple[str, np.ndarray]] = [("none", x)]
    if post is not None and post.name != "none":
        variants.append((post.name, post.transform(x)))
    rows = [
        sense_separation(combine_layers(v, layers, spec, n_hidden), labels, min_count, spec, name)
        for name, v in variants
        for spec in specs
    ]
    return LayerSeparation(specs, tuple(name for name, _ in variants), tuple(rows))
