"""Rogue dimensions (Timkey & van Schijndel 2021, *All Bark and No Bite*).

A handful of dimensions can dominate the cosine similarity of contextual vectors.
:func:`rogue_and_cosines` gives each dimension's contribution to the expected cosine over a pair
sample, the ``top_k`` dimensions with the largest contributions, their share of the total, and
the informativity r^2 between the full cosine and the cosine with those dimensions removed;
:func:`workbench.geometry.measures.measure_all` calls it for every layer.

Example::

    x = check_vectors(emb.select("5"))
    pairs = sample_pairs(len(x), 20_000, contexts=emb.sentence_index, random_state=0)
    r, cosines = rogue_and_cosines(x, 3, pairs)
    r.top, r.top_share, r.informativity              # e.g. [223 ...], 0.64, 0.41
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.geometry.pairs import Pairs, pair_dots


@dataclass(frozen=True)
class RogueDimensions:
    """Per-dimension contributions to the expected cosine (Timkey & van Schijndel 2021).

    Attributes:
        contributions: ``(dim,)`` mean over pairs of ``u_k v_k / (|u| |v|)``; they sum to the
            expected cosine.
        top: ``(top_k,)`` dimension indices, largest ``|contribution|`` first.
        share: ``(top_k,)`` ``|contribution| / sum_k |contribution_k|`` of each top dimension
            (bounded in [0, 1] even when the expected cosine is near 0).
        informativity: r^2 (squared Pearson correlation over the pairs) between the full cosine
            and the cosine with the ``top`` dimensions removed; NaN if either is constant.
    """

    contributions: np.ndarray
    top: np.ndarray
    share: np.ndarray
    informativity: float

    @property
    def expected_cosine(self) -> float:
        """Sum of the contributions: the expected cosine over the pairs."""
        return float(self.contributions.sum())

    @property
    def top_share(self) -> float:
        """Combined share of the top dimensions."""
        return float(self.share.sum())


def _r_squared(a: np.ndarray, b: np.ndarray) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2 or a[ok].std() == 0 or b[ok].std() == 0:
        return math.nan
    return float(np.corrcoef(a[ok], b[ok])[0, 1] ** 2)


def rogue_and_cosines(
    x: np.ndarray, top_k: int, pairs: Pairs
) -> tuple[RogueDimensions, np.ndarray]:
    """The rogue dimensions of ``x`` and the full cosine of every pair.

    Args:
        x: ``(n, dim)`` vectors already checked by
            :func:`workbench.geometry.pairs.check_vectors` (finite, no zero rows).
        top_k: dimensions to report and remove, ``1 <= top_k < dim``.
        pairs: the pair sample ``(i, j)``.

    Returns:
        ``(RogueDimensions, cosines)``; ``cosines`` ``(n_pairs,)`` float64 is what
        :func:`workbench.geometry.measures.measure_all` reuses as the anisotropy sample.
    """
    i, j = pairs
    sq = np.einsum("nd,nd->n", x, x)
    xu = x / np.sqrt(sq)[:, None]
    contrib = np.zeros(x.shape[1])
    for s in range(0, len(i), 4096):
        contrib += np.einsum("pd,pd->d", xu[i[s : s + 4096]], xu[j[s : s + 4096]])
    contrib /= len(i)
    mags = np.abs(contrib)
    top = np.argsort(-mags, kind="stable")[:top_k]
    total = mags.sum()
    share = mags[top] / total if total > 0 else np.full(top_k, math.nan)
    # cosine without the top dimensions, from the full dot product and squared norms
    full = pair_dots(xu, i, j)
    xt = x[:, top]
    dot = full * np.sqrt(sq[i] * sq[j]) - np.einsum("pk,pk->p", xt[i], xt[j])
    rest = sq - np.einsum("nk,nk->n", xt, xt)
    with np.errstate(invalid="ignore", divide="ignore"):
        reduced = dot / np.sqrt(rest[i] * rest[j])
    return RogueDimensions(contrib, top, share, _r_squared(full, reduced)), full
