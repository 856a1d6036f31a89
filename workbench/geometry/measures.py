"""Anisotropy and similarity measures of contextual word vectors, one layer at a time.

:func:`measure_all` takes the vectors of ONE layer, ``x`` of shape ``(n, dim)`` (any float dtype;
computed in float64), plus per-row metadata:

* ``types`` ``(n,)``: the word type of each row (strings or integer ids);
* ``contexts`` ``(n,)``: the context (sentence index) of each row;
* ``pairs``: a seeded sample of row pairs from different contexts
  (:func:`workbench.geometry.pairs.sample_pairs`), shared across layers and corrections.

It returns a :class:`LayerMeasures`, each a :class:`Measure` (Ethayarajh 2019, *How Contextual
are Contextualized Word Representations?*):

* ``anisotropy``: expected cosine between the vectors of two random words from different
  contexts, over the pairs, with its standard error;
* ``self_similarity``: mean cosine between the occurrences of one word type, averaged over
  word types occurring at least ``min_count`` times;
* ``intra_similarity``: mean cosine of each word with its sentence's mean vector, averaged over
  sentences of two words or more;
* ``mev``: share of the variance of a word type's (uncentered) occurrence matrix explained by its
  first singular vector, averaged over word types; ``mev_baseline`` is the same for random rows
  (sets of the same sizes);
* ``rogue``: the rogue dimensions (Timkey & van Schijndel 2021) of
  :mod:`workbench.geometry.rogue`, from the same pairs.

Each "adjusted" value is the raw value minus the layer's baseline (anisotropy for the two
similarities, ``mev_baseline`` for MEV), as in that paper. The checks and the pair sampling live
in :mod:`workbench.geometry.pairs`.

A measure that cannot be computed (no word type seen twice, no sentence of two words) is NaN with
a ``note`` saying why; bad input (fewer than two vectors, NaN/inf, zero vectors) raises
:class:`~workbench.errors.InputError`.

Example::

    x = emb.select("6")                                    # (n_words, dim)
    pairs = sample_pairs(len(x), 20_000, contexts=emb.sentence_index, random_state=0)
    m = measure_all(x, emb.words, emb.sentence_index, pairs, min_count=5)
    m.anisotropy.value, m.self_similarity_adjusted.value   # e.g. 0.38, 0.21
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.geometry.pairs import (
    Pairs,
    check_meta,
    check_vectors,
    type_ids,
    unit_rows,
)
from workbench.geometry.rogue import (
    RogueDimensions,
    rogue_and_cosines,
)


@dataclass(frozen=True)
class Measure:
    """A mean over ``n`` units (pairs, word types or sentences) with its standard error.

    Attributes:
        value: the mean; NaN when undefined.
        sem: standard error of the mean (sample std / sqrt(n)); NaN when n < 2.
        n: number of units averaged.
        note: why the value is undefined, else empty.
    """

    value: float
    sem: float
    n: int
    note: str = ""

    def minus(self, baseline: Measure) -> Measure:
        """This measure minus a baseline (standard errors added in quadrature)."""
        note = self.note or baseline.note
        return Measure(
            self.value - baseline.value, math.hypot(self.sem, baseline.sem), self.n, note
        )


def _measure(values: np.ndarray, empty_note: str) -> Measure:
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    if n == 0:
        return Measure(math.nan, math.nan, 0, empty_note)
    sem = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return Measure(float(values.mean()), sem, n)


def _group_sums(x: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(counts (g,), sums (g, dim))`` of the rows of each group id ``0..g-1``."""
    from scipy.sparse import csr_matrix

    counts = np.bincount(ids)
    member = csr_matrix((np.ones(len(ids)), (ids, np.arange(len(ids)))), (counts.size, len(ids)))
    return counts, np.asarray(member @ x)


def _self_similarity(x: np.ndarray, ids: np.ndarray, min_count: int) -> Measure:
    min_count = max(2, int(min_count))
    counts, sums = _group_sums(unit_rows(x), ids)
    keep = counts >= min_count
    m = counts[keep].astype(np.float64)
    values = (np.einsum("td,td->t", sums[keep], sums[keep]) - m) / (m * m - m)
    return _measure(values, f"undefined: no word type occurs {min_count} times or more")


