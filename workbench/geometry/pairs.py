"""Checks and pair sampling shared by the geometry measures (:mod:`workbench.geometry.measures`)
and the rogue-dimension analysis (:mod:`workbench.geometry.rogue`).

A pair sample ``(i, j)`` is two index arrays; :func:`sample_pairs` draws it seeded, from
different contexts when context ids are given, so every measure of a layer (and every layer)
can share one sample.

Example:
    >>> i, j = sample_pairs(10, 5, contexts=[0] * 5 + [1] * 5, random_state=0)
    >>> len(i), bool((i // 5 != j // 5).all())
    (5, True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.errors import InputError

Pairs = tuple[np.ndarray, np.ndarray]


def check_vectors(x: np.ndarray, name: str = "vectors") -> np.ndarray:
    """Validate one layer's vectors and return them as float64 ``(n, dim)``.

    Raises:
        InputError: not 2-D, fewer than two rows, NaN/inf values or an all-zero row
            (cosine undefined); the message names the first offending row.
    """
    x = np.asarray(x)
    if x.ndim != 2:
        raise InputError(f"{name} must have shape (n, dim), got shape {x.shape}")
    if x.shape[0] < 2:
        raise InputError(f"{name}: need at least two vectors, got {x.shape[0]}")
    x = x.astype(np.float64, copy=False)
    finite = np.isfinite(x).all(axis=1)
    if not finite.all():
        raise InputError(f"{name}: row {int(np.argmin(finite))} contains NaN or inf")
    zero = ~np.any(x != 0, axis=1)
    if zero.any():
        raise InputError(f"{name}: row {int(np.argmax(zero))} is all zeros (cosine undefined)")
    return x


def check_meta(values: Sequence | np.ndarray, n: int, name: str) -> np.ndarray:
    """``values`` as an array with one entry per vector (shape ``(n,)``).

    Raises:
        InputError: naming ``name``, when the shape is not ``(n,)``.
    """
    arr = np.asarray(values)
    if arr.shape != (n,):
        raise InputError(f"{name} must have one entry per vector ({n}), got shape {arr.shape}")
    return arr


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit L2 norm (float64)."""
    x = np.asarray(x, dtype=np.float64)
    return x / np.sqrt(np.einsum("...d,...d->...", x, x))[..., None]


def type_ids(types: Sequence | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer ids ``(n,)`` of word types and the sorted vocabulary they index."""
    vocab, ids = np.unique(np.asarray(types), return_inverse=True)
    return ids.reshape(-1), vocab


def sample_pairs(
    n: int,
    n_pairs: int = 20_000,
    *,
    contexts: Sequence | np.ndarray | None = None,
    random_state: int = 0,
) -> Pairs:
    """A seeded sample (with replacement) of index pairs ``i != j``, from different contexts.

    Args:
        n: number of vectors.
        n_pairs: pairs to draw.
        contexts: optional ``(n,)`` context ids; pairs within one context are rejected.
        random_state: seed.

    Returns:
        ``(i, j)``, two int64 arrays of shape ``(n_pairs,)``.

    Raises:
        InputError: fewer than two vectors, ``n_pairs < 1``, or every vector in one context.
    """
    if n < 2:
        raise InputError(f"need at least two vectors to sample pairs, got {n}")
    if n_pairs < 1:
        raise InputError(f"n_pairs must be at least 1, got {n_pairs}")
    ctx = None if contexts is None else check_meta(contexts, n, "contexts")
    if ctx is not None and np.unique(ctx).size < 2:
        raise InputError("all vectors come from one context: no pair from different contexts")
    rng = np.random.default_rng(random_state)
    got_i: list[np.ndarray] = []
    got_j: list[np.ndarray] = []
    have = 0
    while have < n_pairs:
        i = rng.integers(0, n, size=2 * (n_pairs - have) + 16)
        j = rng.integers(0, n, size=i.size)
        ok = i != j if ctx is None else ctx[i] != ctx[j]
        got_i.append(i[ok])
        got_j.append(j[ok])
        have += int(ok.sum())
    return np.concatenate(got_i)[:n_pairs], np.concatenate(got_j)[:n_pairs]


def pair_dots(x: np.ndarray, i: np.ndarray, j: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """``x[i] . x[j]`` per pair, in chunks (the gathered rows stay in cache)."""
    out = np.empty(len(i))
    for s in range(0, len(i), chunk):
        out[s : s + chunk] = np.einsum("pd,pd->p", x[i[s : s + chunk]], x[j[s : s + chunk]])
    return out
