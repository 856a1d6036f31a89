"""Rogue dimensions (Timkey & van Schijndel 2021, *All Bark and No Bite*).

A handful of dimensions can dominate the cosine similarity of contextual vectors.
:func:`rogue_dimensions` gives each dimension's contribution to the expected cosine over a pair
sample, the ``top_k`` dimensions with the largest contributions, their share of the total, and
the informativity r^2 between the full cosine and the cosine with those dimensions removed.

Example::

    r = rogue_dimensions(emb.select("5"), top_k=3, contexts=emb.sentence_index)
    r.top, r.top_share, r.informativity              # e.g. [223 ...], 0.64, 0.41
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.errors import InputError
from workbench.geometry.pairs import Pairs, check_vectors, pair_dots, pairs_for, unit_rows


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


def cosine_contributions(x: np.ndarray, pairs: Pairs) -> np.ndarray:
    """``(dim,)``: mean over pairs of ``u_k v_k / (|u| |v|)``, dimension by dimension."""
    x = check_vectors(x)
    i, j = pairs
    return (unit_rows(x[i]) * unit_rows(x[j])).mean(axis=0)


def _r_squared(a: np.ndarray, b: np.ndarray) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2 or a[ok].std() == 0 or b[ok].std() == 0:
        return math.nan
    return float(np.corrcoef(a[ok], b[ok])[0, 1] ** 2)


def rogue_dimensions(
    x: np.ndarray,
    top_k: int = 3,
    *,
    pairs: Pairs | None = None,
    n_pairs: int = 20_000,
    contexts: Sequence | np.ndarray | None = None,
    random_state: int = 0,
) -> RogueDimensions:
    """The dimensions that dominate cosine similarity, their share and informativity.

    Args:
        x: ``(n, dim)`` vectors.
        top_k: how many top dimensions to report and remove (1 <= top_k < dim).
        pairs, n_pairs, contexts, random_state: the pair sample, as in :func:`anisotropy`.

    Returns:
        A :class:`RogueDimensions`.
    """
    x = check_vectors(x)
    if not 1 <= top_k < x.shape[1]:
        raise InputError(f"top_k must be between 1 and dim - 1 = {x.shape[1] - 1}, got {top_k}")
    return rogue_and_cosines(x, top_k, pairs_for(x, pairs, n_pairs, contexts, random_state))[0]


def rogue_and_cosines(
    x: np.ndarray, top_k: int, pairs: Pairs
) -> tuple[RogueDimensions, np.ndarray]:
    """The rogue dimensions of checked vectors ``x`` and the full cosine of every pair
    ``(n_pairs,)`` (which :func:`workbench.geometry.measures.measure_all` reuses as anisotropy)."""
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