def _intra_similarity(x: np.ndarray, ids: np.ndarray) -> Measure:
    counts, sums = _group_sums(x, ids)
    norms = np.sqrt(np.einsum("sd,sd->s", sums, sums))
    usable = (counts >= 2) & (norms > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / norms[:, None]
    cos = np.einsum("nd,nd->n", unit_rows(x), means[ids])
    cos[~usable[ids]] = 0.0
    per_sentence = np.bincount(ids, weights=cos, minlength=counts.size)[usable]
    return _measure(per_sentence / counts[usable], "undefined: no sentence has two words or more")


def _first_pc_share(a: np.ndarray) -> float:
    gram = a @ a.T if a.shape[0] <= a.shape[1] else a.T @ a
    eig = np.linalg.eigvalsh(gram)
    total = float(eig.sum())
    return float(eig[-1] / total) if total > 0 else math.nan


def _mev_of_groups(x: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """MEV of each group of rows; groups of one size up to ``dim`` in one batched eigvalsh."""
    out = np.full(len(groups), math.nan)
    by_size: dict[int, list[int]] = {}
    for k, grp in enumerate(groups):
        by_size.setdefault(grp.size, []).append(k)
    for size, members in by_size.items():
        if size > x.shape[1]:
            out[members] = [_first_pc_share(x[groups[k]]) for k in members]
            continue
        a = x[np.stack([groups[k] for k in members])]  # (t, size, dim)
        eig = np.linalg.eigvalsh(a @ a.transpose(0, 2, 1))  # (t, size), ascending
        total = eig.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[members] = np.where(total > 0, eig[:, -1] / total, math.nan)
    return out


def _type_groups(ids: np.ndarray, min_count: int) -> list[np.ndarray]:
    order = np.argsort(ids, kind="stable")
    bounds = np.flatnonzero(np.diff(ids[order])) + 1
    return [g for g in np.split(order, bounds) if g.size >= min_count]


def _mev(x: np.ndarray, ids: np.ndarray, min_count: int) -> Measure:
    min_count = max(2, int(min_count))
    values = _mev_of_groups(x, _type_groups(ids, min_count))
    return _measure(values, f"undefined: no word type occurs {min_count} times or more")


def _mev_baseline(x: np.ndarray, ids: np.ndarray, min_count: int, random_state: int) -> Measure:
    min_count = max(2, int(min_count))
    rng = np.random.default_rng(random_state)
    sizes = [g.size for g in _type_groups(ids, min_count)]
    groups = [rng.choice(len(x), size=s, replace=False) for s in sizes]
    return _measure(_mev_of_groups(x, groups), f"undefined: no word type occurs {min_count}+ times")


# --------------------------------------------------------------------------- all at once


@dataclass(frozen=True)
class LayerMeasures:
    """Every measure of one layer, raw and adjusted (see :func:`measure_all`)."""

    anisotropy: Measure
    self_similarity: Measure
    self_similarity_adjusted: Measure
    intra_similarity: Measure
    intra_similarity_adjusted: Measure
    mev: Measure
    mev_baseline: Measure
    mev_adjusted: Measure
    rogue: RogueDimensions


def measure_all(
    x: np.ndarray,
    types: Sequence | np.ndarray,
    contexts: Sequence | np.ndarray,
    pairs: Pairs,
    *,
    min_count: int = 5,
    top_k: int = 3,
    random_state: int = 0,
    name: str = "vectors",
) -> LayerMeasures:
    """Every measure of one layer's ``(n, dim)`` vectors, validating the input once.

    Args:
        x: ``(n, dim)`` vectors of one layer (n >= 2, finite, no zero rows).
        types: ``(n,)`` word type of each row.
        contexts: ``(n,)`` sentence of each row (sentences of one word are skipped).
        pairs: the pair sample (from :func:`workbench.geometry.pairs.sample_pairs`), shared
            across layers.
        min_count: occurrences a word type needs for self-similarity and MEV (at least 2).
        top_k: rogue dimensions reported and removed (capped at ``dim - 1``).
        random_state: seed of the MEV baseline.
        name: how error messages call ``x``.
    """
    x = check_vectors(x, name=name)
    tid = type_ids(check_meta(types, len(x), "types"))[0]
    cid = type_ids(check_meta(contexts, len(x), "contexts"))[0]
    rogue, cos = rogue_and_cosines(x, max(1, min(top_k, x.shape[1] - 1)), pairs)
    aniso = _measure(cos, "")
    selfsim, intra = _self_similarity(x, tid, min_count), _intra_similarity(x, cid)
    mev, base = _mev(x, tid, min_count), _mev_baseline(x, tid, min_count, random_state)
    return LayerMeasures(
        aniso, selfsim, selfsim.minus(aniso), intra, intra.minus(aniso),
        mev, base, mev.minus(base), rogue,
    )  # fmt: skip
